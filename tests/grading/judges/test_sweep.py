"""The sweeper of dead workers' runs in one process (issue 27, point 3; the real-worker test is in
tests/test_broker_judge_lease.py): a run whose lease lapsed is handed over once, however many
sweeps saw it, and only its hand-off's execution (or a later lapse) may claim it; the holder it
was taken from writes nothing more; live, ended and recently sent queued runs are left alone; a queued run whose message may be lost is
sent again once per interval and, if both copies arrive, executed once; and a run never
has more calls sent and unwritten than its concurrency, so a kill at any moment repeats at most
that many."""
import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection, connections
from django.utils import timezone

from grading.judges import runner
from grading.judges.lease import LEASE_SECONDS, LeaseLost, lease_claim, lease_handoff, lease_lapsed, lease_update
from grading.judges.runner import RunHeld, judge_run_execute
from grading.judges.services import judge_run_create, judge_run_resume
from grading.judges.sweep import judge_run_sweep
from grading.models import JudgeRun, Judgment
from tests.celery_workers import wait_for
from tests.grading.judges.chat_server import default_script

LAPSED = timedelta(seconds=LEASE_SECONDS + 1)
RESEND = timedelta(seconds=settings.EVALSITE_QUEUED_RESEND_SECONDS)


@pytest.fixture
def run(make_judge):
    return judge_run_create(judge=make_judge())


def _dead(run, token="dead-worker"):
    """``run`` as a worker that died holding it leaves it: running, its heartbeat a lease old."""
    assert lease_claim(run=run, token=token)
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - LAPSED)
    run.refresh_from_db()
    return run


class Sent(list):
    """Collects what the sweeper queues (``send(kwargs=...)``) instead of a broker."""

    def __call__(self, **options):
        self.append(options["kwargs"])


def test_a_run_whose_lease_lapsed_is_handed_over_once_and_finished_by_its_hand_off(run, chat_server):
    _dead(run)
    sent = Sent()
    sweep = judge_run_sweep(send=sent)
    run.refresh_from_db()
    assert sweep.handed_over == (run.pk,) and sent == [{"run_id": run.pk, "handoff": run.lease_owner}]
    assert run.status == JudgeRun.RUNNING and run.lease_owner.startswith("handoff:")
    assert judge_run_sweep(send=sent).handed_over == () and len(sent) == 1  # the hand-off renewed the lease
    with pytest.raises(LeaseLost):  # the dead worker, were it only slow, writes nothing more
        lease_update(run=run, token="dead-worker", done_calls=99)
    summary = judge_run_execute(run=run, handoff=sent[0]["handoff"])
    run.refresh_from_db()
    assert (summary.status, run.status, run.lease_owner) == (JudgeRun.FINISHED, JudgeRun.FINISHED, "")
    assert Judgment.objects.filter(run=run).count() == run.total_calls == len(chat_server.requests) > 0


def test_two_sweeps_that_both_saw_the_run_lapsed_hand_it_over_once(run):
    """Whatever the database, the second of two sweeps that read the same lapsed run writes nothing:
    the hand-off is a compare-and-set on the holder's token."""
    _dead(run)
    now = timezone.now()
    seen = [list(JudgeRun.objects.filter(lease_lapsed(now), pk=run.pk).values_list("pk", "lease_owner")) for _ in range(2)]
    assert seen[0] == seen[1] == [(run.pk, "dead-worker")]
    tokens = [lease_handoff(run_id=pk, owner=owner, now=now) for [(pk, owner)] in seen]
    run.refresh_from_db()
    assert tokens[0] is not None and tokens[1] is None and run.lease_owner == tokens[0]


def test_two_concurrent_sweeps_on_postgresql_hand_the_run_over_once(transactional_db, make_judge):
    """Two sweeps at the same moment in two connections: the second sweep's write waits on the
    row lock of the first's (observed in pg_stat_activity, not timed), then finds the token
    changed and hands nothing over."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks between two connections: PostgreSQL")
    run = _dead(judge_run_create(judge=make_judge()))
    first, second = Sent(), Sent()
    outcome = {}

    def sweep_in_another_connection():
        try:
            outcome["sweep"] = judge_run_sweep(send=second)
        finally:
            connections.close_all()

    def waiting_on_a_lock() -> bool:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%%'")
            return cursor.fetchone()[0] > 0

    from django.db import transaction

    other = threading.Thread(target=sweep_in_another_connection)
    with transaction.atomic():  # the first sweep's hand-off written, not yet committed
        assert judge_run_sweep(send=first).handed_over == (run.pk,)
        other.start()
        # The other sweep read the run as lapsed (the hand-off is not committed) and now waits
        # for this transaction on the row. Watched from a third connection.
        probe = threading.Thread(target=lambda: outcome.setdefault("blocked", _probe(waiting_on_a_lock)))
        probe.start(), probe.join()
    other.join(timeout=60)
    run.refresh_from_db()
    assert outcome["blocked"] and outcome["sweep"].handed_over == ()
    assert len(first) == 1 and second == [] and run.lease_owner == first[0]["handoff"]


def _probe(predicate) -> bool:
    try:
        return bool(wait_for(predicate, 30, "the second sweep to wait on the row lock"))
    finally:
        connections.close_all()


def test_a_superseded_hand_off_does_nothing(run, chat_server):
    """A hand-off whose message was lost lapses like any lease and is handed over again; the first
    message, arriving late, finds the run held and leaves it."""
    _dead(run)
    sent = Sent()
    judge_run_sweep(send=sent)
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - LAPSED)  # its message never came
    judge_run_sweep(send=sent)
    assert [s["run_id"] for s in sent] == [run.pk, run.pk] and sent[0]["handoff"] != sent[1]["handoff"]
    with pytest.raises(RunHeld):
        judge_run_execute(run=run, handoff=sent[0]["handoff"])
    assert chat_server.requests == []
    assert judge_run_execute(run=run, handoff=sent[1]["handoff"]).status == JudgeRun.FINISHED


def test_live_queued_and_ended_runs_are_left_alone_and_a_dead_stopping_run_is_stopped(make_judge):
    judge = make_judge()
    live = judge_run_create(judge=judge)
    lease_claim(run=live, token="alive")
    queued = judge_run_create(judge=judge)  # waiting for a worker: its message is in the queue
    JudgeRun.objects.filter(pk=queued.pk).update(created_at=timezone.now() - 10 * LAPSED,
                                                 heartbeat_at=timezone.now() - RESEND + timedelta(seconds=30))
    ended = [JudgeRun.objects.create(judge=judge, status=status, heartbeat_at=timezone.now() - LAPSED)
             for status in (JudgeRun.FINISHED, JudgeRun.STOPPED, JudgeRun.FAILED, JudgeRun.PAUSED)]
    stopping = JudgeRun.objects.create(judge=judge, status=JudgeRun.STOPPING, lease_owner="dead",
                                       heartbeat_at=timezone.now() - LAPSED)
    sent = Sent()
    sweep = judge_run_sweep(send=sent)
    assert (sweep.handed_over, sweep.stopped, sweep.resent, sent) == ((), 1, (), [])
    statuses = dict(JudgeRun.objects.values_list("pk", "status"))
    assert statuses[live.pk] == JudgeRun.RUNNING and statuses[queued.pk] == JudgeRun.QUEUED
    assert [statuses[r.pk] for r in ended] == [r.status for r in ended]
    assert statuses[stopping.pk] == JudgeRun.STOPPED


def _unsent(run):
    """``run`` as a lost message leaves it: queued, sent (created) longer ago than the resend bound."""
    JudgeRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - RESEND - timedelta(seconds=1))
    return run


def test_a_queued_run_whose_message_was_lost_is_sent_again_once_per_interval_and_executed(run, chat_server):
    _unsent(run)
    sent = Sent()
    sweep = judge_run_sweep(send=sent)
    assert (sweep.resent, sweep.handed_over, sent) == ((run.pk,), (), [{"run_id": run.pk}])
    assert judge_run_sweep(send=sent).resent == () and len(sent) == 1  # marked sent: not again this interval
    # A bound later (its second message lost as well) it is sent again.
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - RESEND - timedelta(seconds=1))
    assert judge_run_sweep(send=sent).resent == (run.pk,) and len(sent) == 2
    assert judge_run_execute(run=run).status == JudgeRun.FINISHED
    run.refresh_from_db()
    assert len(chat_server.requests) == run.total_calls > 0


def test_two_deliveries_of_a_resent_run_execute_it_once(run, chat_server):
    """The original message was only waiting: the run is sent again and both copies are delivered.
    The second, while the first holds the lease, ends at once (RunHeld, the task's "held
    elsewhere"); after the first has finished, it finds the run ended and makes no call."""
    _unsent(run)
    sent = Sent()
    judge_run_sweep(send=sent)
    assert sent == [{"run_id": run.pk}]
    seen = {}

    def second_copy_meanwhile(batch_run, *args):  # the runner's hook after each batch write
        if "held" not in seen:
            with pytest.raises(RunHeld):
                judge_run_execute(run=JudgeRun.objects.get(pk=run.pk))
            seen["held"] = len(chat_server.requests)

    first = judge_run_execute(run=run, on_flush=second_copy_meanwhile)
    assert first.status == JudgeRun.FINISHED and "held" in seen
    calls = len(chat_server.requests)
    late = judge_run_execute(run=JudgeRun.objects.get(pk=run.pk))
    run.refresh_from_db()
    assert late.status == run.status == JudgeRun.FINISHED and len(chat_server.requests) == calls == run.total_calls
    assert Judgment.objects.filter(run=run).count() == run.total_calls


def test_a_resumed_run_counts_from_its_resume_and_held_or_ended_runs_are_not_resent(make_judge):
    judge = make_judge()
    old = timezone.now() - RESEND - timedelta(seconds=1)
    resumed = JudgeRun.objects.create(judge=judge, status=JudgeRun.STOPPED, heartbeat_at=old)
    resumed = judge_run_resume(run=resumed, enqueue=False)  # queued now, long after its last heartbeat
    JudgeRun.objects.filter(pk=resumed.pk).update(created_at=old)
    claimed = judge_run_create(judge=judge)
    assert lease_claim(run=claimed, token="alive")
    JudgeRun.objects.filter(pk=claimed.pk).update(created_at=old)
    ended = [JudgeRun.objects.create(judge=judge, status=status, heartbeat_at=old)
             for status in (JudgeRun.FINISHED, JudgeRun.STOPPED, JudgeRun.FAILED, JudgeRun.PAUSED)]
    JudgeRun.objects.filter(pk__in=[r.pk for r in ended]).update(created_at=old)
    sent = Sent()
    assert judge_run_sweep(send=sent).resent == () and sent == []


def test_a_run_never_has_more_calls_sent_and_unwritten_than_its_concurrency(make_judge, chat_server, monkeypatch):
    """What a kill costs, at every moment of a run: when a request reaches the server, the calls
    sent so far less the answers already committed is at most the concurrency (so a worker killed
    then leaves at most that many calls to be paid again)."""
    written = [0]
    real_flush = runner._Writer.flush

    def flush(writer):
        rows = len(writer.rows)
        real_flush(writer)
        written[0] += rows  # counted once committed; nothing is sent while this runs

    unwritten_at_send = []

    def script(body, index):
        unwritten_at_send.append(index + 1 - written[0])
        return default_script(body, index)

    monkeypatch.setattr(runner._Writer, "flush", flush)
    chat_server.script, chat_server.latency = script, 0.01
    judge = make_judge(concurrency=3, samples=4)
    run = judge_run_create(judge=judge)
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.FINISHED and len(chat_server.requests) == run.total_calls == 44
    assert max(unwritten_at_send) <= judge.concurrency, unwritten_at_send
    assert chat_server.max_in_flight == judge.concurrency  # and the calls still overlap up to the limit
