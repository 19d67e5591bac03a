"""Model subsets everywhere (issue 14, point 4): every report command takes --models and
--exclude-models, computes from those models' responses only (the cache keeps restricted and full
results apart) and says which models it was asked for and used; the pages take the same as
query parameters."""
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from grading.reports.tasks import report_page_compute

REPORT_COMMANDS = [
    ("agreement", "--a", "cohort:group-1", "--b", "cohort:group-2"),
    ("coverage", "--source", "cohort:group-1"),
    ("scores", "--source", "gold"),
    ("calibrate_k", "--source", "cohort:group-1"),
    ("bias_matrix", "--condition", "anonymized", "--scale", "unit"),
    ("reliability", "--source", "cohort:group-1"),
    ("reliability_report", "--a", "cohort:group-1", "--b", "judge:judge-a"),
    ("pairwise_agreement", "--source", "cohort:group-1", "--min-n", "0"),
    ("cross_grader", "--a", "cohort:group-1", "--b", "cohort:group-2"),
    ("stability", "--judge", "judge-a"),
]


def run(name, *args):
    out = io.StringIO()
    call_command(name, "--project", "mini", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_agreement_restricted_to_a_model(mini_project):
    full = run("agreement", "--a", "cohort:group-1", "--b", "cohort:group-2")
    only = run("agreement", "--a", "cohort:group-1", "--b", "cohort:group-2", "--models", "model-a")
    assert set(full["by_model"]) == {"model-a", "model-b", "physician"} and set(only["by_model"]) == {"model-a"}
    assert only["n_decisions"] == full["by_model"]["model-a"]["n_decisions"] == 3
    assert only["model_subset"] == {"models": ["model-a"], "exclude_models": [], "used": ["model-a"]}
    assert "model_subset" not in full
    left_out = run("agreement", "--a", "cohort:group-1", "--b", "cohort:group-2", "--exclude-models", "physician")
    assert set(left_out["by_model"]) == {"model-a", "model-b"}
    assert left_out["model_subset"]["used"] == ["model-a", "model-b"]
    again = run("agreement", "--a", "cohort:group-1", "--b", "cohort:group-2")  # the full result, not a cached subset
    assert again["n_decisions"] == full["n_decisions"] == 9


@pytest.mark.parametrize("command", REPORT_COMMANDS, ids=[c[0] for c in REPORT_COMMANDS])
def test_every_report_command_takes_a_subset_and_says_so(mini_project, command):
    result = run(*command, "--exclude-models", "model-b")
    assert result["model_subset"]["exclude_models"] == ["model-b"] and "model-b" not in result["model_subset"]["used"]
    assert "model-b" not in json.dumps({k: v for k, v in result.items() if k != "model_subset"})


def test_a_model_kept_and_excluded_is_refused(mini_project):
    with pytest.raises(Exception, match="a model is both kept and excluded: model-a"):
        run("coverage", "--source", "cohort:group-1", "--models", "model-a", "--exclude-models", "model-a")


def test_pages_compute_under_the_subset(mini_project, staff_client):
    page = report_page_compute(project=mini_project, page="agreement",
                               params={"strategy": "zero", "subset": {"models": ["model-b"], "exclude_models": []}})
    assert page["model_subset"]["used"] == ["model-b"]
    assert all(r["n_decisions"] == 3 for r in page["comparisons"] if r["kind"] == "human-human")
    html = staff_client.get(reverse("report-coverage", args=["mini"]), {"models": "model-a"}).content.decode()
    assert '<option value="model-a" selected>model-a</option>' in html  # the chooser keeps the choice
