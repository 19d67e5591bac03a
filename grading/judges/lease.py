"""Exactly one execution per judge run (issue 11, point 2): a lease in the run's own row.

An execution claims a run with one conditional UPDATE that succeeds only on a QUEUED run, or on
a RUNNING run whose heartbeat is older than ``LEASE_SECONDS`` (its worker died or hangs), and
writes its own token into ``lease_owner``. Every later write of that execution — the heartbeat,
the counters of each batch, the final status — is conditional on the token: once another
execution has taken the run over, the first one's next write changes nothing and raises
``LeaseLost``, and it stops. A stale STOPPING run is simply stopped.

``LEASE_SECONDS`` is six heartbeats (the runner writes one at least every ``HEARTBEAT_SECONDS``
while it works, whatever its calls are doing); the Redis broker's visibility timeout
(settings) is longer, so a task copy redelivered while the run is alive finds it held and only
watches it (``grading.tasks``).
"""
import os
import socket
import uuid
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from ..models import JudgeRun

# EVALSITE_JUDGE_LEASE_SECONDS (default 60; the worker-kill tests shorten it); the heartbeat is
# renewed six times per lease.
LEASE_SECONDS = float(getattr(settings, "EVALSITE_JUDGE_LEASE_SECONDS", 60))
HEARTBEAT_SECONDS = LEASE_SECONDS / 6


class LeaseLost(Exception):
    """Another execution holds the run now: this one must stop writing."""


def lease_token() -> str:
    """Who holds the run: host, process id and a random part (the run page and the logs show it)."""
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:16]}"


def _stale_before(now):
    return now - timedelta(seconds=LEASE_SECONDS)


def lease_claim(*, run: JudgeRun, token: str) -> bool:
    """Take ``run`` for the execution ``token``; False when it is not to be executed (finished,
    stopped, failed) or another execution holds it with a live heartbeat."""
    now = timezone.now()
    stale = Q(heartbeat_at__lt=_stale_before(now)) | Q(heartbeat_at__isnull=True)
    JudgeRun.objects.filter(Q(pk=run.pk, status=JudgeRun.STOPPING) & stale).update(
        status=JudgeRun.STOPPED, lease_owner="")
    claimed = JudgeRun.objects.filter(Q(pk=run.pk) & (Q(status=JudgeRun.QUEUED) | (Q(status=JudgeRun.RUNNING) & stale))).update(
        status=JudgeRun.RUNNING, lease_owner=token, error="", finished_at=None, heartbeat_at=now)
    return bool(claimed)


def lease_held(*, run: JudgeRun) -> bool:
    """Another execution is working on ``run`` (running or stopping, heartbeat within the lease)."""
    run.refresh_from_db(fields=["status", "heartbeat_at"])
    return (run.status in (JudgeRun.RUNNING, JudgeRun.STOPPING) and run.heartbeat_at is not None
            and run.heartbeat_at >= _stale_before(timezone.now()))


def lease_update(*, run: JudgeRun, token: str, **fields) -> None:
    """Write ``fields`` (and renew the heartbeat) if ``token`` still holds the run, else raise
    ``LeaseLost`` having written nothing."""
    if not JudgeRun.objects.filter(pk=run.pk, lease_owner=token).update(heartbeat_at=timezone.now(), **fields):
        raise LeaseLost(f"run {run.pk} is held by another execution now")
