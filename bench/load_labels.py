"""Load test of label saving: N concurrent annotators clicking through their rubrics against
gunicorn + PostgreSQL on this machine, then a check that the database holds every acknowledged
save exactly once (issue 4, point 7).

    .venv/bin/python -m bench.load_labels [--annotators 50] [--items 2] [--criteria 30]
        [--think-ms 1000] [--workers 3] [--threads 2] [--max-seconds 120] [--json]
        [--busy-database-url URL --busy-project SLUG [--busy-report "agreement --a ... --b ..."]]

What it does, all on loopback (it refuses any other host):
1. creates a throw-away PostgreSQL database (default ``evalsite_load_<pid>`` on
   postgres://postgres@127.0.0.1:5432), migrates it, collects static files (into the
   git-ignored ``staticfiles/``), and seeds one blind project: ``items``
   responses per annotator, each with ``criteria`` binary criteria, one cohort of
   ``annotators`` annotators, overlap 1, and a logged-in session per annotator;
2. starts gunicorn (production settings, gthread workers) on a free 127.0.0.1 port;
3. runs one thread per annotator; each loads its labeling page once (warm-up, not measured),
   then posts the labeling page's real htmx save request for every criterion of its items
   (every fifth criterion is changed a second time, with the revision the first save
   returned), optionally pausing ``think-ms`` between clicks. All are released together;
   with pauses each makes its first click at a random moment of its first ``think-ms``, as
   independent people would, and without them all 50 first clicks leave at once;
4. stops gunicorn and checks the database: one label per acknowledged (response, criterion,
   annotator), holding the last acknowledged verdict and revision, one history row per
   acknowledged change, no duplicates; then drops the database.

With ``--busy-*``, a report computes over and over on another database while the annotators click
(``BusyReport``: the cache emptied before each run, at the workers' CPU priority), so the figures
say what an annotator waits while a worker computes a full-scale report on the same machine.

It is bounded: at most annotators × items × criteria × 1.2 requests and ``max-seconds`` of
load. Figures: p50 / p95 / max save latency (client-side, ms), saves per second, lost and
duplicated labels. ``run_all`` gives ``make bench`` the same figures.

Which click rate: an annotator reads a criterion before deciding it, so the target scenario
is each of the 50 annotators clicking about once a second (``--think-ms 1000``, uniformly
0.5-1.5 s between clicks), faster than any physician reads a rubric: 50 saves/s in all.
Twice that rate is run too, for headroom. ``--think-ms 0`` (no pauses at all) is a saturation
test: with 50 clients always waiting, latency is 50 / throughput by Little's law, so it
measures how many saves per second the machine sustains, not what an annotator waits.
Before the save path was written in plain SQL (``annotation.labels``) one save cost about
13 ms of Python in ORM query building; see the issue notes for the figures before and after.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from django.conf import settings

from bench.load_clients import Annotator, paced_schedule, verify
from bench.load_setup import (
    BenchDatabase,
    bench_environment,
    cpu_pressure_since,
    cpu_pressure_total,
    free_port,
    seed,
)

ROOT = Path(__file__).resolve().parent.parent


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * pct / 100
    low, high = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


class BusyReport(threading.Thread):
    """A report computed again and again while the annotators click (issue 26: their pages must
    not slow down while a report computes): ``manage.py REPORT ...`` on another database, the
    cache emptied before each run so every run computes, at the CPU priority a worker runs at
    (``EVALSITE_WORKER_NICE``), as a worker computing a full-scale report shares this machine's
    cores and PostgreSQL server with the web processes."""

    def __init__(self, *, database_url: str, project: str, report: list[str]):
        super().__init__(daemon=True)
        from bench.full import CACHE_CLEAR, bench_env, manage  # lazy: bench.full is the caller of this option

        self.env = bench_env(database_url)
        self.steps = [CACHE_CLEAR, manage(*report[:1], "--project", project, *report[1:], "--json")]
        self.label = " ".join(report)
        self.nice = settings.EVALSITE_WORKER_NICE  # django is set up by ``run`` before the load starts
        self.stopping = threading.Event()
        self.started_runs = self.completed = 0
        self.failures: list[str] = []
        self.process: subprocess.Popen | None = None

    def as_a_worker(self) -> None:
        """In the child before it starts: the CPU priority a worker gives itself (EVALSITE_WORKER_NICE)."""
        if self.nice:
            os.nice(self.nice)

    def run(self) -> None:
        while not self.stopping.is_set():
            self.started_runs += 1
            for step in self.steps:
                self.process = subprocess.Popen(step, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
                                                stderr=subprocess.PIPE, text=True, preexec_fn=self.as_a_worker)
                _, err = self.process.communicate()
                if self.stopping.is_set():
                    return
                if self.process.returncode != 0:
                    self.failures.append((err.strip().splitlines() or ["?"])[-1])
                    self.stopping.set()
                    return
            self.completed += 1

    def stop(self) -> dict:
        self.stopping.set()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
        self.join(timeout=60)
        return {"busy_report": self.label, "busy_reports_started": self.started_runs,
                "busy_reports_completed": self.completed, "busy_report_failures": self.failures}


def run(*, annotators=50, items=2, criteria=30, think_ms=1000, workers=3, threads=2, max_seconds=120.0,
        db_name=None, conn_max_age=60, batch=False, api=False, rate=0.0, busy: dict | None = None) -> dict:
    """``busy``: {database_url, project, report}: a ``BusyReport`` computing while the annotators click."""
    db_name = db_name or f"evalsite_load_{os.getpid()}"
    with BenchDatabase(db_name) as database:
        url = database.url + (f"?conn_max_age={conn_max_age}" if conn_max_age else "")
        env = bench_environment(url)
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
        # production settings serve hashed static files: collect them as a deployment would
        subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
        os.environ.update({k: env[k] for k in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "ALLOWED_HOSTS")})
        import django

        django.setup()
        from django.db import connections

        clients = seed(annotators=annotators, items=items, criteria=criteria)
        connections.close_all()
        port = free_port()
        gunicorn = [
            str(Path(sys.executable).with_name("gunicorn")), "evalsite.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--workers", str(workers), "--threads", str(threads), "--worker-class", "gthread",
            "--log-level", "warning", "--timeout", "60",
            # keep idle connections open across an annotator's pauses, as a fronting proxy would
            "--keep-alive", "75",
        ]
        server = subprocess.Popen(gunicorn, cwd=ROOT, env=env)
        try:
            ready_by = time.monotonic() + 30
            while True:
                try:
                    probe = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                    probe.request("GET", "/accounts/login/")
                    if probe.getresponse().status == 200:
                        break
                except OSError:
                    pass
                if time.monotonic() > ready_by or server.poll() is not None:
                    raise SystemExit("gunicorn did not come up")
                time.sleep(0.2)
            load_before = round(os.getloadavg()[0], 2)  # the machine is shared: say how busy it was
            pressure_before = cpu_pressure_total()
            clock: dict = {}
            barrier = threading.Barrier(len(clients) + 1, action=lambda: clock.setdefault("t0", time.perf_counter()))
            deadline = time.monotonic() + max_seconds
            schedules = (paced_schedule(annotators=len(clients), items=items, criteria=criteria, rate=rate) if rate
                         else [None] * len(clients))
            load = [Annotator(port=port, client=c, think_ms=think_ms, deadline=deadline, start=barrier, seed_value=i,
                              batch=batch, api=api, schedule=schedules[i], clock=clock) for i, c in enumerate(clients)]
            busy_report = BusyReport(**busy) if busy else None
            if busy_report is not None:
                busy_report.start()
            for annotator in load:
                annotator.start()
            barrier.wait()
            started = time.perf_counter()
            for annotator in load:
                annotator.join(timeout=max_seconds + 60)
            elapsed = time.perf_counter() - started
            busy_figures = busy_report.stop() if busy_report is not None else {}
        finally:
            server.terminate()
            server.wait(timeout=30)
        latencies = [ms for a in load for ms in a.latencies_ms]
        # The annotators' first clicks are shown apart from the clicks after them: without pauses
        # they leave at the same instant (the start barrier), a burst no later click meets.
        first = [a.latencies_ms[0] for a in load if a.latencies_ms]
        after_first = [ms for a in load for ms in a.latencies_ms[1:]]
        figures = {
            "annotators": annotators, "items_per_annotator": items, "criteria": criteria, "think_ms": think_ms,
            "gunicorn": f"{workers} gthread workers x {threads} threads", "conn_max_age": conn_max_age,
            "mode": (f"batch API, one request per item, paced at {rate:g} decisions/s" if batch and rate
                     else "batch API, one request per item" if batch else "POST /api/labels/ with a token, one request per decision"
                     if api else "one request per click"),
            "requests": len(latencies), "seconds": round(elapsed, 2),
            "decisions_per_second": round(sum(a.changes for a in load) / elapsed, 1) if elapsed else None,
            "saves_per_second": round(len(latencies) / elapsed, 1) if elapsed else None,
            "p50_ms": round(_percentile(latencies, 50), 1), "p95_ms": round(_percentile(latencies, 95), 1),
            "p99_ms": round(_percentile(latencies, 99), 1), "max_ms": round(max(latencies), 1) if latencies else None,
            "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None,
            "first_clicks_p50_ms": round(_percentile(first, 50), 1),
            "first_clicks_max_ms": round(max(first), 1) if first else None,
            "after_first_p95_ms": round(_percentile(after_first, 95), 1),
            "after_first_p99_ms": round(_percentile(after_first, 99), 1),
            "after_first_max_ms": round(max(after_first), 1) if after_first else None,
            "errors": sum(len(a.errors) for a in load),
            "reconnects": sum(a.reconnects for a in load),
            "first_errors": [e for a in load for e in a.errors][:3],
            "cpus": os.cpu_count(),
            "loadavg_1min_before": load_before,
            "cpu_pressure_during": cpu_pressure_since(pressure_before, elapsed),
        }
        figures.update(busy_figures)
        figures.update(verify(load))
        connections.close_all()
    return figures


# Issue 22's target for the batch API: 1,000 items x 30 decisions from 50 clients on this machine.
TARGET_RATE, TARGET_P95_MS = 3500, 250


def run_all(out_dir) -> list[tuple[str, object, str]]:
    """For ``make bench``: the target pace, twice that, and saturation, each in its own process."""
    rows = []
    for label, extra in (("1 click/s each", ["--think-ms", "1000"]), ("2 clicks/s each", ["--think-ms", "500"]),
                         ("no pauses, saturation", ["--think-ms", "0"]),
                         ("batch", ["--think-ms", "0", "--batch", "--items", "20", "--max-seconds", "300"]),
                         ("batch, paced", ["--think-ms", "0", "--batch", "--items", "20", "--max-seconds", "300",
                                           "--rate", str(TARGET_RATE)]),
                         ("API, 60 s", ["--think-ms", "0", "--api", "--items", "20", "--max-seconds", "60"])):
        proc = subprocess.run([sys.executable, "-m", "bench.load_labels", "--json", *extra], cwd=ROOT,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            rows.append((f"[load_labels {label}]", "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1], ""))
            continue
        f = json.loads(proc.stdout.strip().splitlines()[-1])
        if "--api" in extra:
            rows += [("[load_labels API] 50 annotators, POST /api/labels/, no pauses", f["seconds"],
                      f"s, {f['saves_per_second']} saves/s, p50 / p95 / p99 {f['p50_ms']} / {f['p95_ms']} / {f['p99_ms']} ms"),
                     ("[load_labels API] lost / duplicated / wrong / errors", f"{f['lost']} / {f['duplicated']} / "
                      f"{f['wrong_value']} / {f['errors']}", f"(labels in the database {f['labels_in_db']} of "
                      f"{f['labels_acknowledged']} acknowledged; history rows {f['history_rows']} of {f['history_expected']})")]
            continue
        if "--rate" in extra:
            rows += [
                (f"[load_labels batch] {f['requests']} items x {f['criteria']} decisions, 50 clients, offered at "
                 f"{TARGET_RATE:,} decisions/s", f["decisions_per_second"],
                 f"decisions/s served, p50 / p95 / p99 {f['p50_ms']} / {f['p95_ms']} / {f['p99_ms']} ms "
                 f"(target: {TARGET_RATE:,} decisions/s with p95 <= {TARGET_P95_MS} ms, issue 22)"),
                ("[load_labels batch, paced] lost / duplicated / errors", f"{f['lost']} / {f['duplicated']} / {f['errors']}",
                 f"(labels in the database {f['labels_in_db']} of {f['labels_acknowledged']} acknowledged)"),
            ]
            continue
        if "--batch" in extra:
            rows += [
                (f"[load_labels batch] {f['requests']} items x {f['criteria']} decisions, 50 clients, no pauses",
                 f["seconds"], f"s wall, {f['decisions_per_second']} decisions/s (Label Studio 1.23.2 here: about 85 s, "
                               "345 decisions/s, p95 5.6 s, 2% failed)"),
                ("[load_labels batch] per request p50 / p95", f"{f['p50_ms']} / {f['p95_ms']}", "ms"),
                ("[load_labels batch] lost / duplicated / errors", f"{f['lost']} / {f['duplicated']} / {f['errors']}",
                 f"(labels in the database {f['labels_in_db']} of {f['labels_acknowledged']} acknowledged)"),
            ]
            continue
        rows += [
            (f"[load_labels {label}] 50 annotators save p50 / p95", f"{f['p50_ms']} / {f['p95_ms']}",
             "ms (target p95 <= 20 at 1 click/s, issue 12)" if extra[1] == "1000" else "ms"),
            (f"[load_labels {label}] p99 / max", f"{f['p99_ms']} / {f['max_ms']}",
             f"ms (the 50 first clicks{', all at once' if extra[1] == '0' else ''}: p50 {f['first_clicks_p50_ms']}, "
             f"max {f['first_clicks_max_ms']}; "
             f"after them p99 {f['after_first_p99_ms']}, max {f['after_first_max_ms']})"),
            (f"[load_labels {label}] throughput", f["saves_per_second"], "saves/s"),
            (f"[load_labels {label}] lost / duplicated / errors", f"{f['lost']} / {f['duplicated']} / {f['errors']}", ""),
        ]
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--items", type=int, default=2, help="responses per annotator")
    parser.add_argument("--criteria", type=int, default=30)
    parser.add_argument("--think-ms", type=int, default=1000, help="mean pause between two clicks of one annotator (0: none)")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (3 on 2 cores measured best)")
    parser.add_argument("--threads", type=int, default=2, help="threads per gunicorn worker")
    parser.add_argument("--conn-max-age", type=int, default=60, help="persistent DB connections (0 = one per request)")
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--db-name", default=None)
    parser.add_argument("--batch", action="store_true", help="each item's decisions in one batch API request")
    parser.add_argument("--api", action="store_true", help="each decision through POST /api/labels/ with a token")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="with --batch: send items at this many decisions per second in all, evenly spaced, and time "
                             "each from when it was due (0: every client sends its next item as soon as the last is answered)")
    parser.add_argument("--busy-database-url", help="while the annotators click, compute a report again and again on "
                                                     "this database (a full-scale study's: bench.full gives it)")
    parser.add_argument("--busy-project", help="with --busy-database-url: the project the report reads")
    parser.add_argument("--busy-report", default="agreement --a cohort:group-1 --b cohort:group-2",
                        help="with --busy-database-url: the report command and its arguments")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if bool(args.busy_database_url) != bool(args.busy_project):
        raise SystemExit("--busy-database-url and --busy-project go together")
    busy = {"database_url": args.busy_database_url, "project": args.busy_project,
            "report": args.busy_report.split()} if args.busy_database_url else None
    if args.rate and not args.batch:
        raise SystemExit("--rate paces batches: give --batch too")
    if not (1 <= args.annotators <= 200 and 1 <= args.items <= 20 and 1 <= args.criteria <= 100 and args.max_seconds <= 600):
        raise SystemExit("bounded: annotators 1..200, items 1..20, criteria 1..100, max-seconds <= 600")
    figures = run(annotators=args.annotators, items=args.items, criteria=args.criteria, think_ms=args.think_ms,
                  workers=args.workers, threads=args.threads, max_seconds=args.max_seconds, db_name=args.db_name,
                  conn_max_age=args.conn_max_age, batch=args.batch, api=args.api, rate=args.rate, busy=busy)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:<22} {value}")
    ok = figures["lost"] == 0 and figures["duplicated"] == 0 and figures["wrong_value"] == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
