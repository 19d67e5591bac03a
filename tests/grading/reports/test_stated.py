"""Every report states the cannot-assess strategy in use and what it left out (issue 25, "figures
that mislead": the ``scores`` and ``agreement`` JSON named neither the strategy of every report nor
the few-shot split). Stated once, by the registry (``Report.run`` / ``Report.printed``), so the
command, the API and a new report all say it."""
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from grading.models import Judge
from grading.reports import registry
from grading.reports.registry import FIXED_STRATEGIES, NoParams, Report, computed_reports
from tests.grading.reports.conftest import add_judgments
from tests.roles import grant


def _command(*args) -> dict:
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def few_shot_judge(mini_project):
    """A judge whose few-shot examples came from case c2 (its split) and that judged r1 and r3."""
    judge = Judge.objects.create(project=mini_project, name="shots", backend="replay", model="m", condition="anonymized",
                                 settings={"few_shot": {"cohort": "group-1", "k": 2, "split": {"cases": ["c2"]}}})
    add_judgments(judge, [("r1", "c1-ecg", 0, "met", None, None, True), ("r3", "tone", 0, None, "good", 1.0, True)])
    return judge


def test_scores_and_agreement_name_the_strategy_and_every_left_out_set(mini_project, few_shot_judge):
    scores = _command("scores", "--project", "mini", "--source", "judge:shots", "--cannot-assess", "partial")
    assert scores["cannot_assess_strategy"] == "partial"
    # c2's response r3 is left out (the split); r1 is judged on ecg only: call and abx are its missing outputs
    assert scores["left_out"] == {"draft_labels": 0, "excluded_cases": 0, "few_shot_cases": {"judge:shots": 1},
                                  "criteria_not_decided": {}}
    assert set(scores["responses"]) == {"r1"}
    agreement = _command("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "judge:shots")
    assert agreement["cannot_assess_strategy"] == "zero" and agreement["left_out"]["few_shot_cases"] == {"judge:shots": 1}

    user = get_user_model().objects.create_user("reader")
    client = Client()
    client.force_login(grant(user, mini_project, "viewer"))
    answered = client.get("/api/projects/mini/reports/scores/", {"source": "judge:shots", "cannot_assess": "partial"}).json()
    assert answered["cannot_assess_strategy"] == "partial" and answered["left_out"] == scores["left_out"]
    # a report without a strategy parameter names the one it always applies
    coverage = client.get("/api/projects/mini/reports/coverage/", {"source": "cohort:group-1"}).json()
    assert coverage["cannot_assess_strategy"] == "zero" and "left_out" in coverage


def test_every_report_states_a_strategy_and_a_new_one_must_declare_it():
    for report in computed_reports():
        defaults = {f.source: f.default for f in report.params().fields.values() if f.source == "strategy"}
        assert report.strategy_in_use(defaults) in FIXED_STRATEGIES, report.key
    with pytest.raises(ValueError, match="name what it does with cannot assess"):
        registry.register(Report(key="undeclared", title="Undeclared", params=NoParams, compute=lambda *, inputs: {}))
    assert "undeclared" not in [r.key for r in registry.reports()]


def test_the_page_says_which_few_shot_splits_are_left_out(client, mini_project, few_shot_judge):
    client.force_login(grant(get_user_model().objects.create_user("viewer"), mini_project, "viewer"))
    html = client.get("/projects/mini/reports/scores/", {"source": "judge:shots"}).content.decode()
    assert "few-shot split, whose cases its figures leave out: judge:shots 1 case." in html
