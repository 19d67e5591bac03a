"""Layering rules that import-linter cannot see: selector modules read and never write.

import-linter (``.importlinter``, run by ``make test``) keeps selectors from importing the write
modules; this test reads the selectors' source and fails on an ORM write call or a write
statement in SQL text, so a write cannot creep into a selector through the models either.
"""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SELECTOR_MODULES = [
    *sorted((ROOT / "annotation" / "selectors").glob("*.py")),
    ROOT / "grading" / "judges" / "selectors.py",
    *sorted((ROOT / "grading" / "selectors").glob("*.py")),
]
ORM_WRITES = {"save", "create", "bulk_create", "bulk_update", "get_or_create", "update_or_create", "delete"}
SQL_WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|TRUNCATE)\b", re.IGNORECASE)


def writes_in(path: Path) -> list[str]:
    found = []
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            # ``.update(`` of a queryset writes; of a dict it does not: only querysets are
            # reached through ``objects`` or ``filter`` chains, so look at the receiver.
            if name in ORM_WRITES or (name == "update" and "objects" in ast.unparse(node.func.value)):
                found.append(f"{where}:{node.lineno} .{name}(")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_WRITE.match(node.value):
            found.append(f"{where}:{node.lineno} SQL {node.value.split()[0]}")
    return found


def test_selector_modules_exist():
    assert all(path.exists() for path in SELECTOR_MODULES) and len(SELECTOR_MODULES) >= 4


def test_selectors_never_write():
    offending = [hit for path in SELECTOR_MODULES for hit in writes_in(path)]
    assert offending == []


def test_the_scan_finds_a_write(tmp_path):
    # The scanner must be able to fail: a module that saves and one that runs an UPDATE.
    sample = tmp_path / "sample.py"
    sample.write_text('def f(x, cursor):\n    x.save()\n    cursor.execute("UPDATE t SET a = 1")\n', encoding="utf-8")
    assert len(writes_in(sample)) == 2


def test_starting_django_loads_no_data_science_stack():
    """Workers and web processes start without pandas, scipy or scikit-learn (about 130 MB and a
    second of imports): the decision rules and reports load them on first use. Loading every URL
    (what the first request and every management command's checks do) loads none of them either."""
    import os
    import subprocess
    import sys

    code = ("import sys, django; django.setup(); from django.urls import get_resolver; get_resolver().url_patterns; "
            "print(sorted(m for m in ('pandas', 'scipy', 'sklearn', 'krippendorff') if m in sys.modules))")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalsite.settings.test"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
