"""The sweeper of judge runs whose worker died (issue 27, point 3), run every
``EVALSITE_JUDGE_SWEEP_SECONDS`` by Celery beat (``grading.judge_run_sweep``).

A run's lease lives in its row (``grading.judges.lease``), so finding a dead worker's run needs
no message of that worker's: a worker SIGKILLed with a run (and whatever else it had prefetched)
keeps its unacknowledged messages from every other worker until the broker's visibility timeout,
but its run's heartbeat stops, and a lease later the sweeper sees it. Each lapsed run is handed
over once (``lease_handoff``: a compare-and-set on the holder's token, whatever the number of
sweepers) and one execution is queued with the hand-off token; the run goes on from the calls
already written. A stopping run whose worker died is stopped.

A queued run's message is usually waiting for a free worker (a worker acks late and prefetches
one message per process, so it holds only messages it is executing), but it may have been lost
with the broker's state (a Redis restart without persistence, a purge), and nothing else would
ever send it. So a run queued for ``EVALSITE_QUEUED_RESEND_SECONDS`` since it was last sent is
sent again (``lease_resend``: once per interval, whatever the number of sweepers); if the first
message still exists, the copy that comes second finds the run held or ended and does nothing.
"""
from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from ..models import JudgeRun
from .dispatch import judge_run_dispatch
from .lease import lease_handoff, lease_lapsed, lease_resend, lease_stop_lapsed, queued_unsent


@dataclass(frozen=True)
class Sweep:
    handed_over: tuple[int, ...]  # runs queued again for a new execution
    stopped: int  # stopping runs whose worker died
    resent: tuple[int, ...] = ()  # queued runs sent again (their message may have been lost)

    def as_dict(self) -> dict:
        return {"handed_over": list(self.handed_over), "stopped": self.stopped, "resent": list(self.resent)}


def judge_run_sweep(*, send=None) -> Sweep:
    """Hand every running run whose lease lapsed to a new execution (queued now, by the task's
    name), stop every stopping one, and send again every queued run whose message may be lost.
    ``send``: how to send an execution (tests; default: the current app). Takes no lock: each
    hand-off and re-send is one conditional write (``lease_handoff``, ``lease_resend``)."""
    now = timezone.now()
    stopped = lease_stop_lapsed(now=now)
    lapsed = JudgeRun.objects.filter(Q(status=JudgeRun.RUNNING) & lease_lapsed(now)).order_by("pk")
    handed = []
    for run_id, owner in lapsed.values_list("pk", "lease_owner"):
        token = lease_handoff(run_id=run_id, owner=owner, now=now)
        if token is not None:  # None: another sweeper, or the holder itself, wrote first
            judge_run_dispatch(run_id=run_id, handoff=token, send=send)
            handed.append(run_id)
    resent = []
    for run_id in JudgeRun.objects.filter(queued_unsent(now)).order_by("pk").values_list("pk", flat=True):
        if lease_resend(run_id=run_id, now=now):  # False: another sweeper sent it, or it was claimed meanwhile
            judge_run_dispatch(run_id=run_id, send=send)
            resent.append(run_id)
    return Sweep(handed_over=tuple(handed), stopped=stopped, resent=tuple(resent))
