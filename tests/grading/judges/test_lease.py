"""The run lease in one process (issue 11, point 2; the real-worker tests are in
tests/test_broker_judge_lease.py): who may claim a run, writes on a lost lease change nothing,
an execution that loses its run stops without marking it failed."""
from datetime import timedelta

import pytest
from django.utils import timezone

from grading.judges.lease import LEASE_SECONDS, LeaseLost, lease_claim, lease_held, lease_update
from grading.judges.runner import RunHeld, judge_run_execute
from grading.judges.services import judge_run_create
from grading.models import JudgeRun, Judgment
from grading.tasks import judge_run_execute_task


@pytest.fixture
def run(make_judge):
    return judge_run_create(judge=make_judge())


def _set(run, **fields):
    JudgeRun.objects.filter(pk=run.pk).update(**fields)
    run.refresh_from_db()
    return run


def test_a_queued_run_is_claimed_once(run):
    assert lease_claim(run=run, token="a")
    assert not lease_claim(run=run, token="b")  # running, heartbeat just written: held
    run.refresh_from_db()
    assert (run.status, run.lease_owner) == (JudgeRun.RUNNING, "a") and lease_held(run=run)


def test_a_running_run_whose_heartbeat_lapsed_is_taken_over(run):
    lease_claim(run=run, token="a")
    _set(run, heartbeat_at=timezone.now() - timedelta(seconds=LEASE_SECONDS + 1))
    assert not lease_held(run=run)
    assert lease_claim(run=run, token="b")
    run.refresh_from_db()
    assert run.lease_owner == "b"
    with pytest.raises(LeaseLost):  # the first holder's next write changes nothing
        lease_update(run=run, token="a", done_calls=99)
    run.refresh_from_db()
    assert run.done_calls == 0


@pytest.mark.parametrize("status", [JudgeRun.FINISHED, JudgeRun.STOPPED, JudgeRun.FAILED])
def test_an_ended_run_is_not_claimed(run, status):
    _set(run, status=status, heartbeat_at=None)
    assert not lease_claim(run=run, token="a")


def test_a_stopping_run_whose_worker_died_is_stopped(run):
    _set(run, status=JudgeRun.STOPPING, heartbeat_at=timezone.now() - timedelta(seconds=LEASE_SECONDS + 1))
    assert not lease_claim(run=run, token="a")
    run.refresh_from_db()
    assert run.status == JudgeRun.STOPPED


def test_a_second_execution_of_a_held_run_does_nothing(run, chat_server):
    lease_claim(run=run, token="elsewhere")
    with pytest.raises(RunHeld):
        judge_run_execute(run=run)
    assert chat_server.requests == [] and not Judgment.objects.filter(run=run).exists()
    # The task says so and ends: it sends nothing more (the sweeper watches the holder).
    assert judge_run_execute_task.apply(kwargs={"run_id": run.pk}).get() == {"run": run.pk, "status": "held elsewhere"}


def test_an_execution_that_loses_its_run_stops_and_leaves_it_to_the_other(run, chat_server):
    flushes = []

    def taken_over(current):
        flushes.append(Judgment.objects.filter(run=current).count())
        if len(flushes) == 1:  # another worker takes the run over after the first batch
            JudgeRun.objects.filter(pk=current.pk).update(lease_owner="other")

    summary = judge_run_execute(run=run, on_flush=taken_over)
    run.refresh_from_db()
    assert (run.status, run.lease_owner, run.error) == (JudgeRun.RUNNING, "other", "")  # not failed: the other finishes it
    assert Judgment.objects.filter(run=run).count() == flushes[0]  # nothing written after the loss
    assert summary.status == JudgeRun.RUNNING


def test_a_run_is_queued_once_without_a_watcher_copy(run, chat_server):
    """What the site sends for a run: one copy that executes it (issue 27, point 3: a watcher copy
    due a lease later was prefetched by the worker that held the run and died with it; a dead
    worker's run is found by the sweeper instead, tests/grading/judges/test_sweep.py); with eager
    Celery (tests, no broker) the run simply executes once, here."""
    from grading.judges.dispatch import judge_run_dispatch

    sent = []
    judge_run_dispatch(run_id=run.pk, send=lambda **options: sent.append(options))
    assert sent == [{"kwargs": {"run_id": run.pk}}]
    judge_run_dispatch(run_id=run.pk)  # eager: executes the run now
    run.refresh_from_db()
    assert run.status == JudgeRun.FINISHED and len(chat_server.requests) == run.total_calls > 0
