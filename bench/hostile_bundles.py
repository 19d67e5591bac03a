"""The hostile-bundle corpus at the real limits, and the importer's peak memory on it (issue 27,
points 4 and 5): ``python -m bench.hostile_bundles [--database-url URL]``.

Builds the corpus of ``tests.hostile_bundles`` sized for the limits the settings give (the
defaults: 1,000 zip entries, 16 MiB lines, 1 MiB of blank space and 10,000 blank lines a file,
8 GiB in all, declared or read), and the two bundles of the attack at full size: a zip of
2,000,000 empty entries (192 MB) and a one-line gigabyte (a sparse file). Each group is imported
in a process of its own, on a migrated database of its own (a fresh SQLite file unless
``--database-url`` names one; a refused import writes nothing, so the groups share it), which
reports whether every bundle was refused with the file, line and field expected, the seconds to
each refusal and the process's peak RSS (target < 300 MB). Prints one JSON object.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RSS_TARGET_MB = 300
ENTRIES = 2_000_000
GIGABYTE = 1024**3


def _corpus(folder: Path, limits: dict) -> dict[str, list[dict]]:
    """Write the bundles under ``folder``; {group: [{name, path, file, line, field, message}]}."""
    from tests.hostile_bundles import field_cases, limit_cases

    groups: dict[str, list[dict]] = {"corpus": []}
    for i, case in enumerate(field_cases() + limit_cases(limits)):
        path = case.build(folder / f"{i:03d}")
        groups["corpus"].append({"name": case.name, "path": str(path), "file": case.file, "line": case.line,
                                 "field": case.field, "message": case.message})
    groups["entries"] = [_entries_case(folder, limits)]
    groups["gigabyte line"] = [_gigabyte_line_case(folder)]
    return groups


def _entries_case(folder: Path, limits: dict) -> dict:
    from tests.hostile_bundles import empty_entries_zip

    target = empty_entries_zip(folder / "entries.zip", ENTRIES)
    return {"name": f"{ENTRIES:,} empty entries ({target.stat().st_size / 1e6:.0f} MB zip)", "path": str(target),
            "file": "entries.zip", "line": None, "field": None, "message": f"the zip holds {ENTRIES:,} entries"}


def _gigabyte_line_case(folder: Path) -> dict:
    """cases.jsonl of one 1 GiB line (sparse: only its head is written)."""
    from tests.hostile_bundles import base_parts, write_parts

    bundle = write_parts(folder / "gigabyte", base_parts())
    with open(bundle / "cases.jsonl", "wb") as out:
        out.write(b'{"case_id": "')
        out.truncate(GIGABYTE)
    return {"name": "a one-line gigabyte", "path": str(bundle), "file": "cases.jsonl", "line": 1, "field": None,
            "message": "line longer than"}


def child(manifest: Path) -> dict:
    """Import every bundle of a group (in this process); what each refusal named and the peak RSS."""
    import django

    django.setup()
    from grading.bundles import BundleError, bundle_import

    rss_start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    results = []
    for case in json.loads(manifest.read_text()):
        started = time.perf_counter()
        try:
            bundle_import(path=case["path"])
            named, ok = "accepted", False
        except BundleError as exc:
            named = str(exc)[:300]
            ok = (exc.file, exc.line, exc.field) == (case["file"], case["line"], case["field"]) and case["message"] in exc.message
        results.append({"name": case["name"], "refused_as_expected": ok, "seconds": round(time.perf_counter() - started, 3),
                        "error": named})
    return {"peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "rss_after_start_mb": round(rss_start), "results": results}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None, help="the database (default: a fresh SQLite file)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")
    if args.child:
        result = child(Path(args.child))
        print(json.dumps(result))
        return result
    import django

    django.setup()
    from django.conf import settings

    limits = {name: getattr(settings, name) for name in dir(settings) if name.startswith("EVALSITE_BUNDLE_MAX_")}
    with tempfile.TemporaryDirectory(prefix="hostile-bundles-") as work:
        work = Path(work)
        database = args.database_url or f"sqlite:///{work / 'hostile.sqlite3'}"
        env = {**os.environ, "DATABASE_URL": database}
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        started = time.perf_counter()
        groups = _corpus(work / "bundles", limits)
        build_seconds = time.perf_counter() - started
        figures = {"limits": limits, "database": database.split(":", 1)[0], "build_seconds": round(build_seconds, 1),
                   "rss_target_mb": RSS_TARGET_MB, "groups": {}}
        for group, cases in groups.items():
            manifest = work / f"{group.replace(' ', '-')}.json"
            manifest.write_text(json.dumps(cases))
            proc = subprocess.run([sys.executable, "-m", "bench.hostile_bundles", "--child", str(manifest)], cwd=ROOT,
                                  env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                figures["groups"][group] = {"failed": (proc.stderr.strip().splitlines() or ["?"])[-1]}
                continue
            figures["groups"][group] = json.loads(proc.stdout.strip().splitlines()[-1])
    figures["peak_rss_mb"] = max((g.get("peak_rss_mb", 0) for g in figures["groups"].values()), default=0)
    print(json.dumps(figures))
    return figures


def run_all(out_dir) -> list[tuple[str, object, str]]:
    """For ``make bench``: the corpus and the two full-size bundles, each group in a process of its own."""
    proc = subprocess.run([sys.executable, "-m", "bench.hostile_bundles"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        return [("[hostile bundles]", "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1], "")]
    f = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = []
    for group, g in f["groups"].items():
        if "failed" in g:
            rows.append((f"[hostile bundles] {group}", "FAILED: " + g["failed"], ""))
            continue
        refused = sum(r["refused_as_expected"] for r in g["results"])
        wrong = [r["name"] for r in g["results"] if not r["refused_as_expected"]]
        slowest = max(g["results"], key=lambda r: r["seconds"])
        rows.append((f"[hostile bundles] {group}: refused by file, line, field", f"{refused} of {len(g['results'])}",
                     f"peak RSS {g['peak_rss_mb']} MB (target < {f['rss_target_mb']}; {g['rss_after_start_mb']} MB at start); "
                     f"slowest {slowest['seconds']} s ({slowest['name']})" + (f"; NOT as expected: {wrong}" if wrong else "")))
    return rows


if __name__ == "__main__":
    main()
