"""Exactly one worker per judge run (issue 11, point 2; issue 27, point 3), with real Celery
worker processes on the Redis broker, writing to the PostgreSQL test database, calling the tests'
loopback Chat Completions server (which counts the calls):

- the same run queued twice, two workers: every call is made once;
- the worker that holds a run, and every message of the run, is SIGKILLed mid-run with its pool
  processes (a prefork worker, as deployed): the sweeper, sent by a Celery beat process, hands
  the run to the other worker once the lease lapses (no button, nothing sent by hand, no message
  of the dead worker's needed) and it is finished with exactly responses x criteria x samples
  judgments, none twice, and at most the run's concurrency of calls paid twice;
- two judges on one endpoint, each on its own worker: together they keep its rate limit;
- a queued run whose message was purged (as a Redis restart without persistence loses it) is sent
  again by the sweeper, on beat, and executed; a run the sweeper sends again while its first
  message still waits is executed once, and a copy that comes after it finished makes no call.

The workers run with a 3-second lease and beat sweeps every half second, so the test does not
wait a minute. Only in the PostgreSQL + Redis leg of `.ci/run`; the lease and the sweeper are
also tested in-process (tests/grading/judges/test_lease.py, test_sweep.py)."""
import os
import threading
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Project
from demo.clinical import generate_clinical
from grading.bundles import bundle_import
from grading.judges.lease import HANDOFF_PREFIX
from grading.judges.services import judge_run_create
from grading.judges.sweep import judge_run_sweep
from grading.models import Judge, JudgeRun, Judgment
from tests.celery_workers import SoloWorkers, wait_for
from tests.grading.judges.chat_server import ChatServer, assert_paced, default_script

ROOT = Path(__file__).resolve().parent.parent
BROKER = os.environ.get("CELERY_BROKER_URL", "")
LEASE = 3
SWEEP = 0.5
RESEND = 60  # the workers' EVALSITE_QUEUED_RESEND_SECONDS: the tests date a run back past it

pytestmark = [pytest.mark.broker,
              pytest.mark.skipif(not BROKER.startswith("redis://"), reason="needs CELERY_BROKER_URL=redis://...")]


@pytest.fixture
def study(transactional_db, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("the worker processes must share the test database: PostgreSQL only")
    generate_clinical(tmp_path / "bundle", slug="lease", n_cases=8, n_criteria=5, models=["m-a", "m-b", "m-c"],
                      human_answer_cases=0, judges=(), seed=5)
    bundle_import(path=tmp_path / "bundle")
    return Project.objects.get(slug="lease")


@pytest.fixture
def workers(monkeypatch):
    """Start real worker processes (solo pool: the task runs in the worker's own process) on a
    queue of this test's own, so parallel test processes sharing the Redis server never take
    each other's tasks."""
    settings = connection.settings_dict
    host = f"{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}"
    backend = os.environ.get("CELERY_RESULT_BACKEND") or BROKER
    env = {**os.environ, "DATABASE_URL": f"postgres://{settings['USER'] or 'postgres'}@{host}/{settings['NAME']}",
           "CELERY_BROKER_URL": BROKER, "CELERY_RESULT_BACKEND": backend, "DJANGO_SETTINGS_MODULE": "evalsite.settings.test",
           "CELERY_TASK_ALWAYS_EAGER": "false", "EVALSITE_JUDGE_LEASE_SECONDS": str(LEASE),
           "EVALSITE_JUDGE_SWEEP_SECONDS": str(SWEEP), "EVALSITE_QUEUED_RESEND_SECONDS": str(RESEND)}
    pool = SoloWorkers(env=env, broker=BROKER, backend=backend, prefix="lease-test")
    yield pool
    pool.stop()


def _judge(project, server, **fields) -> Judge:
    return Judge.objects.create(project=project, name="llm", backend=Judge.OPENAI, model="judge-model", base_url=server.url,
                                concurrency=2, max_retries=0, **fields)


def _calls_per_prompt(server) -> Counter:
    return Counter(str(r["messages"]) for r in server.requests)


def test_two_workers_and_two_copies_of_a_run_make_each_call_once(study, workers):
    server = ChatServer(latency=0.02).start()
    try:
        judge = _judge(study, server)
        run = judge_run_create(judge=judge)
        workers.start("one"), workers.start("two")
        # the same run queued twice, as a redelivery or a double click would
        copies = [workers.send(run.pk) for _ in range(2)]
        # Each copy has ended: the one that executed the run, and the one that found it held (and
        # went back to watching) or finished. Nothing more is sent after that.
        outcomes = [copy.get(timeout=120, disable_sync_subtasks=False) for copy in copies]
        run = JudgeRun.objects.get(pk=run.pk)
    finally:
        server.stop()
    assert run.status == JudgeRun.FINISHED
    assert sum(1 for outcome in outcomes if outcome.get("status") != "held elsewhere") >= 1, outcomes
    total = run.total_calls
    assert total == 120 == Judgment.objects.filter(judge=judge).count() == run.done_calls
    assert len(server.requests) == total == run.calls_made
    assert max(_calls_per_prompt(server).values()) == 1


def test_a_killed_workers_run_is_taken_over_by_another_worker_and_finished(study, workers, tmp_path):
    server = ChatServer(latency=0.1).start()
    try:
        judge = _judge(study, server)
        run = judge_run_create(judge=judge)
        workers.start_beat(tmp_path / "beat-schedule")
        # Two prefork workers; the run's messages reach the first only (a queue of its own as well
        # as the shared one), so it holds every copy the site sent, as a worker that prefetched
        # them does. The sweeper's hand-off goes to the shared queue.
        first = workers.start("first", concurrency=2, own_queue=True)
        second = workers.start("second", concurrency=2)
        workers.wait_ready(2)
        workers.dispatch(run.pk, worker="first")  # as the site queues a run
        wait_for(lambda: Judgment.objects.filter(judge=judge).count() >= 20, 60, "the first judgments")
        holder = JudgeRun.objects.get(pk=run.pk).lease_owner
        assert int(holder.split(":")[1]) in workers.pool_pids(first)
        workers.kill(first)  # with its pool processes and the messages it holds
        dead = JudgeRun.objects.get(pk=run.pk)  # the dead worker's last word
        written_by_the_dead = set(Judgment.objects.filter(judge=judge).values_list("pk", flat=True))
        assert len(written_by_the_dead) < 120 and dead.lease_owner == holder
        # Nobody sends anything more: the sweeper finds the lease lapsed and hands the run over.
        # Bounded far below the broker's visibility timeout (900 s), the only other way back.
        second_pids = {str(pid) for pid in workers.pool_pids(second)}

        def executor():  # the process executing the run now (after the sweeper's hand-off token), if any
            owner, status = JudgeRun.objects.filter(pk=run.pk).values_list("lease_owner", "status").get()
            pid = (owner.split(":") + ["", ""])[1]
            return pid if owner != holder and not owner.startswith(HANDOFF_PREFIX) and pid else status == JudgeRun.FINISHED

        taken_over_by = wait_for(executor, 60, "the take-over")
        run = wait_for(lambda: JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.FINISHED).first(), 120, "the end of the run")
    finally:
        server.stop()
    assert run.lease_owner == ""
    assert Judgment.objects.filter(judge=judge).count() == 120 == run.done_calls == run.total_calls
    assert Judgment.objects.filter(judge=judge, error="").count() == 120
    taken_over = Judgment.objects.filter(judge=judge).exclude(pk__in=written_by_the_dead)
    assert taken_over.exists() and taken_over_by in second_pids | {True}  # True: finished between two looks
    # Calls paid twice: at most those the dead worker had sent and not written, which the runner
    # keeps within the concurrency; each at most once more.
    assert len(server.requests) - 120 <= judge.concurrency, len(server.requests)
    assert max(_calls_per_prompt(server).values()) <= 2
    # Taken over only once the lease had lapsed: the new worker's first judgment is written at
    # least a lease after the dead worker's last heartbeat (both are wall-clock times of this machine).
    first_taken_over = taken_over.order_by("created_at").first()
    assert first_taken_over.created_at >= dead.heartbeat_at + timedelta(seconds=LEASE), (first_taken_over.created_at,
                                                                                         dead.heartbeat_at)


def test_two_workers_on_one_endpoint_keep_its_rate_limit_together(study, workers):
    """Issue 11, point 4: two judges on one endpoint (300 requests per minute), each run on its
    own worker process at the same time; the state is shared through Redis (the broker). The
    server sees the two runs interleaved and never two requests closer than 60 / 300 s."""
    from annotation.models import Case

    arrived = {"pace-a": threading.Event(), "pace-b": threading.Event()}

    def script(body, index):
        # Every call of a run is answered only once the other run has called too, so at most a
        # run's first calls in flight can come before the other run starts: the two runs overlap
        # however late a worker picks its run up (the limit is shared across them, not merely
        # kept by one run after the other). Holding only the first call let the rest of a run,
        # four at a time, finish before a late worker's first call.
        mine = body["model"]
        arrived[mine].set()
        arrived["pace-b" if mine == "pace-a" else "pace-a"].wait(50)  # a bound under the 60 s call timeout
        return default_script(body, index)

    server = ChatServer(script, latency=0.01).start()
    try:
        # 4 cases x 5 criteria: 20 calls a run
        cases = list(Case.objects.filter(project=study).order_by("pk").values_list("external_id", flat=True)[:4])
        scope = {"cases": cases, "models": ["m-a"]}
        judges = [Judge.objects.create(project=study, name=name, backend=Judge.OPENAI, model=name, base_url=server.url,
                                       concurrency=4, max_retries=0, settings={"requests_per_minute": 300})
                  for name in ("pace-a", "pace-b")]
        runs = [judge_run_create(judge=judge, scope=scope) for judge in judges]
        workers.start("one"), workers.start("two")
        workers.wait_ready(2)  # both consuming before either run is sent: the runs overlap
        for run in runs:
            workers.send(run.pk)
        wait_for(lambda: JudgeRun.objects.filter(pk__in=[r.pk for r in runs], status=JudgeRun.FINISHED).count() == 2, 120,
              "both runs to finish")
    finally:
        server.stop()
    assert len(server.times) == 40
    by_model = {name: [t for t, r in zip(server.times, server.requests) if r["model"] == name] for name in ("pace-a", "pace-b")}
    assert min(by_model["pace-a"]) < max(by_model["pace-b"]) and min(by_model["pace-b"]) < max(by_model["pace-a"])
    assert_paced(server.times, 0.2)


def _purge(workers) -> int:
    """Drop the messages waiting in the workers' queue, as a Redis restart without persistence or a
    purge would; returns how many there were."""
    with workers.client.connection_for_write() as conn:
        return conn.default_channel.queue_purge(workers.queue)


def _sent_long_ago(run) -> None:
    """Date the queued run's last send back past the workers' resend bound."""
    JudgeRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=RESEND + 1))


def test_a_queued_run_whose_message_was_purged_is_sent_again_by_the_sweeper_and_executed(study, workers, tmp_path):
    server = ChatServer(latency=0.01).start()
    try:
        judge = _judge(study, server)
        run = judge_run_create(judge=judge)
        workers.dispatch(run.pk)  # as the site queues it, before any worker consumes the queue
        assert _purge(workers) == 1  # and the broker loses it
        _sent_long_ago(run)
        workers.start_beat(tmp_path / "beat-schedule")
        workers.start("one")
        # Nothing is sent by hand: beat's sweep, executed by the worker, sends the run again.
        run = wait_for(lambda: JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.FINISHED).first(), 120,
                       "the stranded run to be sent again and finish")
    finally:
        server.stop()
    assert run.total_calls == 120 == run.done_calls == Judgment.objects.filter(judge=judge).count()
    assert len(server.requests) == 120 and max(_calls_per_prompt(server).values()) == 1


def test_a_run_sent_again_while_its_first_message_waits_is_executed_once(study, workers, settings):
    settings.EVALSITE_QUEUED_RESEND_SECONDS = RESEND  # the sweep below runs in this process
    server = ChatServer(latency=0.01).start()
    try:
        judge = _judge(study, server)
        run = judge_run_create(judge=judge)
        workers.dispatch(run.pk)  # its message waits: no worker yet
        _sent_long_ago(run)
        # The sweeper (here, in this process, sending to the workers' queue) takes the waiting run
        # for a lost one and sends a second copy.
        sweep = judge_run_sweep(send=lambda **options: workers.send_options(**options))
        assert sweep.resent == (run.pk,)
        workers.start("one")
        run = wait_for(lambda: JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.FINISHED).first(), 120,
                       "the run to finish")
        # A third copy, queued behind the second on a solo worker: once it has ended, both have,
        # and it finds the run finished.
        late = workers.send(run.pk).get(timeout=120, disable_sync_subtasks=False)
    finally:
        server.stop()
    assert late["status"] == JudgeRun.FINISHED, late
    run.refresh_from_db()
    assert run.status == JudgeRun.FINISHED and run.total_calls == 120 == Judgment.objects.filter(judge=judge).count()
    assert len(server.requests) == 120 == run.calls_made and max(_calls_per_prompt(server).values()) == 1
