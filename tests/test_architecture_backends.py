"""Judge backends are asked, not named (issue 23, point 2): outside the registry package
(``grading/judges/backends/``) no code compares a judge's ``backend`` with a stored name, and no
query filters judges by one; templates neither. Code asks the judge's backend for a capability
(``judge.kind.votes_over_members``, ``backend_names(derived=True)``) instead.
"""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("annotation", "grading", "evalsite")
EXCLUDED = (Path("grading/judges/backends"), Path("grading/migrations"))
TEMPLATES_EXCLUDED = ()
BACKEND_CONSTANTS = {"OPENAI", "BASELINE", "REPLAY", "PANEL", "CALIBRATED"}  # Judge's stored names
QUERY_METHODS = {"filter", "exclude", "get", "get_or_create", "update_or_create", "count"}
TEMPLATE_COMPARISON = re.compile(r"\.backend\s*(==|!=|\bin\b)|(==|!=)\s*\S*\.backend\b")


def _is_backend(node: ast.AST) -> bool:
    """``x.backend`` or ``x["backend"]``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "backend"
    return (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
            and node.slice.value == "backend")


def _is_name(node: ast.AST) -> bool:
    """A stored backend name written out: a string, ``Judge.PANEL``, or a tuple / list / set of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Attribute):
        return node.attr in BACKEND_CONSTANTS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_is_name(e) for e in node.elts)
    return False


def comparisons_in(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_backend(s) for s in sides) and any(_is_name(s) for s in sides):
                found.append(f"{where}:{node.lineno} {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in QUERY_METHODS:
            for keyword in node.keywords:
                if keyword.arg in ("backend", "backend__in") and _is_name(keyword.value):
                    found.append(f"{where}:{node.lineno} {keyword.arg}={ast.unparse(keyword.value)}")
        elif isinstance(node, ast.Dict):  # {Judge.BASELINE: "baseline", ...}.get(judge.backend)
            if node.keys and all(k is not None and _is_name(k) and isinstance(k, ast.Attribute) for k in node.keys):
                found.append(f"{where}:{node.lineno} a dict keyed by backend names")
    return found


def python_files():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if not any(relative.is_relative_to(excluded) for excluded in EXCLUDED):
                yield path, relative


def test_no_backend_name_comparisons_outside_the_registry():
    offending = [hit for path, relative in python_files()
                 for hit in comparisons_in(path.read_text(encoding="utf-8"), str(relative))]
    assert offending == []


def test_no_template_compares_a_backend():
    offending = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        relative = path.relative_to(ROOT)
        if any(relative.is_relative_to(excluded) for excluded in TEMPLATES_EXCLUDED):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if TEMPLATE_COMPARISON.search(line):
                offending.append(f"{relative}:{number}")
    assert offending == []


def test_the_scan_finds_each_kind_of_comparison():
    # The scanner must be able to fail: every shape the issue found (44 of them in 15 files).
    sample = '''
if judge.backend == "panel": pass
if judge.backend != Judge.BASELINE: pass
if judge.backend in (Judge.REPLAY, Judge.CALIBRATED): pass
if spec["backend"] == Judge.OPENAI: pass
Judge.objects.exclude(backend="panel")
Judge.objects.filter(backend__in=(Judge.PANEL, Judge.CALIBRATED))
kind = {Judge.BASELINE: "baseline", Judge.PANEL: "panel"}.get(judge.backend, "judge")
'''
    assert len(comparisons_in(sample, "sample")) == 7
    allowed = '''
Judge(project=project, name=name, backend=Judge.BASELINE)
if judge.kind.votes_over_members: pass
Judge.objects.exclude(backend__in=backend_names(votes_over_members=True))
'''
    assert comparisons_in(allowed, "allowed") == []
    assert TEMPLATE_COMPARISON.search('{% if judge.backend == "baseline" %}')
    assert not TEMPLATE_COMPARISON.search("{% if badge.in_runs %}")
