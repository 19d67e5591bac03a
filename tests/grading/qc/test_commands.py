"""The ``qc_screen`` and ``qc_audit_sample`` commands (SPEC §5): one JSON object with the contract's
keys, the hand-worked values of the ``qc`` study (conftest.py), one-line errors, exit status 1."""
import json
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import CaseQuality


def run(*args) -> dict:
    out = StringIO()
    call_command(*args, "--json", stdout=out)
    text = out.getvalue()
    assert text.count("\n") <= 1
    return json.loads(text)


def test_qc_screen_json(qc_project):
    result = run("qc_screen", "--project", "qc", "--source", "cohort:group-1", "--models", "m-a,m-b,m-c")
    assert result == {"threshold": 50.0, "n_cases": 5, "flagged": ["q4", "q1", "q2"],
                      "by_case": {"q4": 100.0, "q1": pytest.approx(200 / 3), "q2": 50.0, "q3": 25.0, "q5": 25.0}}
    result = run("qc_screen", "--project", "qc", "--source", "cohort:group-1", "--models", "m-a, m-b ,m-c", "--threshold", "66")
    assert (result["threshold"], result["flagged"]) == (66.0, ["q4", "q1"])
    assert CaseQuality.objects.filter(project=qc_project, excluded=True).count() == 2


def test_qc_audit_sample_json(qc_project):
    run("qc_screen", "--project", "qc", "--source", "cohort:group-1", "--models", "m-a,m-b,m-c")
    result = run("qc_audit_sample", "--project", "qc", "--share", "0.5", "--seed", "3")
    assert set(result) == {"cases", "share", "seed", "n_eligible"}
    assert (result["share"], result["seed"], result["n_eligible"], len(result["cases"])) == (0.5, 3, 3, 2)
    assert set(result["cases"]) <= {"q3", "q5", "q6"}
    assert run("qc_audit_sample", "--project", "qc", "--share", "0.5", "--seed", "3")["cases"] == result["cases"]
    assert run("qc_audit_sample", "--project", "qc")["cases"] != []  # defaults: share 0.2, seed 0 -> one case


def test_text_output(qc_project):
    out = StringIO()
    call_command("qc_screen", "--project", "qc", "--source", "cohort:group-1", "--models", "m-a,m-b,m-c", stdout=out)
    assert out.getvalue().splitlines() == ["5 cases screened; 3 at or above 50 %:", "  q4  100.0 %", "  q1  66.7 %", "  q2  50.0 %"]


@pytest.mark.parametrize("args, message", [
    (["qc_screen", "--project", "nope", "--source", "gold", "--models", "m-a"], "unknown project 'nope'"),
    (["qc_screen", "--project", "qc", "--source", "cohort:x", "--models", "m-a"], "unknown cohort 'x' in project 'qc'"),
    (["qc_screen", "--project", "qc", "--source", "cohort:group-1", "--models", "m-a,m-z"], "unknown model 'm-z' in project 'qc'"),
    (["qc_screen", "--project", "qc", "--source", "cohort:group-1", "--models", ","], "name at least one screening model"),
    (["qc_screen", "--project", "qc", "--source", "cohort:group-1", "--models", "m-a", "--threshold", "-1"],
     "threshold must be a percentage from 0 to 100"),
    (["qc_audit_sample", "--project", "qc", "--share", "0"], "share must be more than 0 and at most 1"),
    (["qc_audit_sample", "--project", "qc", "--share", "2"], "share must be more than 0 and at most 1"),
    (["qc_audit_sample", "--project", "nope"], "unknown project 'nope'"),
])
def test_bad_arguments_give_one_line_errors(qc_project, args, message):
    with pytest.raises(CommandError, match=message) as info:
        call_command(*args, "--json", stdout=StringIO())
    assert "\n" not in str(info.value)


def test_exit_status_and_stderr_from_the_command_line(tmp_path):
    env = {"DJANGO_SETTINGS_MODULE": "evalsite.settings.test", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
           "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], check=True, env=env, capture_output=True)
    for args in (["qc_screen", "--project", "nope", "--source", "gold", "--models", "a"], ["qc_audit_sample", "--project", "nope"]):
        done = subprocess.run([sys.executable, "manage.py", *args, "--json"], env=env, capture_output=True, text=True)
        assert done.returncode == 1
        assert done.stdout == ""
        assert done.stderr.strip().splitlines() == ["CommandError: unknown project 'nope'"]
