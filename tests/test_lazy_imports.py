"""An import inside a function says why it is there (issue 23, point 4): the import contracts
count such imports like any other, so the only reason left for one is to keep a heavy library or
module off start-up, and its line (or the line above) says so with ``# lazy: <reason>``."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("annotation", "grading", "evalsite")


def unexplained(source: str, name: str) -> list[str]:
    """Each import inside a function of ``source`` without a ``# lazy:`` reason, as "name:line"."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Import, ast.ImportFrom)):
                here, above = lines[inner.lineno - 1], lines[inner.lineno - 2] if inner.lineno > 1 else ""
                if "# lazy:" not in here and not above.strip().startswith("# lazy:"):
                    found.append(f"{name}:{inner.lineno}")
    return sorted(set(found))


def test_every_import_inside_a_function_gives_its_reason():
    offending = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                offending += unexplained(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert offending == []


def test_the_scan_finds_an_unexplained_import():
    sample = '''
def a():
    import pandas  # lazy: pandas loads on first use
def b():
    # lazy: the same, said above
    from scipy import stats
def c():
    import json
'''
    assert unexplained(sample, "m") == ["m:8"]
