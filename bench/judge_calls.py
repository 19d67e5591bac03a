"""Judge-call throughput: ``python -m bench.judge_calls [--calls 2000] [--latency 0.05] [--concurrency 16]``.

Builds a project with ``calls`` (response, criterion) pairs in a fresh SQLite database (or the
one DATABASE_URL names), starts the loopback Chat Completions server of the judge tests with a
fixed latency per request in its own process (as a real model server would be: sharing this
process's GIL would bill the server's work to the runner), runs an OpenAI-compatible judge through the real runner (openai
client, thread pool, batched idempotent writes) and compares the elapsed time with the ideal
``calls x latency / concurrency`` (target: within 1.3x) and with a bare-HTTP floor (the same
requests from the standard library's client, no judge), which shows how much of any excess is
the machine rather than the runner. Then runs the judge again: every answer must come from the
persistent cache, with no call made. Prints one JSON object.

``--command`` times the whole ``manage.py run_judge`` command instead (a process of its own,
from start to exit, as a script would run it), and its start-up separately: the same command
on a project of one call, less that call's latency (median of three). Issue 11's target:
command - start-up within 1.15x of the ideal.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.services import ChatServerProcess

CRITERIA_PER_CASE = 20
RESPONSES_PER_CASE = 10


def _setup_django(var_dir: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")
    os.environ.setdefault("EVALSITE_VAR_DIR", var_dir)
    os.environ.setdefault("DEBUG", "false")  # DEBUG keeps every query in memory
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _project(calls: int, *, criteria: int = CRITERIA_PER_CASE, responses: int = RESPONSES_PER_CASE):
    from annotation.models import Case, Project, Response
    from annotation.rubrics import rubrics_freeze

    per_case = criteria * responses
    n_cases = max(1, round(calls / per_case))
    # A fresh slug and case text per invocation: a reused database keeps its request cache,
    # which would otherwise answer the first run too.
    project = Project.objects.create(slug=f"bench-judge-{time.time_ns()}", name="judge call bench")
    cases = Case.objects.bulk_create(
        Case(project=project, external_id=f"{project.slug}-c{i}", position=i,
             prompt=f"Case {i} of {project.slug}: chest pain for {i + 1} hours.")
        for i in range(n_cases)
    )
    rubrics_freeze(project=project, scopes=[
        (case, [{"criterion_id": f"{case.external_id}-k{j}", "text": f"Mentions finding number {j}"} for j in range(criteria)])
        for case in cases
    ])
    Response.objects.bulk_create(
        Response(project=project, case=case, external_id=f"{case.external_id}-r{k}", position=i * responses + k,
                 model=f"model-{k}", text=f"Answer {k} to case {i}: see a doctor; finding number {k} is present.")
        for i, case in enumerate(cases) for k in range(responses)
    )
    return project


def _floor_seconds(url: str, *, calls: int, concurrency: int) -> float:
    """The same number of requests with the standard library's bare HTTP client, no judge, no
    database: what this machine and server manage at all, to tell runner overhead from noise."""
    import http.client
    import threading
    from urllib.parse import urlparse

    target = urlparse(url)
    body = json.dumps({"model": "floor", "messages": [{"role": "user", "content": "x" * 1500}]})
    counts = [calls // concurrency + (1 if i < calls % concurrency else 0) for i in range(concurrency)]

    def worker(n: int) -> None:
        conn = http.client.HTTPConnection(target.hostname, target.port)
        for _ in range(n):
            conn.request("POST", f"{target.path}/chat/completions", body, {"Content-Type": "application/json"})
            conn.getresponse().read()
        conn.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in counts]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


ROOT = Path(__file__).resolve().parent.parent


def _command_seconds(*, slug: str, judge: str) -> tuple[float, dict]:
    """The wall time of ``manage.py run_judge`` in a process of its own, and what it printed."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "manage.py", "run_judge", "--project", slug, "--judge", judge, "--json"],
                          cwd=ROOT, capture_output=True, text=True, env=os.environ.copy())
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"run_judge failed: {proc.stderr.strip()[-500:]}")
    return elapsed, json.loads(proc.stdout)


def _command_bench(args) -> dict:
    """Time the whole command on ``args.calls`` calls, and its start-up on a one-call project."""
    from django.db import connection

    from grading.models import Judge

    project, tiny = _project(args.calls), _project(1, criteria=1, responses=1)
    server = ChatServerProcess(args.latency)
    try:
        for p in (project, tiny):
            Judge.objects.create(project=p, name="bench", backend=Judge.OPENAI, model="bench-model", base_url=server.url,
                                 concurrency=args.concurrency, max_retries=0, price_in_per_mtok=1, price_out_per_mtok=2)
        connection.close()  # the commands open their own
        startups = []
        for _ in range(3):
            seconds, out = _command_seconds(slug=tiny.slug, judge="bench")
            assert out["calls"] == 1, out
            startups.append(seconds - args.latency)
            Judge.objects.filter(project=tiny).delete()  # a fresh judge each time: no cache hit
            Judge.objects.create(project=tiny, name="bench", backend=Judge.OPENAI, model=f"bench-model-{len(startups)}",
                                 base_url=server.url, concurrency=args.concurrency, max_retries=0)
            connection.close()
        elapsed, out = _command_seconds(slug=project.slug, judge="bench")
        stats = server.stats()
    finally:
        server.stop()
    startup = statistics.median(startups)
    ideal = out["calls"] * args.latency / args.concurrency
    return {
        "mode": "whole run_judge command", "calls": out["calls"], "judgments": out["judgments"],
        "server_requests": stats["requests"], "max_in_flight": stats["max_in_flight"],
        "latency_s": args.latency, "concurrency": args.concurrency,
        "command_s": round(elapsed, 3), "startup_s": round(startup, 3), "startups_s": [round(x, 3) for x in startups],
        "ideal_s": round(ideal, 3), "target_s": round(1.15 * ideal + startup, 3),
        "ratio_to_ideal": round((elapsed - startup) / ideal, 3), "within_target": elapsed <= 1.15 * ideal + startup,
        "load_average_1m": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--command", action="store_true",
                        help="time the whole manage.py run_judge command (start-up measured separately)")
    parser.add_argument("--plan-only", action="store_true",
                        help="only the first run (no cached re-run, no bare-HTTP floor): for the peak RSS of a large plan")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as var_dir:
        _setup_django(var_dir)
        if args.command:
            result = _command_bench(args)
            print(json.dumps(result, indent=2))
            return result
        from django.db import connection

        from grading.judges.runner import judge_run_execute
        from grading.judges.services import judge_run_create
        from grading.models import Judge

        project = _project(args.calls)
        server = ChatServerProcess(args.latency)
        try:
            judge = Judge.objects.create(
                project=project, name="bench", backend=Judge.OPENAI, model="bench-model", base_url=server.url,
                concurrency=args.concurrency, max_retries=0, price_in_per_mtok=1, price_out_per_mtok=2,
            )
            started = time.perf_counter()
            first = judge_run_execute(run=judge_run_create(judge=judge))
            elapsed = time.perf_counter() - started
            after_first = server.stats()
            peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            if args.plan_only:
                second, cached_elapsed, after_second, floor = first, 0.0, after_first, float("nan")
            else:
                started = time.perf_counter()
                second = judge_run_execute(run=judge_run_create(judge=judge))
                cached_elapsed = time.perf_counter() - started
                after_second = server.stats()
                floor = _floor_seconds(server.url, calls=first.calls, concurrency=args.concurrency)
        finally:
            server.stop()
        ideal = first.calls * args.latency / args.concurrency
        result = {
            "database": connection.vendor,
            "calls": first.calls, "judgments": first.judgments, "invalid": first.invalid, "failed": first.failed,
            "latency_s": args.latency, "concurrency": args.concurrency, "max_in_flight": after_first["max_in_flight"],
            "server_requests": after_first["requests"],
            "elapsed_s": round(elapsed, 3), "ideal_s": round(ideal, 3),
            "ratio_to_ideal": round(elapsed / ideal, 3) if ideal else None,
            "within_1_3x": elapsed <= 1.3 * ideal, "cost_usd": first.cost_usd,
            "bare_http_floor_s": round(floor, 3), "ratio_to_floor": round(elapsed / floor, 3) if floor == floor else None,
            "load_average_1m": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
            "peak_rss_mb": round(peak_rss_mb), "rss_target_mb": 400,
            "cached_rerun": {"calls": second.calls, "cache_hits": second.cache_hits,
                             "server_requests": after_second["requests"] - after_first["requests"],
                             "cost_usd": second.cost_usd, "elapsed_s": round(cached_elapsed, 3)},
        }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
