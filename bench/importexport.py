"""Import and export timing at benchmark scale, in a fresh database of its own.

Run as ``python -m bench.importexport BUNDLE [--with-triggers]`` with DATABASE_URL naming the
database to use (SQLite file or PostgreSQL); prints one JSON object with the figures.
``bench.run`` starts it in a subprocess per database, so the peak-memory figure is this
process's alone. ``--with-triggers`` times the import alone as a PostgreSQL role that may not
set ``session_replication_role`` would run it (the per-row foreign-key triggers fire).
"""
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path


def main(bundle: str, *, with_triggers: bool = False) -> dict:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from annotation.models import Project
    from grading.bundles import bundle_import, gold_export

    if with_triggers:
        from evalsite import fastinsert

        fastinsert._replica_role_allowed = lambda cursor: False
    started = time.perf_counter()
    result = bundle_import(path=bundle)
    import_seconds = time.perf_counter() - started
    rows = sum(v for k, v in result.as_dict().items() if k != "project")
    if with_triggers:
        return {"database": connection.vendor, "rows": rows, "import_seconds": round(import_seconds, 3),
                "import_rows_per_second": round(rows / import_seconds), "foreign_key_triggers": True}

    started = time.perf_counter()
    again = bundle_import(path=bundle)
    reimport_seconds = time.perf_counter() - started

    out = Path(tempfile.mkdtemp(prefix="evalsite-export-"))
    started = time.perf_counter()
    exported = gold_export(project=Project.objects.get(slug=result.project), out_dir=out)
    export_seconds = time.perf_counter() - started
    exported_lines = sum(exported["counts"].values())
    return {
        "database": connection.vendor,
        "rows": rows,
        "import_seconds": round(import_seconds, 3),
        "import_rows_per_second": round(rows / import_seconds),
        "reimport_seconds": round(reimport_seconds, 3),
        "reimport_rows_written": sum(v for k, v in again.as_dict().items() if k != "project"),
        "export_seconds": round(export_seconds, 3),
        "export_lines": exported_lines,
        "export_lines_per_second": round(exported_lines / export_seconds),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], with_triggers="--with-triggers" in sys.argv[2:])))
