"""Benchmarks of the data formats (issue 24), for ``make bench`` (``run_all``) or on their own:

- ``meta``: a HealthBench meta-evaluation-shaped JSONL (``generate_meta``: seeded; 30,000 lines over
  5,000 conversations of one to four turns, each answered by two completions that repeat on every
  line of their criteria, three of the 34 consensus criteria per conversation with their cluster
  category, one to four of 20 physicians' binary labels per line) imported with
  ``manage.py import_bundle PATH --format healthbench-meta --project X --json``, timed from process
  start to its JSON answer, into a freshly migrated database. Target ≤ 10 s on PostgreSQL.
- ``parquet``: the gold export of the 2,500-case bench project (825,000 gold decisions;
  ``bench.run.bench_bundle(2500)`` imported first) by ``grading.bundles.gold_export``, with the step
  that writes gold.parquet and gold.xlsx (``_Export._gold_tables``) timed apart and split into its
  Parquet part and its XLSX part (the time spent inside the XLSX writer's calls; the rest of the step
  is reading the kept gold rows and writing Parquet). Target ≤ 10 s for the Parquet part.

Each part runs in a process of its own against ``DATABASE_URL``; ``run_all`` makes the PostgreSQL
database ``BENCH_FORMATS_PG_DB`` (default ``evalsite_bench_formats``) afresh for each part. CLI:
``python -m bench.formats generate-meta OUT`` | ``meta PATH`` | ``parquet BUNDLE``; prints one
JSON object.
"""
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench.services import fresh_database

ROOT = Path(__file__).resolve().parent.parent
META_LINES = 30_000
META_CONVERSATIONS = 5_000
META_PHYSICIANS = 20
META_SECONDS_TARGET = 10.0
PARQUET_SECONDS_TARGET = 10.0
PG_DB = os.environ.get("BENCH_FORMATS_PG_DB", "evalsite_bench_formats")

CLUSTERS = ("emergency_referrals", "context_seeking", "global_health", "health_data_tasks", "communication",
            "hedging", "complex_responses")
WORDS = ("patient", "pain", "dose", "fever", "doctor", "hospital", "symptom", "medication", "week", "child", "blood",
         "pressure", "advice", "treatment", "risk", "history", "allergy", "infection", "test", "result", "sleep",
         "breathing", "chest", "headache", "water", "rest", "daily", "severe", "mild", "sudden", "call", "emergency",
         "should", "could", "would", "the", "a", "and", "or", "if", "with", "for", "after", "before", "about", "your")


def _criteria() -> list[tuple[str, str]]:
    """34 consensus criteria (text, category), as in HealthBench's meta-evaluation."""
    out = []
    for i in range(34):
        cluster = CLUSTERS[i % len(CLUSTERS)]
        out.append((f"Criterion {i + 1} ({cluster.replace('_', ' ')}): the response {WORDS[i]} and {WORDS[-i - 1]} "
                    f"appropriately for the user's situation, without unnecessary hedging.",
                    f"cluster:{cluster}_{'emergent' if i % 2 else 'conditionally_emergent'}"))
    return out


def _text(rng: random.Random, n_words: int) -> str:
    words = rng.choices(WORDS, k=n_words)
    return " ".join(words).capitalize() + "."


def generate_meta(path: Path, *, n_lines: int = META_LINES, n_conversations: int = META_CONVERSATIONS,
                  n_physicians: int = META_PHYSICIANS, seed: int = 24) -> dict:
    """Write the meta-evaluation-shaped JSONL; returns its counts."""
    rng = random.Random(seed)
    criteria = _criteria()
    physicians = [hashlib.sha256(f"physician-{i}".encode()).hexdigest()[:20] for i in range(n_physicians)]
    per_conversation = n_lines // n_conversations  # 6: two completions x three criteria
    lines, labels = 0, 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for c in range(n_conversations):
            turns = rng.choice((1, 1, 1, 3, 3, 5))
            prompt = [{"role": "user" if t % 2 == 0 else "assistant", "content": _text(rng, rng.randint(20, 120))}
                      for t in range(turns)]
            completions = [_text(rng, rng.randint(120, 400)) for _ in range(2)]
            chosen = rng.sample(criteria, 3)
            for k in range(per_conversation):
                completion = completions[k // 3]
                text, category = chosen[k % 3]
                raters = rng.sample(physicians, rng.choice((1, 2, 2, 3, 3, 4)))
                truth = rng.random() < 0.55
                row = {"prompt": prompt, "completion": completion, "rubric": text, "category": category,
                       "binary_labels": [truth if rng.random() < 0.8 else not truth for _ in raters],
                       "anonymized_physician_ids": raters,
                       "prompt_id": f"p{c:05d}", "completion_id": f"p{c:05d}-{k // 3}"}
                out.write(json.dumps(row) + "\n")
                lines += 1
                labels += len(raters)
    return {"lines": lines, "conversations": n_conversations, "completions": 2 * n_conversations,
            "labels": labels, "bytes": path.stat().st_size}


# --- the parts, each in its own process ------------------------------------------------------

def _migrated(env: dict) -> None:
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)


def _meta(path: str) -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")}
    _migrated(env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "manage.py", "import_bundle", path, "--format", "healthbench-meta",
                           "--project", "meta-bench", "--json"], cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1:])
    counts = json.loads(done.stdout)
    started = time.perf_counter()
    subprocess.run([sys.executable, "manage.py", "check", "-v", "0"], cwd=ROOT, env=env, check=True)
    startup = time.perf_counter() - started
    return {"seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "django_startup_seconds": round(startup, 2),
            "counts": counts, "load_average": load_average(),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
            "target_seconds": META_SECONDS_TARGET, "ok": seconds <= META_SECONDS_TARGET}


def _parquet(bundle: str) -> dict:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")
    import django

    django.setup()
    import tempfile

    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from annotation.models import Project
    from evalsite.spreadsheet import XlsxWriter
    from grading.bundles import bundle_import, exporter

    started = time.perf_counter()
    slug = bundle_import(path=bundle).project
    import_seconds = time.perf_counter() - started

    spent = {"gold_tables": 0.0, "xlsx": 0.0, "gold_tables_cpu": 0.0, "xlsx_cpu": 0.0}

    def timed(function, key):
        def wrapper(*args, **kwargs):
            begun, begun_cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[key] += time.perf_counter() - begun
                spent[f"{key}_cpu"] += time.process_time() - begun_cpu
        return wrapper

    exporter._Export._gold_tables = timed(exporter._Export._gold_tables, "gold_tables")
    for name in ("__init__", "sheet", "rows", "close"):
        setattr(XlsxWriter, name, timed(getattr(XlsxWriter, name), "xlsx"))
    out = Path(tempfile.mkdtemp(prefix="evalsite-gold-"))
    started = time.perf_counter()
    result = exporter.gold_export(project=Project.objects.get(slug=slug), out_dir=out)
    export_seconds = time.perf_counter() - started
    parquet_seconds = spent["gold_tables"] - spent["xlsx"]
    sizes = {name: round((out / name).stat().st_size / 2**20, 1) for name in ("gold.parquet", "gold.xlsx", "gold.csv")
             if (out / name).exists()}
    return {"import_seconds": round(import_seconds, 1), "export_seconds": round(export_seconds, 1),
            "gold_decisions": result["counts"].get("gold.parquet"), "gold_tables_seconds": round(spent["gold_tables"], 2),
            "parquet_seconds": round(parquet_seconds, 2), "xlsx_seconds": round(spent["xlsx"], 2), "size_mb": sizes,
            "parquet_cpu_seconds": round(spent["gold_tables_cpu"] - spent["xlsx_cpu"], 2),
            "xlsx_cpu_seconds": round(spent["xlsx_cpu"], 2), "load_average": load_average(),
            "processes": exporter.export_processes(Project.objects.get(slug=slug).responses.count()),
            "target_seconds": PARQUET_SECONDS_TARGET, "ok": parquet_seconds <= PARQUET_SECONDS_TARGET}


# --- make bench ------------------------------------------------------------------------------

def _child(part: str, argument: str, database_url: str) -> dict:
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")
    done = subprocess.run([sys.executable, "-m", "bench.formats", part, argument], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"bench.formats {part} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_all(out_dir) -> list[tuple[str, object, str]]:
    from bench.run import bench_bundle

    rows = []
    meta = Path(out_dir) / "healthbench_meta_30000.jsonl"
    if not meta.exists():
        started = time.perf_counter()
        counts = generate_meta(meta)
        rows.append(("[formats] generate meta-evaluation JSONL", round(time.perf_counter() - started, 1),
                     f"s ({json.dumps(counts)})"))
    database = fresh_database(PG_DB)
    if database is None:
        return [*rows, ("[formats] skipped", "no PostgreSQL server", "")]
    try:
        m = _child("meta", str(meta), database)
        rows.append((f"[postgresql] import_bundle healthbench-meta, {m['counts']['labels']:,} labels", m["seconds"],
                     f"s from process start, CPU {m['cpu_seconds']} s (Django start-up {m['django_startup_seconds']} s; "
                     f"{m['counts']['cases']:,} cases, {m['counts']['responses']:,} responses, {m['counts']['criteria']} "
                     f"criteria; target <= {META_SECONDS_TARGET:g}; load {m['load_average']})"))
    except RuntimeError as exc:
        rows.append(("[postgresql] import_bundle healthbench-meta", f"FAILED: {exc}", ""))
    database = fresh_database(PG_DB)
    try:
        p = _child("parquet", str(bench_bundle(2500)), database)
        rows.append((f"[postgresql] gold.parquet, {p['gold_decisions']:,} decisions", p["parquet_seconds"],
                     f"s, CPU {p['parquet_cpu_seconds']} s (target <= {PARQUET_SECONDS_TARGET:g}; "
                     f"{p['size_mb'].get('gold.parquet')} MB; load {p['load_average']})"))
        rows.append(("[postgresql] gold.xlsx, same rows", p["xlsx_seconds"],
                     f"s, CPU {p['xlsx_cpu_seconds']} s ({p['size_mb'].get('gold.xlsx')} MB)"))
        rows.append(("[postgresql] whole gold export", p["export_seconds"],
                     f"s (gold.parquet and gold.xlsx step {p['gold_tables_seconds']} s)"))
    except RuntimeError as exc:
        rows.append(("[postgresql] gold.parquet", f"FAILED: {exc}", ""))
    return rows


def main(argv: list[str]) -> int:
    part, argument = argv[0], argv[1]
    if part == "generate-meta":
        result = generate_meta(Path(argument))
    else:
        result = {"meta": _meta, "parquet": _parquet}[part](argument)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
