"""``python -m bench.full [--scale 0.1]`` (``make bench-full``): the full-scale figures of issue 26.

1. Generates the full-scale study (``bench.generate_bundle.generate_full_bundle``: 2,500 cases ×
   11 models × 30 criteria, two cohorts of overlap 2 with a checker on 10% of responses, three
   judges, one with three samples, adjudications of 5% of the disputed items) under
   ``bench/out/full-N-seedS/`` (``--out``) unless it is there already; ``--scale`` is the fraction of the cases.
2. Creates a throw-away PostgreSQL database (``--database``, dropped at the end unless ``--keep``;
   ``--database-url`` uses the given database instead, e.g. SQLite for a small trial), migrates it
   and imports the bundle with ``manage.py import_bundle``: wall time and peak RSS of the process.
3. Times every report the registry declares as a command, each in a cold process with the report
   cache emptied first (wall time and peak RSS), then computes report pages and renders them from
   the cache (``bench.reports.bench_pages``), the adjudication queue (first as the import left it, right
   after it) and one adjudication page
   (``bench.adjudication``), 50 annotators saving labels at one click a second each while the
   agreement report computes over and over on the full-scale study (``bench.load_labels`` with
   its ``--busy-*`` options: gunicorn and a project of their own on the same PostgreSQL server),
   then the same load with no report running, and the gold export (``manage.py export_gold``: JSONL, CSV, Parquet, slices and manifest).

Every figure is printed with its target and the load average at the time (the machine may be
shared: figures are noisy); the machine's speed (``calibration_seconds``, a pure-Python loop) is
printed at the start and the end of the run, and all of them are written as JSON to
``bench/out/full-N-seedS.json`` (a run of some ``--steps`` replaces those steps' figures there and
keeps the others').
Peak RSS is the largest of the process and the children it waited for (``os.wait4``); the CPU
seconds of the process (user + system) are printed beside its wall time, as they depend less on
what else the machine runs (the database server's CPU is not in them).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.run import OUT, ROOT, postgres_drop, postgres_url, project_slug

PG_FULL_DB = "evalsite_bench_full"
IMPORT_SECONDS, IMPORT_RSS_MB = 120.0, 2048.0
REPORT_SECONDS, REPORT_RSS_MB = 30.0, 2048.0
PAGE_SECONDS = 1.0
QUEUE_SECONDS = 2.0
ANNOTATOR_P95_MS = 20.0  # a save's p95 at one click a second for 50 annotators, while a report computes
ADJUDICATION_PAGE_MS = 150.0
EXPORT_SECONDS = 60.0
DEFAULT_PAGES = ("agreement", "coverage")

# The arguments of each report command on the full-scale study; a report the registry declares
# that is missing here runs with ``fallback_arguments`` and says so.
REPORT_ARGUMENTS = {
    "adjudication_queue": [],
    "agreement": ["--a", "cohort:group-1", "--b", "cohort:group-2"],
    "bias_matrix": ["--condition", "anonymized", "--reference", "cohort:group-1"],
    "calibrate_k": ["--source", "cohort:group-1"],
    "coverage": ["--source", "judge:gpt-4o-judge"],
    "cross_grader": ["--a", "cohort:group-1", "--b", "judge:gpt-4o-judge"],
    "healthbench_score": ["--source", "judge:gpt-4o-judge"],
    "pairwise_agreement": ["--source", "cohort:group-1", "--grader", "judge:gpt-4o-judge"],
    "ppi_estimate": ["--human", "cohort:group-1", "--judge", "judge:gpt-4o-judge"],
    "reliability": ["--source", "cohort:group-1"],
    "reliability_report": ["--a", "cohort:group-1", "--b", "judge:claude-judge", "--by", "criterion"],
    "routing": ["--cohort", "cohort:group-1", "--judge", "judge:gpt-4o-judge"],
    "scores": ["--source", "gold"],
    "stability": ["--judge", "claude-judge"],
    "trait_scores": ["--source", "judge:gpt-4o-judge"],
    "verbosity": ["--source", "judge:gpt-4o-judge"],
}


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_rss_mb: float
    cpu_seconds: float  # user + system of the process (and its waited-for children): less noisy than wall time
    returncode: int
    stdout: str
    stderr: str

    def last_error(self) -> str:
        lines = self.stderr.strip().splitlines()
        return lines[-1] if lines else f"exit {self.returncode}"


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


CALIBRATION_STEPS = 30_000_000


def calibration_seconds(steps: int = CALIBRATION_STEPS, clock=time.perf_counter) -> float:
    """How long this machine takes for a pure-Python loop of ``steps`` additions, now: its speed,
    printed with the figures (the same code's figures were 1.3 to 2.2 times apart on two machines
    of one size; whether a figure meets its target depends on it, so a figure is read beside it).
    Timed at the start and at the end: a shared machine's speed drifts during a run."""
    started = clock()
    total = 0
    for step in range(steps):
        total += step
    return round(clock() - started, 2)


def measured(args: list[str], env: dict) -> Measured:
    """Run ``args`` from the project root; its wall time and peak RSS (``os.wait4``: the process
    and the children it waited for)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        return Measured(seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, proc.returncode,
                        out.read().decode(), err.read().decode())


class Figures:
    """Prints each figure with its target and the load average, and keeps them for the JSON file."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, name: str, value, unit: str, *, target: float | None = None, note: str = "") -> None:
        ok = None if target is None or not isinstance(value, int | float) else value <= target
        load = load_average()
        self.rows.append({"name": name, "value": value, "unit": unit, "target": target, "ok": ok, "note": note,
                          "load_average": load})
        verdict = "" if ok is None else ("ok" if ok else "MISS")
        target_text = f"(target <= {target:g} {unit})" if target is not None else ""
        print(f"{name:<44} {value!s:>9} {unit:<3} {target_text:<22} {verdict:<4} load {load}"
              f"{'  ' + note if note else ''}", flush=True)

    def misses(self) -> list[dict]:
        return [row for row in self.rows if row["ok"] is False]


def bench_env(database_url: str) -> dict:
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = env.get("BENCH_SETTINGS", "evalsite.settings.local")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["CELERY_TASK_ALWAYS_EAGER"] = "true"  # a page's cache miss computes in place, never queues
    env["DATABASE_URL"] = database_url
    return env


def manage(*args: str) -> list[str]:
    return [sys.executable, "manage.py", *args]


CACHE_CLEAR = manage("shell", "-c", "from django.core.cache import cache; cache.clear()")


def fallback_arguments(report) -> list[str]:
    """Arguments for a report ``REPORT_ARGUMENTS`` does not name: each required source a cohort
    where the report takes one (else a judge), a required choice its first choice, a required
    judge the first judge."""
    from grading.reports.registry import SourceField

    args, cohorts = [], iter(["cohort:group-1", "cohort:group-2"])
    for name, field in report.params().fields.items():
        if not field.required:
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(field, SourceField):
            args += [flag, next(cohorts, "judge:gpt-4o-judge") if "cohort" in field.kinds else "judge:gpt-4o-judge"]
        elif getattr(field, "choices", None):
            args += [flag, str(next(iter(field.choices)))]
        else:
            args += [flag, "gpt-4o-judge"]
    return args


def bench_reports(slug: str, env: dict, figures: Figures, only: list[str] | None) -> None:
    """Every report command of the registry, cold (process start, cache emptied) and warm."""
    import django

    os.environ.update({k: env[k] for k in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL")})
    django.setup()
    from grading.reports.registry import computed_reports

    for report in computed_reports():
        if only and report.key not in only:
            continue
        args = REPORT_ARGUMENTS.get(report.key)
        note = "" if args is not None else "arguments guessed (not in REPORT_ARGUMENTS)"
        args = fallback_arguments(report) if args is None else args
        subprocess.run(CACHE_CLEAR, cwd=ROOT, env=env, check=True, capture_output=True)
        run = measured(manage(report.key, "--project", slug, *args, "--json"), env)
        if run.returncode != 0:  # e.g. a report the study's data cannot give (no traits): no figure
            figures.add(f"report {report.key}: first computation", "n/a", "s", target=REPORT_SECONDS,
                        note=f"{round(run.seconds, 2)} s to: {run.last_error()}")
            continue
        figures.add(f"report {report.key}: first computation", round(run.seconds, 2), "s", target=REPORT_SECONDS,
                    note=f"CPU {run.cpu_seconds:.1f} s{'; ' + note if note else ''}")
        figures.add(f"report {report.key}: peak RSS", round(run.peak_rss_mb), "MB", target=REPORT_RSS_MB)
        if report.cached:
            warm = measured(manage(report.key, "--project", slug, *args, "--json"), env)
            figures.add(f"report {report.key}: cached, from process start", round(warm.seconds, 2), "s")


def bench_pages_cached(slug: str, database_url: str, figures: Figures, pages: list[str]) -> None:
    from bench.reports import bench_pages

    result = bench_pages(slug, database_url=database_url, only=pages or None)
    for page, row in result["pages"].items():
        figures.add(f"page {page}: compute (in process)", row["compute_seconds"], "s", target=REPORT_SECONDS,
                    note=f"error: {row['error']}" if row.get("error") else "the page's default comparisons, as a worker "
                                                                           "computes them (its libraries "
                                                                           "loaded when it started)")
        figures.add(f"page {page}: cached render", row["render_seconds"], "s", target=PAGE_SECONDS)


def bench_queue_after_import(slug: str, database_url: str, figures: Figures) -> None:
    from bench.adjudication import bench_queue_after_import

    queue = bench_queue_after_import(slug, database_url=database_url)
    figures.add("adjudication queue page after the import", queue["seconds"], "s", target=QUEUE_SECONDS,
                note=f"{queue['n_items']} items shown; the counts the import made as it ended, read; "
                     f"the first look, with the code loading in a fresh process: {queue['first_seconds']} s")


def bench_adjudication(slug: str, database_url: str, figures: Figures) -> None:
    from bench.adjudication import bench_item_page, bench_queue

    queue = bench_queue(slug, database_url=database_url)
    figures.add("adjudication queue page, nothing counted yet", round(queue["counting_page_ms"] / 1000, 3), "s",
                target=QUEUE_SECONDS, note="after a change of rubric or cohorts: answers at once and has a worker "
                                           "count the whole project (next line)")
    figures.add("adjudication queue, the whole count", queue["seconds"], "s",
                note=f"{queue['n_items']} items of {queue['n_responses']} responses; cache emptied; in process; made "
                     "by an import as it ends (in its time above), by a worker after a change of rubric or cohorts")
    figures.add("adjudication queue after an adjudication", queue["warm_seconds"], "s", target=QUEUE_SECONDS,
                note="the cohorts' decisions from the cache, the adjudications read anew")
    figures.add("adjudication queue after labels changed", queue["changed_seconds"], "s", target=QUEUE_SECONDS,
                note=f"{queue['n_changed_labels']} labels of one response changed: that response counted again")
    figures.add("adjudication queue after an assignment made", queue["assigned_seconds"], "s", target=QUEUE_SECONDS,
                note="a response assigned to a new annotator: that response counted again")
    figures.add("adjudication_queue command from process start", queue["command_seconds"], "s")
    page = bench_item_page(slug, database_url=database_url)
    figures.add("adjudication page, median", page["median_ms"], "ms", target=ADJUDICATION_PAGE_MS,
                note=f"max {page['max_ms']} ms; {page['criteria']} criteria, {page['judges']} judges")


def _annotators_load(database_url: str, *busy: str) -> dict | str:
    """``bench.load_labels`` at one click a second for 50 annotators (``busy``: its ``--busy-*``
    options): its figures, or why it gave none."""
    run = subprocess.run([sys.executable, "-m", "bench.load_labels", "--json", "--think-ms", "1000", *busy],
                         cwd=ROOT, env=bench_env(database_url), capture_output=True, text=True)
    lines = run.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else (run.stderr.strip().splitlines() or ["?"])[-1]


def bench_annotators(slug: str, database_url: str, figures: Figures) -> None:
    """The annotators' saves while a report computes, then the same load with nothing else running:
    on a machine this size, what a report costs them and what the machine gives without it."""
    busy = _annotators_load(database_url, "--busy-database-url", database_url, "--busy-project", slug)
    if isinstance(busy, str):
        figures.add("annotator saves while a report computes: p95", "n/a", "ms", note=f"FAILED: {busy}")
    else:
        meanwhile = (f"{busy['busy_report']} computed {busy['busy_reports_completed']} time(s) meanwhile"
                     + (f", FAILED: {busy['busy_report_failures'][0]}" if busy["busy_report_failures"] else ""))
        figures.add("annotator saves while a report computes: p95", busy["p95_ms"], "ms", target=ANNOTATOR_P95_MS,
                    note=f"{busy['annotators']} annotators at 1 click/s, {busy['requests']} saves, p50 {busy['p50_ms']} / "
                         f"p99 {busy['p99_ms']} ms; {meanwhile}; lost / duplicated {busy['lost']} / {busy['duplicated']}")
    alone = _annotators_load(database_url)
    if isinstance(alone, str):
        figures.add("annotator saves, no report running: p95", "n/a", "ms", note=f"FAILED: {alone}")
    else:
        figures.add("annotator saves, no report running: p95", alone["p95_ms"], "ms", target=ANNOTATOR_P95_MS,
                    note=f"the same load alone: p50 {alone['p50_ms']} / p99 {alone['p99_ms']} ms; "
                         f"lost / duplicated {alone['lost']} / {alone['duplicated']}")


def bench_gold_export(slug: str, env: dict, figures: Figures) -> None:
    out = Path(tempfile.mkdtemp(prefix="evalsite-gold-"))
    try:
        run = measured(manage("export_gold", "--project", slug, "--out", str(out), "--json"), env)
        if run.returncode != 0:
            figures.add("gold export", round(run.seconds, 2), "s", target=EXPORT_SECONDS, note=f"FAILED: {run.last_error()}")
            return
        files = sorted(json.loads(run.stdout)["files"])
        counts = json.loads(run.stdout)["counts"]
        figures.add("gold export (export_gold command)", round(run.seconds, 2), "s", target=EXPORT_SECONDS,
                    note=f"CPU {run.cpu_seconds:.1f} s; {counts.get('gold.jsonl')} gold lines; files: {', '.join(files)}")
        figures.add("gold export: peak RSS", round(run.peak_rss_mb), "MB")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def full_bundle(out: Path, scale: float, seed: int, figures: Figures) -> Path:
    from bench.generate_bundle import full_cases, generate_full_bundle

    bundle = out / f"full-{full_cases(scale)}-seed{seed}"
    if not (bundle / "project.json").exists():  # project.json is written last: its presence means complete
        started = time.perf_counter()
        counts = generate_full_bundle(bundle, scale=scale, seed=seed)
        figures.add("generate bundle", round(time.perf_counter() - started, 1), "s", note=json.dumps(counts, sort_keys=True))
    return bundle


STEPS = ("import", "reports", "pages", "adjudication", "annotators", "export")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.full", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 2,500 cases (try 0.1 first)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT, help="where the bundle and the figures' JSON go")
    parser.add_argument("--database", default=os.environ.get("BENCH_DB_NAME") or PG_FULL_DB,
                        help="the throw-away PostgreSQL database's name (default: $BENCH_DB_NAME, else "
                             f"{PG_FULL_DB}); give each bench running at once on one server its own")
    parser.add_argument("--database-url", help="use this database instead of a throw-away PostgreSQL one")
    parser.add_argument("--keep", action="store_true", help="keep the throw-away database at the end")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, of {', '.join(STEPS)}")
    parser.add_argument("--reports", default="", help="only these report commands (comma-separated; default all)")
    parser.add_argument("--pages", default=",".join(DEFAULT_PAGES), help="report pages to compute and render from the "
                                                                         "cache (comma-separated page keys; 'all')")
    args = parser.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    if unknown := sorted(set(steps) - set(STEPS)):
        parser.error(f"unknown step {unknown[0]!r}; use {', '.join(STEPS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    figures = Figures()
    calibration = {"start": calibration_seconds()}
    print(f"bench.full: scale {args.scale}, load {load_average()}, {os.cpu_count()} cores, a pure-Python loop of "
          f"{CALIBRATION_STEPS:,} steps in {calibration['start']} s (the machine's speed: read the figures beside it)",
          flush=True)
    bundle = full_bundle(args.out, args.scale, args.seed, figures)
    slug = project_slug(bundle)
    database_url = args.database_url or postgres_url(args.database)
    if database_url is None:
        return 1
    env = bench_env(database_url)
    try:
        if args.database_url is None or "import" in steps:
            subprocess.run(manage("migrate", "-v", "0"), cwd=ROOT, env=env, check=True)
        if "import" in steps:
            run = measured(manage("import_bundle", str(bundle), "--json"), env)
            if run.returncode != 0:
                figures.add("import", round(run.seconds, 1), "s", note=f"FAILED: {run.last_error()}")
                return 1
            rows = sum(v for k, v in json.loads(run.stdout).items() if isinstance(v, int))
            figures.add("import (import_bundle command)", round(run.seconds, 1), "s", target=IMPORT_SECONDS,
                        note=f"{rows:,} rows, {rows / run.seconds:,.0f} rows/s; CPU {run.cpu_seconds:.1f} s "
                             "(the database server's not counted)")
            figures.add("import: peak RSS", round(run.peak_rss_mb), "MB", target=IMPORT_RSS_MB)
            bench_queue_after_import(slug, database_url, figures)
        if "reports" in steps:
            bench_reports(slug, env, figures, [r for r in args.reports.split(",") if r])
        if "pages" in steps and args.pages:
            bench_pages_cached(slug, database_url, figures, [] if args.pages == "all" else args.pages.split(","))
        if "adjudication" in steps:
            bench_adjudication(slug, database_url, figures)
        if "annotators" in steps:
            bench_annotators(slug, database_url, figures)
        if "export" in steps:
            bench_gold_export(slug, env, figures)
    finally:
        if args.database_url is None and not args.keep:
            postgres_drop(args.database)
    summary = args.out / f"{bundle.name}.json"
    rows = figures.rows
    if set(steps) != set(STEPS) and summary.exists():  # some steps only: the other steps' last figures stay
        named = {row["name"] for row in rows}
        rows = [row for row in json.loads(summary.read_text()).get("figures", []) if row["name"] not in named] + rows
    calibration["end"] = calibration_seconds()
    summary.write_text(json.dumps({"scale": args.scale, "bundle": str(bundle), "cores": os.cpu_count(),
                                   "calibration_seconds": calibration, "figures": rows}, indent=2) + "\n")
    misses = figures.misses()
    print(f"{len(misses)} figure(s) over target{': ' + ', '.join(m['name'] for m in misses) if misses else ''}; "
          f"the pure-Python loop in {calibration['start']} s at the start, {calibration['end']} s at the end; "
          f"written to {summary}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
