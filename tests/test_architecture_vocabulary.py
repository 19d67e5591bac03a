"""The decision vocabulary has one home (issue 23, point 3): the verdict names are written in
``annotation/vocabulary.py`` and nowhere else in the apps' code, and that module stays pure, so
``grading.metrics`` may import it (the one exception of the ``metrics-pure`` contract).

The scan reads every module of the apps for a string constant that is a verdict name. Left out:
migrations (history) and the vocabulary itself.
"""
import ast
from pathlib import Path

from annotation import vocabulary

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("annotation", "grading", "evalsite")
HOME = ROOT / "annotation" / "vocabulary.py"
NAMES = frozenset(vocabulary.VERDICTS)


def _modules() -> list[Path]:
    return sorted(
        path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts and path != HOME
    )


def verdict_names_in(path: Path) -> list[str]:
    """Each string constant in ``path`` that is a verdict name, as "file:line 'name'". A key looked
    up by subscript is a name of something else (``options["cannot_assess"]``, the argument of
    ``--cannot-assess``) and is not counted."""
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    tree = ast.parse(path.read_text(encoding="utf-8"))
    keys = {id(node.slice) for node in ast.walk(tree) if isinstance(node, ast.Subscript)}
    return [f"{where}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES
            and id(node) not in keys]


def test_the_scan_covers_the_apps():
    modules = _modules()
    assert ROOT / "annotation" / "models.py" in modules and ROOT / "grading" / "metrics" / "decisions" / "gold.py" in modules
    assert HOME not in modules


def test_verdict_names_are_written_only_in_the_vocabulary():
    offending = [hit for path in _modules() for hit in verdict_names_in(path)]
    assert offending == [], "use annotation.vocabulary's MET / NOT_MET / CANNOT_ASSESS / VERDICTS"


def test_the_scan_finds_a_second_definition(tmp_path):
    # The scanner must be able to fail: constants, a tuple of them, a comparison.
    sample = tmp_path / "sample.py"
    sample.write_text('MET = "met"\nVERDICTS = ("met", "not_met")\nok = v == "cannot_assess"\nword = "metric"\n'
                      'strategy = options["cannot_assess"]\n', encoding="utf-8")
    assert len(verdict_names_in(sample)) == 4


def test_the_vocabulary_imports_only_the_standard_library():
    """It is the bottom layer: Django or an app module here would break the metrics-pure contract."""
    tree = ast.parse(HOME.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {(node.module or "").split(".")[0] or "." for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"math"}, imported
