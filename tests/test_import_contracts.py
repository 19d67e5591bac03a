"""The import contracts bite (issue 23, point 4): ``make lint`` runs import-linter over
``.importlinter``; on a copy of the apps, an import cycle added between two sibling modules, even
one written inside a function (how the old cycles hid), or an import that goes up a layer, breaks
the build, and the tree as it is keeps every contract."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("annotation", "grading", "evalsite")


@pytest.fixture
def tree(tmp_path) -> Path:
    """A copy of the apps and the contracts, to break on purpose."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def lint(tree: Path) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--config", str(tree / ".importlinter")]
    return subprocess.run(command, cwd=tree, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=600)


def broken(answer: subprocess.CompletedProcess) -> str:
    """The report's "Broken contracts" part, its lines unwrapped."""
    text = " ".join(answer.stdout.split())
    return text.split("Broken contracts", 1)[1] if "Broken contracts" in text else ""


def add_import(path: Path, statement: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef _added():\n    {statement}\n", encoding="utf-8")


def test_the_tree_keeps_every_contract(tree):
    answer = lint(tree)
    assert answer.returncode == 0, answer.stdout[-3000:]
    assert "0 broken" in answer.stdout


def test_a_cycle_hidden_inside_a_function_breaks_the_build(tree):
    # grading.tasks imports grading.jobs; the job module importing the tasks back closes a cycle
    add_import(tree / "grading" / "jobs.py", "from . import tasks  # noqa")
    answer = lint(tree)
    assert answer.returncode != 0
    assert "no import cycles between sibling modules or packages" in broken(answer)
    assert ".jobs -> .tasks" in broken(answer) or ".tasks -> .jobs" in broken(answer)


def test_an_import_up_a_layer_breaks_the_build(tree):
    # the judges sit below the reports: a judge module never reaches up to a report page
    add_import(tree / "grading" / "judges" / "parsing.py", "from grading.reports import views  # noqa")
    answer = lint(tree)
    assert answer.returncode != 0
    assert "grading in layers" in broken(answer)
