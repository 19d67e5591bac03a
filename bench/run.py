"""``make bench``: the scale figures of the issues, one line per figure.

1. Generates the benchmark bundle (250 cases × 30 criteria × 11 models, two cohorts,
   one judge; deterministic seed) under bench/out/ unless it is there already.
2. Import / re-import / export on SQLite (a fresh file) and on PostgreSQL (a fresh database
   on 127.0.0.1, skipped with a note when none answers), each in its own process.
3. Judge calls: 2,000 at concurrency 16, 10,000 at 32, and a 200,000-call run's peak RSS.
4. Adjudication (issue 10): the queue and the adjudication page of the 250-case project, the
   gold export of the 2,500-case one, on SQLite and on PostgreSQL.
5. Every other benchmark module that defines ``run_all(out_dir) -> list[(name, value, unit)]``
   (``bench.formats``: the HealthBench meta-evaluation import and gold as Parquet, issue 24;
   ``bench.judge_workers``: judge runs over 1, 2 and 4 worker processes and a shared rate limit, issue 26).
"""
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.services import PG_ADMIN_URL, drop_database, fresh_database

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
PG_BENCH_DB = "evalsite_bench"
OTHER_BENCHES = ("bench.load_labels", "bench.job_faults", "bench.hostile_bundles", "bench.formats", "bench.judge_workers")


def say(name: str, value, unit: str = "") -> None:
    print(f"{name:<48} {value}{(' ' + unit) if unit else ''}", flush=True)


def bench_bundle(n_cases: int = 250) -> Path:
    bundle = OUT / f"bundle-{n_cases}"
    if not (bundle / "project.json").exists():
        from bench.generate_bundle import generate_bench_bundle

        started = time.perf_counter()
        counts = generate_bench_bundle(bundle, n_cases=n_cases, n_models=11, seed=1)
        say(f"generate bench bundle ({n_cases} cases)", f"{time.perf_counter() - started:.2f}", "s")
        say("  bundle rows", json.dumps(counts))
    return bundle


def project_slug(bundle: Path) -> str:
    return json.loads((bundle / "project.json").read_text())["slug"]


def run_reports(bundle: Path, database_url: str, label: str) -> None:
    """Agreement vs the bare script, and report pages, on the imported 250-case project."""
    from bench.reports import bench_agreement, bench_pages

    slug = project_slug(bundle)
    a = bench_agreement(slug, str(bundle), database_url=database_url)
    say(f"[{label}] agreement command, cold cache", a["command_cold_seconds"], "s (process start to JSON)")
    say(f"[{label}] bare json+scikit-learn script", a["bare_seconds"], "s")
    say(f"[{label}] agreement ratio to bare", a["ratio_cold_to_bare"], f"(target <= 2; same MF1/kappa: {a['same_as_bare']})")
    say(f"[{label}] agreement command, warm cache", a["command_warm_seconds"], "s")
    p = bench_pages(slug, database_url=database_url)
    for page, figures in p["pages"].items():
        say(f"[{label}] report page {page}", figures["render_seconds"], f"s render once computed (compute {figures['compute_seconds']} s)")
    say(f"[{label}] slowest report page render", p["max_render_seconds"], "s (target < 1)")
    from bench.reports import bench_intervals

    for command, figures in bench_intervals(slug, database_url=database_url).items():
        say(f"[{label}] {command} --ci", figures["ci_seconds"], f"s from process start, cold (without --ci {figures['seconds']} s)")


def run_adjudication(slug: str, database_url: str, label: str) -> None:
    """The adjudication queue and page of the 250-case project (issue 10)."""
    from bench.adjudication import bench_item_page, bench_queue

    q = bench_queue(slug, database_url=database_url)
    say(f"[{label}] adjudication queue, {q['n_responses']} responses", q["seconds"],
        f"s ({q['n_items']} items; target <= {q['target_seconds']:g}; command from process start {q['command_seconds']} s)")
    say(f"[{label}] adjudication queue page, nothing counted yet (the count queued for a worker)", q["counting_page_ms"],
        "ms")
    say(f"[{label}] adjudication queue after {q['n_changed_labels']} labels of one response changed", q["changed_seconds"],
        f"s (target <= {q['target_seconds']:g})")
    p = bench_item_page(slug, database_url=database_url)
    say(f"[{label}] adjudication page, {p['criteria']} criteria, {p['judges']} judges", p["median_ms"],
        f"ms median of {p['renders']} (max {p['max_ms']} ms; target <= {p['target_ms']:g})")


def run_gold_export(slug: str, database_url: str, label: str) -> None:
    """The gold export job of the 2,500-case project (825,000 gold decisions)."""
    from bench.adjudication import bench_gold_export

    e = bench_gold_export(slug, database_url=database_url)
    say(f"[{label}] gold export job, {e['gold_decisions']} decisions", e["seconds"],
        f"s, peak RSS {e['peak_rss_mb']} MB + forked {e['child_peak_rss_mb']} MB ({e['target']}; {e['processes']} process(es))")


def run_coverage(database_url: str, label: str) -> None:
    """``coverage`` over 825,000 judge decisions (2,500 cases × 30 × 11)."""
    from bench.reports import bench_coverage

    bundle = bench_bundle(2500)
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "evalsite.settings.local"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "manage.py", "import_bundle", str(bundle)], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    say(f"[{label}] import 2,500-case bundle (2.58M rows)", f"{time.perf_counter() - started:.1f}", "s")
    c = bench_coverage(project_slug(bundle), database_url=database_url)
    say(f"[{label}] coverage of 825,000 judgments, cold", c["cold_seconds"], "s (target <= 10)")
    say(f"[{label}] coverage, warm cache", c["warm_seconds"], "s")
    run_gold_export(project_slug(bundle), database_url, label)


def run_import_export(bundle: Path, database_url: str, label: str) -> None:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "evalsite.settings.local"}
    proc = subprocess.run([sys.executable, "-m", "bench.importexport", str(bundle)], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        say(f"[{label}] import/export", "FAILED: " + proc.stderr.strip().splitlines()[-1])
        return
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    say(f"[{label}] import rows", figures["rows"])
    say(f"[{label}] import", figures["import_seconds"], "s")
    say(f"[{label}] import throughput", figures["import_rows_per_second"], "rows/s (target >= 50000 on PostgreSQL)")
    say(f"[{label}] re-import (idempotent)", figures["reimport_seconds"], f"s, {figures['reimport_rows_written']} rows written")
    say(f"[{label}] export incl. gold", figures["export_seconds"], f"s, {figures['export_lines']} lines")
    say(f"[{label}] export throughput", figures["export_lines_per_second"], "lines/s")
    say(f"[{label}] peak memory (import+export process)", figures["peak_rss_mb"], "MB (target < 1024)")


def run_import_with_triggers(bundle: Path, database_url: str) -> None:
    """The import as an application role without the replica-role privilege would run it."""
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "evalsite.settings.local"}
    proc = subprocess.run([sys.executable, "-m", "bench.importexport", str(bundle), "--with-triggers"], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        say("[postgresql] import as a role without the privilege", "FAILED: " + proc.stderr.strip().splitlines()[-1])
        return
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    say("[postgresql] import as a role without the privilege", figures["import_rows_per_second"],
        f"rows/s, {figures['import_seconds']} s (foreign-key triggers fire; README, Deployment)")


def run_judge_scale() -> None:
    """Issue 11: 10,000 calls at 50 ms and concurrency 32 timed as the whole ``run_judge``
    command, start-up measured separately (target: within 1.15x of ideal plus start-up); the
    take-over of a SIGKILLed worker's run (PostgreSQL + Redis, real workers); the runner's peak
    RSS over a 200,000-call run (target < 400 MB; several minutes on 2 cores)."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    for label, module, args in (
        ("10,000 calls at 50 ms, concurrency 32", "bench.judge_calls", ["--calls", "10000", "--concurrency", "32", "--command"]),
        ("worker killed mid-run", "bench.judge_takeover", []),
        ("200,000-call run (0 ms), concurrency 32", "bench.judge_calls",
         ["--calls", "200000", "--latency", "0", "--concurrency", "32", "--plan-only"]),
    ):
        proc = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                              env=env if module == "bench.judge_calls" else os.environ.copy())
        if proc.returncode != 0:
            say(f"[judges] {label}", "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1])
            continue
        r = json.loads(proc.stdout[proc.stdout.index("{"):])
        if module == "bench.judge_takeover":
            if r.get("skipped"):
                say(f"[judges] {label}", "skipped: " + r["skipped"])
                continue
            say(f"[judges] {label}: taken over after", r["takeover_s"],
                f"s (lease {r['lease_s']} s, sweep every {r['sweep_s']} s; target <= lease + 15 = {r['target_s']} s), "
                f"finished {r['finish_s']} s after the kill; judgments {r['judgments']} of {r['expected']}, "
                f"duplicates {r['duplicate_judgments']}, calls made twice {r['calls_repeated']} "
                f"(concurrency {r['concurrency']}); load {r['load_average']}")
        elif "--plan-only" in args:
            say(f"[judges] {label}: peak RSS", r["peak_rss_mb"], f"MB (target < {r['rss_target_mb']}; {r['elapsed_s']} s)")
        else:
            say(f"[judges] {label}: run_judge command", r["command_s"],
                f"s (start-up {r['startup_s']} s measured apart; ideal {r['ideal_s']} s; "
                f"(command - start-up) / ideal = x{r['ratio_to_ideal']}, target <= 1.15)")


def postgres_url(name: str = PG_BENCH_DB) -> str | None:
    """The URL of a fresh (dropped and created again) PostgreSQL database ``name``; None, with a
    note, when no server answers."""
    url = fresh_database(name)
    if url is None:
        say("[postgresql] skipped", f"no server at {PG_ADMIN_URL.rsplit('/', 1)[0]}")
    return url


def postgres_drop(name: str) -> None:
    """Drop the bench database ``name`` (disk is shared)."""
    drop_database(name)


def run_judge_calls() -> None:
    """2,000 judge calls against a loopback Chat Completions server (50 ms, concurrency 16)."""
    proc = subprocess.run([sys.executable, "-m", "bench.judge_calls"], cwd=ROOT, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "DATABASE_URL"})
    if proc.returncode != 0:
        say("[judges] 2000 calls", "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1])
        return
    r = json.loads(proc.stdout[proc.stdout.index("{"):])
    say("[judges] 2000 calls at 50 ms, concurrency 16", r["elapsed_s"],
        f"s (ideal {r['ideal_s']} s, x{r['ratio_to_ideal']}, target <= 1.3)")
    say("[judges] max calls in flight", r["max_in_flight"])
    say("[judges] bare-HTTP floor, same calls", r["bare_http_floor_s"], "s")
    rerun = r["cached_rerun"]
    say("[judges] cached re-run: server requests", rerun["server_requests"],
        f"({rerun['cache_hits']} cache hits, {rerun['elapsed_s']} s)")
    say("[judges] load average during run", r["load_average_1m"])


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    bundle = bench_bundle()
    sqlite_file = OUT / "bench.sqlite3"
    sqlite_file.unlink(missing_ok=True)
    run_import_export(bundle, f"sqlite:///{sqlite_file}", "sqlite")
    run_reports(bundle, f"sqlite:///{sqlite_file}", "sqlite")
    run_adjudication(project_slug(bundle), f"sqlite:///{sqlite_file}", "sqlite")
    pg = postgres_url()
    if pg:
        run_import_export(bundle, pg, "postgresql")
        run_reports(bundle, pg, "postgresql")
        run_adjudication(project_slug(bundle), pg, "postgresql")
        pg = postgres_url()  # a fresh database again
        if pg:
            run_import_with_triggers(bundle, pg)
    big_sqlite = OUT / "bench-2500.sqlite3"
    big_sqlite.unlink(missing_ok=True)
    run_coverage(f"sqlite:///{big_sqlite}", "sqlite")
    pg = postgres_url()
    if pg:
        run_coverage(pg, "postgresql")
    run_judge_calls()
    run_judge_scale()
    for name in OTHER_BENCHES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            say(f"[{name}]", "not present")
            continue
        if hasattr(module, "run_all"):
            for figure in module.run_all(OUT):
                say(*figure)


if __name__ == "__main__":
    main()
