"""The prediction-powered estimates report (issue 28, point 1): the command's JSON, its agreement
with the coverage and scores reports' own figures (one definition each), the labelling-budget draw,
the page with its chart and empty states, and the API."""
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Project
from demo.clinical import DEFAULT_COHORTS, DEFAULT_JUDGE, generate_clinical
from grading.bundles import bundle_import
from grading.reports.registry import report_get
from tests.roles import grant

MODELS = ("gpt-4o", "llama-3-70b")


@pytest.fixture
def study(db, tmp_path):
    generate_clinical(tmp_path / "ppi", slug="ppi", n_cases=12, n_criteria=6, models=MODELS, human_answer_cases=0,
                      cohorts=DEFAULT_COHORTS[:1], overlap=1, checker_share=0.0, judges=(DEFAULT_JUDGE,), seed=5,
                      coverage_k=3)
    bundle_import(path=tmp_path / "ppi")
    return Project.objects.get(slug="ppi")


def command(*args: str) -> dict:
    out = StringIO()
    call_command("ppi_estimate", "--project", "ppi", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


HUMAN, JUDGE = "cohort:group-1", f"judge:{DEFAULT_JUDGE.name}"


def test_every_response_labelled_gives_the_coverage_reports_own_figures(study):
    found = command("--human", HUMAN, "--judge", JUDGE)
    coverage = report_get("coverage").answer(project=study, source=HUMAN)
    judged = report_get("coverage").answer(project=study, source=JUDGE)
    assert found["metric"] == "rubric_accuracy" and found["unit"] == "percent" and found["k"] is None
    assert set(found["models"]) == set(MODELS)
    for model, entry in found["models"].items():
        assert set(entry) == {"estimate", "ci", "human_only", "judge_only", "n_labelled", "n_unlabelled", "effective_n"}
        assert entry["human_only"]["estimate"] == pytest.approx(coverage["by_model"][model]["rubric_accuracy"])
        assert entry["judge_only"] == pytest.approx(judged["by_model"][model]["rubric_accuracy"])
        assert entry["n_labelled"] == entry["human_only"]["n"] == 12 and entry["n_unlabelled"] == 0
        # nothing unlabelled: the judge adds nothing and the estimate is the humans'
        assert (entry["estimate"], entry["ci"]) == (entry["human_only"]["estimate"], entry["human_only"]["ci"])
    assert found["cannot_assess_strategy"] == "zero" and found["left_out"]["draft_labels"] == 0


@pytest.mark.parametrize(("metric", "field"), [("pass_rate", "pass_at_k"), ("cacs", "cacs")])
def test_pass_rate_and_cacs_are_coverages_at_the_projects_k(study, metric, field):
    found = command("--human", HUMAN, "--judge", JUDGE, "--metric", metric)
    coverage = report_get("coverage").answer(project=study, source=HUMAN)
    assert found["k"] == coverage["k"] == 3
    for model, entry in found["models"].items():
        assert entry["human_only"]["estimate"] == pytest.approx(coverage["by_model"][model][field])


def test_the_score_is_the_scores_reports_with_cannot_assess_as_zero(study):
    found = command("--human", HUMAN, "--judge", JUDGE, "--metric", "score")
    scores = report_get("scores").answer(project=study, source=HUMAN, cannot_assess="zero")
    assert found["unit"] == "fraction"
    for model, entry in found["models"].items():
        assert entry["human_only"]["estimate"] == pytest.approx(scores["by_model"][model]["mean_score"])


def test_a_label_fraction_draws_a_seeded_random_subset_and_the_judge_narrows_the_interval(study):
    half = command("--human", HUMAN, "--judge", JUDGE, "--label-fraction", "0.5", "--seed", "4")
    again = command("--human", HUMAN, "--judge", JUDGE, "--label-fraction", "0.5", "--seed", "4")
    other = command("--human", HUMAN, "--judge", JUDGE, "--label-fraction", "0.5", "--seed", "5")
    assert half == again and half["models"] != other["models"]
    overall = half["overall"]
    assert overall["n_labelled"] == 12 and overall["n_unlabelled"] == 12  # half of 24 responses
    assert sum(e["n_labelled"] for e in half["models"].values()) == 12
    assert overall["ci"][1] - overall["ci"][0] <= overall["human_only"]["ci"][1] - overall["human_only"]["ci"][0]
    assert overall["effective_n"] >= overall["n_labelled"] * 0.95


def test_bad_sources_are_refused_with_their_names(study):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="judge:gpt-4o-judge is a judge source; use cohort or gold"):
        command("--human", JUDGE, "--judge", JUDGE)
    with pytest.raises(CommandError, match="is a cohort source; use judge"):
        command("--human", HUMAN, "--judge", HUMAN)
    with pytest.raises(CommandError, match="label_fraction|must be more than 0"):
        command("--human", HUMAN, "--judge", JUDGE, "--label-fraction", "0")


def test_the_page_draws_both_intervals_per_model_and_the_api_answers_the_same(study, client):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("reader")
    grant(user, study, "viewer")
    client.force_login(user)
    page = client.get(reverse("report-index", args=["ppi"]) + "ppi_estimate/",
                      {"human": HUMAN, "judge": JUDGE, "label_fraction": "0.5"})
    html = page.content.decode()
    assert page.status_code == 200 and 'class="vega-spec"' in html and "95% intervals" in html
    assert "Worth in human labels" in html and "prediction-powered" in html
    assert f'<option value="{JUDGE}"' in html and '<optgroup label="Judges">' in html.split('name="judge"')[1].split("</select>")[0]
    assert '<optgroup label="Judges">' not in html.split('name="human"')[1].split("</select>")[0]
    api = client.get(f"/api/projects/ppi/reports/ppi_estimate/?human={HUMAN}&judge={JUDGE}&label_fraction=0.5")
    assert api.status_code == 200
    assert api.json()["models"] == command("--human", HUMAN, "--judge", JUDGE, "--label-fraction", "0.5")["models"]


def test_a_project_without_a_judge_explains_what_to_do(db, client):
    from django.contrib.auth import get_user_model

    project = Project.objects.create(slug="bare", name="Bare")
    user = get_user_model().objects.create_user("reader")
    grant(user, project, "viewer")
    client.force_login(user)
    html = client.get(reverse("report-index", args=["bare"]) + "ppi_estimate/").content.decode()
    assert 'id="ppi-empty"' in html and "This project has no judge" in html and 'id="report-error"' not in html


def test_a_source_that_decided_nothing_is_explained_not_an_error(study, client):
    from django.contrib.auth import get_user_model

    from annotation.models import Cohort

    Cohort.objects.create(project=study, name="group-9")
    user = get_user_model().objects.create_user("reader")
    grant(user, study, "viewer")
    client.force_login(user)
    html = client.get(reverse("report-index", args=["ppi"]) + "ppi_estimate/", {"human": "cohort:group-9"}).content.decode()
    assert 'id="ppi-empty"' in html and "cohort:group-9 decided no model-authored response" in html
    assert 'id="report-error"' not in html
    api = client.get(f"/api/projects/ppi/reports/ppi_estimate/?human=cohort:group-9&judge={JUDGE}")
    assert api.status_code == 409 and "decided no model-authored response" in api.json()["detail"]


def test_the_form_leaves_empty_boxes_to_their_defaults_and_is_left_out_without_a_judge(study, client):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("reader")
    grant(user, study, "viewer")
    client.force_login(user)
    url = reverse("report-index", args=["ppi"]) + "ppi_estimate/"
    html = client.get(url, {"human": HUMAN, "judge": JUDGE, "metric": "rubric_accuracy", "k": "", "label_fraction": "",
                            "seed": ""}).content.decode()
    assert 'id="ppi-summary"' in html and 'id="report-error"' not in html and 'name="judge"' in html
    from grading.models import Judge

    Judge.objects.filter(project=study).delete()
    html = client.get(url).content.decode()
    assert 'id="ppi-empty"' in html and 'name="judge"' not in html


def test_without_binary_criteria_the_coverage_figures_point_to_the_score(db, tmp_path):
    from grading.reports.registry import ReportUnavailable

    generate_clinical(tmp_path / "ppi", slug="ppi", n_cases=4, n_criteria=3, models=MODELS, human_answer_cases=0,
                      cohorts=DEFAULT_COHORTS[:1], overlap=1, checker_share=0.0, judges=(DEFAULT_JUDGE,), seed=5)
    bundle_import(path=tmp_path / "ppi")
    project = Project.objects.get(slug="ppi")
    from annotation.models import Criterion

    Criterion.objects.filter(project=project).update(kind="ordinal")
    with pytest.raises(ReportUnavailable, match="has no binary criteria, which rubric accuracy counts; use the metric score"):
        report_get("ppi_estimate").answer(project=project, human=HUMAN, judge=JUDGE)
