"""Benchmarks of the reports (issue 3, point 6), callable from ``bench/run.py``:

- ``bench_agreement``: ``manage.py agreement`` end to end (process start to JSON, cache
  emptied first, and again warm) against ``bench/bare_agreement.py`` on the bundle files;
  target: cold command within 2x of the bare script, with the same MF1 and kappa.
- ``bench_coverage``: ``manage.py coverage`` of a judge end to end over the 825,000
  judgments of ``--cases 2500``; target: within 10 s.
- ``bench_pages``: compute the five report pages, then render each from the cache;
  target: every page under 1 s once computed.

Each benchmark runs Django in a child process with the given ``DATABASE_URL`` (default:
the environment's), against a project already imported with ``manage.py import_bundle``.
CLI: ``python -m bench.reports --slug bench-250 --bundle DIR [--coverage-slug bench-2500]
[--database-url URL] [--coverage-database-url URL]``; prints one JSON object.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AGREEMENT_RATIO_TARGET = 2.0
COVERAGE_SECONDS_TARGET = 10.0
PAGE_SECONDS_TARGET = 1.0


def _env(database_url: str | None) -> dict:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["CELERY_TASK_ALWAYS_EAGER"] = "true"  # a cache miss computes in place, never queues
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


def _timed(args: list[str], env: dict) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip().splitlines()[-1:]}")
    return seconds, done.stdout


def _clear_cache(env: dict) -> None:
    code = "from django.core.cache import cache; cache.clear()"
    subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True, capture_output=True)


def bench_agreement(slug: str, bundle: str, *, a: str = "group-1", b: str = "group-2", database_url: str | None = None) -> dict:
    """Seconds of the bare script and of the command (cold and warm), their ratio and whether
    both give the same MF1 and kappa."""
    env = _env(database_url)
    bare_seconds, bare_out = _timed([sys.executable, "-m", "bench.bare_agreement", bundle, "--a", a, "--b", b], env)
    _clear_cache(env)
    command = [sys.executable, "manage.py", "agreement", "--project", slug, "--a", f"cohort:{a}", "--b", f"cohort:{b}", "--json"]
    cold_seconds, out = _timed(command, env)
    warm_seconds, _ = _timed(command, env)
    bare, ours = json.loads(bare_out), json.loads(out)
    same = all(abs(bare[k] - ours[k]) < 1e-12 for k in ("mf1", "cohen_kappa")) and bare["n_decisions"] == ours["n_decisions"]
    ratio = cold_seconds / bare_seconds
    return {
        "n_decisions": ours["n_decisions"], "mf1": ours["mf1"], "cohen_kappa": ours["cohen_kappa"], "same_as_bare": same,
        "bare_seconds": round(bare_seconds, 2), "command_cold_seconds": round(cold_seconds, 2),
        "command_warm_seconds": round(warm_seconds, 2), "ratio_cold_to_bare": round(ratio, 2),
        "target_ratio": AGREEMENT_RATIO_TARGET, "ok": same and ratio <= AGREEMENT_RATIO_TARGET,
    }


def bench_coverage(slug: str, *, source: str = "judge:gpt-4o-judge", database_url: str | None = None) -> dict:
    """Seconds of ``manage.py coverage`` with an empty cache, and warm."""
    env = _env(database_url)
    _clear_cache(env)
    command = [sys.executable, "manage.py", "coverage", "--project", slug, "--source", source, "--json"]
    cold_seconds, out = _timed(command, env)
    warm_seconds, _ = _timed(command, env)
    result = json.loads(out)
    return {
        "source": source, "k": result["k"], "n_responses": result["overall"]["n_responses"],
        "cacs": result["overall"]["cacs"], "cold_seconds": round(cold_seconds, 2), "warm_seconds": round(warm_seconds, 2),
        "target_seconds": COVERAGE_SECONDS_TARGET, "ok": cold_seconds <= COVERAGE_SECONDS_TARGET,
    }


INTERVAL_COMMANDS = (  # the report commands of the 250-case project, each timed without and with --ci
    ("agreement", "--a", "cohort:group-1", "--b", "cohort:group-2"),
    ("reliability_report", "--a", "cohort:group-1", "--b", "judge:gpt-4o-judge", "--by", "criterion"),
    ("pairwise_agreement", "--source", "cohort:group-1", "--grader", "judge:gpt-4o-judge"),
    ("reliability", "--source", "cohort:group-1"),
    ("cross_grader", "--a", "cohort:group-1", "--b", "judge:gpt-4o-judge"),
    ("verbosity", "--source", "judge:gpt-4o-judge"),
    ("coverage", "--source", "judge:gpt-4o-judge"),
    ("stability", "--judge", "gpt-4o-judge"),
)


def bench_intervals(slug: str, *, database_url: str | None = None) -> dict:
    """Seconds of each report command from process start to JSON, with an empty cache, without
    and with ``--ci`` (issue 14: bootstrap intervals, 2,000 resamples of the cases)."""
    env = _env(database_url)
    figures = {}
    for name, *options in INTERVAL_COMMANDS:
        command = [sys.executable, "manage.py", name, "--project", slug, *options, "--json"]
        _clear_cache(env)
        plain, _ = _timed(command, env)
        _clear_cache(env)
        with_ci, _ = _timed([*command, "--ci"], env)
        figures[name] = {"seconds": round(plain, 2), "ci_seconds": round(with_ci, 2)}
    return figures


def bench_pages(slug: str, *, database_url: str | None = None, only: list[str] | None = None) -> dict:
    """Compute seconds and cached render seconds of each report page (in a child process);
    ``only``: these page keys alone."""
    args = [sys.executable, "-m", "bench.reports", "--pages-in-process", "--slug", slug]
    if only:
        args += ["--pages", ",".join(only)]
    _, out = _timed(args, _env(database_url))
    return json.loads(out)


def _pages_in_process(slug: str, only: list[str] | None = None) -> dict:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.test import Client
    from django.urls import reverse

    from grading.reports.registry import pages as report_pages
    from grading.reports.registry import worker_preload
    from grading.reports.tasks import page_result
    from grading.sources import project_get

    worker_preload()  # what a worker has loaded when it starts, before it takes any report
    project = project_get(slug=slug)
    cache.clear()
    user, _ = get_user_model().objects.update_or_create(username="bench-researcher",
                                                        defaults={"is_staff": True, "is_superuser": True})
    client = Client(SERVER_NAME="localhost")
    client.force_login(user)
    pages = {}
    for page, report in report_pages():
        if only and page not in only:
            continue
        started = time.perf_counter()
        result = page_result(project=project, page=page, params=report.page.default_params())
        compute = time.perf_counter() - started
        url = reverse(f"report-{page}", args=[slug])
        started = time.perf_counter()
        response = client.get(url)
        render = time.perf_counter() - started
        if b'id="report"' not in response.content or b"Computing this report" in response.content:
            raise RuntimeError(f"{page}: the page did not read the computed result")
        pages[page] = {"compute_seconds": round(compute, 2), "render_seconds": round(render, 3),
                       "status": response.status_code, "bytes": len(response.content), "error": result.get("error")}
    worst = max(p["render_seconds"] for p in pages.values())
    return {"pages": pages, "max_render_seconds": worst, "target_seconds": PAGE_SECONDS_TARGET,
            "ok": worst < PAGE_SECONDS_TARGET and all(p["status"] == 200 for p in pages.values())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reports", description=__doc__.split("\n\n")[0])
    parser.add_argument("--slug", required=True, help="imported bench project for agreement and pages")
    parser.add_argument("--bundle", help="its bundle directory (for the bare script)")
    parser.add_argument("--database-url")
    parser.add_argument("--coverage-slug", help="project with 825,000 judgments (--cases 2500)")
    parser.add_argument("--coverage-database-url")
    parser.add_argument("--coverage-source", default="judge:gpt-4o-judge")
    parser.add_argument("--pages-in-process", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--pages", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pages_in_process:
        print(json.dumps(_pages_in_process(args.slug, [p for p in args.pages.split(",") if p]), sort_keys=True))
        return 0
    figures = {}
    if args.bundle:
        figures["agreement"] = bench_agreement(args.slug, args.bundle, database_url=args.database_url)
    if args.coverage_slug:
        figures["coverage"] = bench_coverage(args.coverage_slug, source=args.coverage_source,
                                             database_url=args.coverage_database_url or args.database_url)
    figures["pages"] = bench_pages(args.slug, database_url=args.database_url)
    print(json.dumps(figures, sort_keys=True, indent=2))
    return 0 if all(f.get("ok") for f in figures.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
