"""A worker killed mid-run: ``python -m bench.judge_takeover [--cases 80] [--lease 10] [--sweep 5]``.

On PostgreSQL and the Redis broker (skipped, saying so, when either is missing): a project of
``cases`` x 5 criteria x 3 models, an OpenAI-compatible judge (concurrency 4) calling the
loopback Chat Completions server (50 ms a call, in its own process, counting the requests per
prompt). Two prefork workers (2 pool processes each, as deployed) and a Celery beat process
sending the sweeper every ``--sweep`` seconds. The run is queued as the site queues it, to the
first worker only (a queue of its own besides the shared one), so that worker holds every
message of the run, as the worker of issue 27 point 3 held both copies; once a quarter of the
judgments are written and a random part of a sweep interval more has passed (so the kill falls
anywhere between two of beat's sweeps) it is SIGKILLed with its pool processes, and nothing else
is sent.
Measured from the kill: when the second worker's execution holds the run's lease
(``takeover_s``; target: within the lease plus 15 s, ``target_s``) and when the run is finished
(``finish_s``); then the judgments against responses x criteria, duplicates (rows of one call,
which the unique key forbids) and calls the server answered twice (at most those the dead worker
had sent and not written: at most the concurrency). Prints one JSON object with the load average.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.services import PG_ADMIN_URL, REDIS_URL, ChatServerProcess, fresh_database, redis_up

ROOT = Path(__file__).resolve().parent.parent
DB = "evalsite_bench_takeover"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=80)
    parser.add_argument("--lease", type=float, default=10.0)
    parser.add_argument("--sweep", type=float, default=5.0, help="seconds between sweeps (EVALSITE_JUDGE_SWEEP_SECONDS)")
    args = parser.parse_args(argv)
    database = fresh_database(DB)
    if database is None or not redis_up():
        result = {"skipped": "needs PostgreSQL at " + PG_ADMIN_URL.rsplit("/", 1)[0] + " and Redis at " + REDIS_URL}
        print(json.dumps(result))
        return result
    env = {**os.environ, "DATABASE_URL": database, "CELERY_BROKER_URL": REDIS_URL, "CELERY_RESULT_BACKEND": REDIS_URL,
           "DJANGO_SETTINGS_MODULE": "evalsite.settings.local", "DEBUG": "false", "CELERY_TASK_ALWAYS_EAGER": "false",
           "EVALSITE_JUDGE_LEASE_SECONDS": str(args.lease), "EVALSITE_JUDGE_SWEEP_SECONDS": str(args.sweep)}
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from annotation.models import Project
    from demo.clinical import generate_clinical
    from grading.bundles import bundle_import
    from grading.judges.services import judge_run_create
    from grading.models import Judge, JudgeRun, Judgment
    from tests.celery_workers import SoloWorkers, wait_for

    call_command("migrate", verbosity=0, interactive=False)
    with tempfile.TemporaryDirectory() as tmp:
        generate_clinical(Path(tmp) / "bundle", slug="takeover", n_cases=args.cases, n_criteria=5,
                          models=["m-a", "m-b", "m-c"], human_answer_cases=0, judges=(), seed=5)
        bundle_import(path=Path(tmp) / "bundle")
    project = Project.objects.get(slug="takeover")
    server = ChatServerProcess(0.05)
    workers = SoloWorkers(env=env, broker=REDIS_URL, backend=REDIS_URL, prefix="bench-takeover", log=subprocess.DEVNULL)
    try:
        judge = Judge.objects.create(project=project, name="llm", backend=Judge.OPENAI, model="judge-model",
                                     base_url=server.url, concurrency=4, max_retries=0)
        run = judge_run_create(judge=judge)
        expected = project.responses.count() * 5
        with tempfile.TemporaryDirectory() as beat_dir:
            workers.start_beat(Path(beat_dir) / "schedule")
            first = workers.start("first", concurrency=2, own_queue=True)
            second = workers.start("second", concurrency=2)
            workers.wait_ready(2)
            workers.dispatch(run.pk, worker="first")  # as the site queues a run; every copy to the first worker
            wait_for(lambda: Judgment.objects.filter(judge=judge).count() >= expected // 4, 120, "a quarter of the judgments")
            time.sleep(random.uniform(0, args.sweep))  # the kill's phase against beat's sweeps
            holder = JudgeRun.objects.get(pk=run.pk).lease_owner
            assert int(holder.split(":")[1]) in workers.pool_pids(first), holder
            workers.kill(first)
            killed = time.monotonic()
            dead = JudgeRun.objects.get(pk=run.pk)
            heartbeat_age = (timezone.now() - dead.heartbeat_at).total_seconds()  # at the kill
            at_kill = Judgment.objects.filter(judge=judge).count()
            second_pids = {str(pid) for pid in workers.pool_pids(second)}

            def executing_on_second():
                owner = JudgeRun.objects.filter(pk=run.pk).values_list("lease_owner", "status").first()
                return (owner[0].split(":") + ["", ""])[1] in second_pids or owner[1] == JudgeRun.FINISHED

            wait_for(executing_on_second, 300, "the take-over")
            takeover = time.monotonic() - killed
            run = wait_for(lambda: JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.FINISHED).first(), 300,
                           "the end of the run")
            finished = time.monotonic() - killed
        stats = server.stats()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM grading_judgment WHERE judge_id = %s "
                "GROUP BY response_id, criterion_id, sample HAVING COUNT(*) > 1) AS twice", [judge.pk])
            duplicates = cursor.fetchone()[0]
        result = {
            "lease_s": args.lease, "sweep_s": args.sweep, "takeover_s": round(takeover, 2),
            "target_s": args.lease + 15, "within_target": takeover <= args.lease + 15,
            "heartbeat_age_at_kill_s": round(heartbeat_age, 2),
            "finish_s": round(finished, 2),
            "judgments_at_kill": at_kill, "judgments": Judgment.objects.filter(judge=judge).count(), "expected": expected,
            "run_done_calls": run.done_calls, "duplicate_judgments": duplicates,
            "server_requests": stats["requests"], "calls_repeated": stats["repeated"], "concurrency": judge.concurrency,
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
    finally:
        workers.stop()
        server.stop()
        connection.close()
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
