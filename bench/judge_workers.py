"""Judge runs over more worker processes (issue 26, point 4):
``python -m bench.judge_workers [--workers 1,2,4] [--runs 8] [--calls-per-run 240] [--concurrency 8]``.

On PostgreSQL and the Redis broker (skipped, saying so, when either is missing), as deployed: N
real ``celery worker`` processes (solo pool: one run at a time per process) sharing one database
and one broker, the provider rate limits shared through Redis (``grading.judges.ratelimit``), and
the loopback Chat Completions server of the judge tests in a process of its own answering each
call after ``--latency`` seconds (200 ms: a model's answer, not a loopback echo).

A run is executed by one worker at a time (its lease, ``grading.judges.lease``) with up to its
judge's concurrency of calls in flight (SPEC §7): more workers carry more runs at once, which is
how a deployment with many judges, projects and runs gets more throughput from more workers. So
each leg queues ``--runs`` runs of as many judges (``--calls-per-run`` calls each, every judge on
the one endpoint, with a requests-per-minute limit far above the load) at once and measures
calls/s from the first send to the last run finished, with 1, 2 and 4 workers; the speedup
against one worker is printed beside issue 26's targets (x1.8 at 2, x3.4 at 4).

Then the limited leg: the endpoint limited to ``--limited-rpm`` requests per minute, below what
the workers would send (each alone would exceed it), ``--limited-runs`` runs on the largest number
of workers at once. The server's arrival times show the limit kept across every worker: the mean
rate over the leg and the most requests in any 10-second window scaled to a minute, against the limit,
and the most in any one second (the limiter spaces requests 60 / RPM s apart: no bursts).

Prints one JSON object with the load average; ``run_all`` gives ``bench/run.py`` its lines.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.services import PG_ADMIN_URL, REDIS_URL, ChatServerProcess, fresh_database, redis_up

ROOT = Path(__file__).resolve().parent.parent
DB = os.environ.get("BENCH_WORKERS_DB", "evalsite_bench_workers")
TARGETS = {2: 1.8, 4: 3.4}  # speedup against one worker (issue 26, point 4)
UNLIMITED_RPM = 1_000_000  # "a limit above the load": the limiter is consulted (through Redis), never waits


def _leg(*, workers, project, server, label: str, n_workers: int, runs: int, concurrency: int, rpm: int) -> dict:
    """Queue ``runs`` runs of as many new judges at once on the started workers; wait for them all."""
    from grading.judges.services import judge_run_create
    from grading.models import Judge, JudgeRun, Judgment
    from tests.celery_workers import wait_for

    judges = [Judge.objects.create(project=project, name=f"{label}-{k}", backend=Judge.OPENAI, model=f"{label}-{k}",
                                   base_url=server.url, concurrency=concurrency, max_retries=0,
                                   settings={"requests_per_minute": rpm})
              for k in range(runs)]  # a model of its own each: the request cache answers none of them
    run_ids = [judge_run_create(judge=judge).pk for judge in judges]
    server.times()  # forget earlier legs' requests
    started = time.monotonic()
    for run_id in run_ids:
        workers.dispatch(run_id)  # as the site queues a run
    wait_for(lambda: JudgeRun.objects.filter(pk__in=run_ids, status=JudgeRun.FINISHED).count() == runs, 1800,
             f"the {runs} runs of {label}", every=0.1)
    elapsed = time.monotonic() - started
    times = sorted(server.times())
    judgments = Judgment.objects.filter(judge__in=judges, error="").count()
    return {"workers": n_workers, "runs": runs, "calls": len(times), "judgments": judgments, "elapsed_s": round(elapsed, 2),
            "calls_per_s": round(len(times) / elapsed, 1), "times": times,
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def _paced(times: list[float], rpm: int) -> dict:
    """The rate the server saw, against the limit, over the arrival times of one leg."""
    span = times[-1] - times[0]
    def busiest(window: float) -> int:
        return max(sum(1 for t in times[i:] if t < start + window) for i, start in enumerate(times))

    # GCRA with a burst of one: a window of w seconds holds at most w * RPM / 60 requests plus the
    # one at its start. (Two requests may arrive closer than 60 / RPM s: on a loaded machine one
    # sent on time reaches the server late; the windows count what the provider would count.)
    ten, one = busiest(10.0), busiest(1.0)
    return {
        "limit_rpm": rpm,
        "mean_rpm": round((len(times) - 1) / span * 60, 1) if span else None,
        "busiest_10s_window_rpm": round(ten * 6, 1),
        "busiest_1s_window_calls": one, "limit_per_s": round(rpm / 60, 2),
        "within_limit": bool(span) and (len(times) - 1) / span * 60 <= rpm and ten <= 10 * rpm / 60 + 1,
    }


def bench(args) -> dict:
    database = fresh_database(DB)
    if database is None or not redis_up():
        return {"skipped": "needs PostgreSQL at " + PG_ADMIN_URL.rsplit("/", 1)[0] + " and Redis at " + REDIS_URL}
    var_dir = tempfile.mkdtemp(prefix="bench-judge-workers-")
    env = {**os.environ, "DATABASE_URL": database, "CELERY_BROKER_URL": REDIS_URL, "CELERY_RESULT_BACKEND": REDIS_URL,
           "DJANGO_SETTINGS_MODULE": "evalsite.settings.local", "DEBUG": "false", "CELERY_TASK_ALWAYS_EAGER": "false",
           "EVALSITE_VAR_DIR": var_dir, "EVALSITE_RATE_LIMIT_REDIS_URL": REDIS_URL}
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from bench.judge_calls import _project
    from tests.celery_workers import SoloWorkers

    call_command("migrate", verbosity=0, interactive=False)
    # One case of 20 criteria and calls-per-run / 20 responses: every judge's run makes calls-per-run calls.
    project = _project(args.calls_per_run, criteria=20, responses=max(1, args.calls_per_run // 20))
    limited_project = _project(args.limited_calls, criteria=10, responses=max(1, args.limited_calls // 10))
    server = ChatServerProcess(args.latency)
    legs, limited = [], None
    try:
        for n in args.workers:
            workers = SoloWorkers(env=env, broker=REDIS_URL, backend=REDIS_URL, prefix=f"bench-workers-{n}",
                                  log=subprocess.DEVNULL)
            try:
                for k in range(n):
                    workers.start(f"w{k}")
                workers.wait_ready(n, timeout=120)
                legs.append(_leg(workers=workers, project=project, server=server, label=f"x{n}", n_workers=n,
                                 runs=args.runs, concurrency=args.concurrency, rpm=UNLIMITED_RPM))
                if n == max(args.workers):
                    limited = _leg(workers=workers, project=limited_project, server=server, label=f"limited-x{n}",
                                   n_workers=n, runs=args.limited_runs, concurrency=args.concurrency,
                                   rpm=args.limited_rpm)
            finally:
                workers.stop()
    finally:
        server.stop()
        connection.close()
    base = next((leg["calls_per_s"] for leg in legs if leg["workers"] == 1), None)
    for leg in legs:
        leg["speedup"] = round(leg["calls_per_s"] / base, 2) if base else None
        leg["target_speedup"] = TARGETS.get(leg["workers"])
        leg["meets_target"] = None if leg["target_speedup"] is None else leg["speedup"] >= leg["target_speedup"]
        del leg["times"]
    result = {"latency_s": args.latency, "concurrency": args.concurrency, "calls_per_run": args.calls_per_run,
              "legs": legs}
    if limited is not None:
        limited_times = limited.pop("times")
        # What the workers would send without the limit: each of them its concurrency every latency.
        limited["unlimited_load_rpm"] = round(min(limited["runs"], limited["workers"]) * args.concurrency / args.latency * 60)
        limited.update(_paced(limited_times, args.limited_rpm))
        result["limited"] = limited
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return result


def run_all(out_dir) -> list[tuple]:
    """``bench/run.py``'s lines: this bench in a process of its own (it sets up Django on its own database)."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    proc = subprocess.run([sys.executable, "-m", "bench.judge_workers"], cwd=ROOT, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return [("[judges] runs over 1, 2, 4 workers", "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1])]
    r = json.loads(proc.stdout[proc.stdout.index("{"):])
    if r.get("skipped"):
        return [("[judges] runs over 1, 2, 4 workers", "skipped: " + r["skipped"])]
    lines = []
    for leg in r["legs"]:
        target = f"; target >= x{leg['target_speedup']}" if leg["target_speedup"] else ""
        lines.append((f"[judges] {leg['runs']} runs on {leg['workers']} worker(s), {int(r['latency_s'] * 1000)} ms calls",
                      leg["calls_per_s"], f"calls/s (x{leg['speedup']} of 1 worker{target}; load {leg['load_average']})"))
    limited = r.get("limited")
    if limited:
        lines.append((f"[judges] {limited['runs']} runs on {limited['workers']} workers at {limited['limit_rpm']} RPM",
                      limited["mean_rpm"],
                      f"calls/min (busiest 10 s: {limited['busiest_10s_window_rpm']}/min; load without the limit "
                      f"{limited['unlimited_load_rpm']}/min; within the limit: {limited['within_limit']}; "
                      f"load {limited['load_average']})"))
    return lines


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=lambda s: [int(n) for n in s.split(",")], default=[1, 2, 4])
    parser.add_argument("--runs", type=int, default=8, help="runs queued at once in each leg (one judge each)")
    parser.add_argument("--calls-per-run", type=int, default=240)
    parser.add_argument("--concurrency", type=int, default=8, help="each judge's concurrency")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server takes per call")
    parser.add_argument("--limited-rpm", type=int, default=600)
    parser.add_argument("--limited-runs", type=int, default=4)
    parser.add_argument("--limited-calls", type=int, default=60, help="calls of each run of the limited leg")
    result = bench(parser.parse_args(argv))
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
