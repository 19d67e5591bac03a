"""The papers' figures on the judges, bias, calibration and HealthBench pages (issue 25, point 2):
judge fidelity with the human–human line on the MF1 chart only (ClinConsensus Fig. 4), cross-evaluation
matrices with μ ± σ and bias heatmaps per condition (Visa Figs. 6, 8, 9), human, raw-judge and
calibrated score distributions (RULERS Fig. 2) and the HealthBench score by theme and axis. Each
chart's spec is checked for its axis titles and legend, beside its table, CSV and empty state."""
import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Project
from grading.reports.judges import judges_charts
from tests.grading.reports.test_figure_pages import _specs, _titles
from tests.roles import grant


def _csv(client, url: str, table: str, **query) -> list[list[str]]:
    response = client.get(url, {**query, "format": "csv", "table": table})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.content.decode())))


def _by_title(html: str, start: str) -> dict:
    found = [s for s in _specs(html) if s["title"]["text"].startswith(start)]
    assert found, f"no chart titled {start!r}"
    return found[0]


# --- judge fidelity (ClinConsensus Fig. 4) ------------------------------------------------------

def test_the_human_human_line_is_on_the_mf1_chart_only(staff_client, second_judge):
    url = reverse("report-judges", args=["mini"])
    response = staff_client.get(url)
    html, result = response.content.decode(), response.context["result"]
    assert result["reference_label"] == "cohort:group-1 vs cohort:group-2" and result["reference_mf1"] is not None
    mf1 = _by_title(html, "Judge fidelity: MF1")
    kappa = _by_title(html, "Judge fidelity: Cohen's kappa")
    rules = [layer for layer in mf1["layer"] if layer["mark"]["type"] == "rule"]
    assert len(rules) == 1 and rules[0]["data"]["values"][0] == {"reference": "human–human",
                                                                 "value": pytest.approx(result["reference_mf1"], abs=1e-5)}
    assert not [layer for layer in kappa["layer"] if layer["mark"]["type"] in ("rule", "text") and "data" in layer]
    assert _titles(mf1) == {"MF1 (macro F1 of met / not met)", "judge vs reference"}
    assert _titles(kappa) == {"Cohen's kappa", "judge vs reference"}
    assert {"field": "n", "title": "n", "format": ","} in mf1["layer"][0]["encoding"]["tooltip"]
    rows = _csv(staff_client, url, "fidelity")
    assert "judge:judge-b" in {row[1] for row in rows[1:]} and "mf1" in rows[0]
    assert 'id="fidelity-empty"' not in html


def test_kappa_below_zero_gets_its_axis_from_minus_one():
    row = {"a": "cohort:x", "b": "judge:j", "kind": "judge-cohort", "mf1": 0.4, "cohen_kappa": -0.25, "n_decisions": 10}
    kappa = judges_charts({"fidelity": [row], "reference_mf1": None}, None)["kappa"].spec
    assert kappa["layer"][0]["encoding"]["x"]["scale"]["domain"] == [-1.0, 1.0]
    row["cohen_kappa"] = 0.3
    assert judges_charts({"fidelity": [row], "reference_mf1": None}, None)["kappa"].spec[
        "layer"][0]["encoding"]["x"]["scale"]["domain"] == [0.0, 1.0]


def test_judge_fidelity_without_a_judge_says_why(client, db):
    user = get_user_model().objects.create_user(username="reader")
    grant(user, Project.objects.create(slug="empty", name="Empty"), "viewer")
    client.force_login(user)
    html = client.get(reverse("report-judges", args=["empty"])).content.decode()
    assert 'id="fidelity-empty"' in html and "run it on responses the cohorts have" in html
    assert 'class="vega-spec"' not in html


# --- cross-evaluation and bias matrices (Visa Figs. 6, 8, 9) -----------------------------------

def _reader(client, slug: str):
    user = get_user_model().objects.create_user(username=f"reader-{slug}")
    grant(user, Project.objects.get(slug=slug), "viewer")
    client.force_login(user)
    return client


@pytest.fixture
def points_reader(client, db, tmp_path):
    """The 0–10 project of ``test_bias_native``: judges j1–j3 attributed, a1–a2 anonymized."""
    from grading.bundles import bundle_import
    from tests.grading.reports.test_bias_native import _bundle

    bundle_import(path=_bundle(tmp_path / "points"))
    return _reader(client, "points")


def _cell(spec: dict, row: str, column: str) -> dict:
    return next(c for c in spec["data"]["values"] if c["row"] == row and c["column"] == column)


def test_score_and_bias_heatmaps_for_both_conditions(points_reader):
    url = reverse("report-bias", args=["points"])
    html = points_reader.get(url).content.decode()
    for condition in ("attributed", "anonymized"):
        scores = _by_title(html, f"Cross-evaluation scores S (colour) with μ ± σ over samples (text), {condition}, points")
        bias = _by_title(html, f"Consensus-deviation bias ± Monte Carlo σ, {condition}, points")
        for spec in (scores, bias):
            assert _titles(spec) == {"judge", "graded model"}
            assert {"field": "n", "title": "n", "format": ","} in spec["layer"][0]["encoding"]["tooltip"]
        colour = scores["layer"][0]["encoding"]["color"]
        assert colour["title"] == "mean score S (points)" and colour["scale"] == {"scheme": "blues", "domain": [0.0, 10.0]}
        legend = bias["layer"][0]["encoding"]["color"]
        assert legend["title"] == "bias (points)" and legend["scale"]["domainMid"] == 0 and legend["legend"]
        assert -legend["scale"]["domain"][0] == legend["scale"]["domain"][1]  # centred at 0
        assert 'id="bias-{condition}-empty"' not in html
    scores = _by_title(html, "Cross-evaluation scores S (colour) with μ ± σ over samples (text), attributed")
    j1 = _cell(scores, "j1", "m1")  # samples 9 and 8 on both responses: S = μ = 8.5, σ = sd(9, 8) = 0.71, n = 2 decisions
    assert (j1["value"], j1["text"], j1["n"], j1["self"]) == (8.5, "8.50 ± 0.71", 2, True)
    assert {"field": "text", "title": "μ ± σ over samples"} in scores["layer"][0]["encoding"]["tooltip"]
    bias = _by_title(html, "Consensus-deviation bias ± Monte Carlo σ, attributed")
    assert _cell(bias, "j2", "m2")["value"] == 3.0 and _cell(bias, "j1", "m2")["text"] == "-1.50 ± 0.00"
    rows = _csv(points_reader, url, "attributed_bias")
    assert rows[0] == ["judge", "m1", "m2", "m3"] and rows[1][:2] == ["j1", "2.0"]


def test_a_condition_without_judges_says_why(points_reader):
    from grading.models import Judge

    Judge.objects.filter(project__slug="points", condition="attributed").delete()
    html = points_reader.get(reverse("report-bias", args=["points"])).content.decode()
    assert 'id="bias-attributed-empty"' in html and "Add a judge with the condition attributed" in html
    assert 'id="bias-anonymized-empty"' not in html and 'id="bias-anonymized"' in html


def test_the_bias_page_without_judges_says_why(client, db):
    Project.objects.create(slug="empty", name="Empty")
    html = _reader(client, "empty").get(reverse("report-bias", args=["empty"])).content.decode()
    assert 'id="bias-empty"' in html and "Add judges of different" in html and 'class="vega-spec"' not in html


# --- human, raw and calibrated score distributions (RULERS Fig. 2) -----------------------------

@pytest.fixture
def shift_reader(client, db, tmp_path):
    """``test_calibrate``'s project: 40 responses the doctors score 0–4 and judge j one level higher
    (4 stays 4), with a calibration stored by ``calibrate`` (20 items fitted, 20 held out)."""
    from django.core.management import call_command

    from grading.bundles import bundle_import
    from tests.grading.reports.test_calibrate import shifted_bundle

    bundle_import(path=shifted_bundle(tmp_path / "shift"))
    call_command("calibrate", "--project", "shift", "--source", "judge:j", "--reference", "cohort:docs",
                 "--criterion", "quality", "--json", stdout=io.StringIO())
    return _reader(client, "shift")


def test_held_out_distributions_of_the_quick_and_the_stored_calibration(shift_reader):
    url = reverse("report-calibration", args=["shift"])
    response = shift_reader.get(url)
    html, result = response.content.decode(), response.context["result"]
    quick = next(q for q in result["holdout"] if q["source"] == "judge:j")
    assert quick["n_holdout"] == 20 and quick["levels"] == pytest.approx([i / 10 for i in range(11)])
    assert all(sum(quick["distributions"][name]) == 20 for name in ("human", "raw", "calibrated"))
    assert quick["distributions"]["raw"][0] == 0 and quick["distributions"]["human"][0] > 0  # the judge never says 0
    chart = _by_title(html, "judge:j: human, raw and calibrated scores on the held-out items (n = 20 items)")
    encoding = chart["layer"][0]["encoding"]
    assert _titles(chart) == {"score (snapped to the scale)", "share of held-out items"}
    assert encoding["color"]["scale"]["domain"] == ["human (cohort:docs)", "raw judge", "calibrated judge (quantile-mapped)"]
    assert {"field": "n", "title": "n", "format": ","} in encoding["tooltip"]
    zero = next(d for d in chart["data"]["values"] if d["series"] == "raw judge" and d["level"] == "0")
    assert (zero["count"], zero["share"], zero["n"]) == (0, 0.0, 20)
    stored = _by_title(html, "judge:j@calibrated: human, raw and calibrated scores on the held-out items (n = 20 items)")
    assert stored["layer"][0]["encoding"]["color"]["scale"]["domain"][2] == "calibrated judge (stored)"
    assert [d["level"] for d in stored["data"]["values"][:5]] == ["0", "1", "2", "3", "4"]
    rows = _csv(shift_reader, url, "holdout_distributions")
    assert rows[0] == ["source", "score", "human_items", "raw_items", "calibrated_items"]
    assert len([r for r in rows if r[0] == "judge:j"]) == 11  # one row per level (the calibrated judge has its own)
    assert rows[1][:2] == ["judge:j", "0.0"] and rows[1][3] == "0"
    assert ">Human (cohort:docs) items</abbr>" in html and ">Calibrated judge items</abbr>" in html
    stored_rows = _csv(shift_reader, url, "stored_distributions")
    assert len(stored_rows) == 1 + 5 and sum(int(r[4]) for r in stored_rows[1:]) == 20


def test_calibration_without_a_cohort_or_a_judge_says_why(client, db):
    from annotation.models import Cohort

    Project.objects.create(slug="empty", name="Empty")
    reader = _reader(client, "empty")
    html = reader.get(reverse("report-calibration", args=["empty"])).content.decode()
    assert 'id="calibration-empty"' in html and "This project has no cohort" in html and 'class="vega-spec"' not in html
    Cohort.objects.create(project=Project.objects.create(slug="unjudged", name="Unjudged"), name="docs")
    grant(get_user_model().objects.get(username="reader-empty"), Project.objects.get(slug="unjudged"), "viewer")
    html = reader.get(reverse("report-calibration", args=["unjudged"])).content.decode()
    assert 'id="holdout-empty"' in html and "this project has no judge yet" in html and 'id="stored-empty"' in html


# --- HealthBench by theme and axis ---------------------------------------------------------------

@pytest.fixture
def healthbench(client, db, tmp_path):
    """``tests/grading/test_healthbench.py``'s examples graded by judge ``grader`` (its hand calculation
    ``HAND``), imported as project hb."""
    from tests.grading import test_healthbench as hb

    hb._import(hb.files.__wrapped__(tmp_path))
    return _reader(client, "hb")


def _bars(spec: dict) -> dict:
    return {(d["label"], d["series"]): d for d in spec["data"]["values"]}


def test_healthbench_by_theme_and_axis_with_intervals(healthbench):
    from tests.grading.test_healthbench import HAND, _by_hand_interval

    url = reverse("report-healthbench", args=["hb"])
    html = healthbench.get(url, {"ci": "1"}).content.decode()
    overall = _by_title(html, "HealthBench score per model under judge:grader, ± bootstrap std (n = 5 examples)")
    bar = _bars(overall)[("model-a", "overall")]
    assert bar["value"] == pytest.approx(HAND["overall"], abs=1e-4) and bar["n"] == 4
    assert bar["low"] == pytest.approx(HAND["overall"] - HAND["bootstrap_std"], abs=1e-4)
    assert bar["high"] == pytest.approx(HAND["overall"] + HAND["bootstrap_std"], abs=1e-4)
    assert _titles(overall) == {"HealthBench score (clipped mean, 0–1)", "model"}
    theme = _by_title(html, "HealthBench score per theme and model under judge:grader, with 95% intervals")
    axis = _by_title(html, "HealthBench score per axis and model under judge:grader, with 95% intervals")
    assert _titles(theme) == {"HealthBench score (clipped mean, 0–1)", "theme"}
    assert theme["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["model-a", "model-b"]  # the legend: models
    themes = _bars(theme)
    assert themes[("emergency_referrals", "model-a")]["value"] == 0.0 and themes[("emergency_referrals", "model-a")]["n"] == 2
    assert themes[("hedging", "model-b")]["value"] == 0.0 and themes[("emergency_referrals", "model-b")]["value"] is None
    axes = _bars(axis)
    assert {label for label, _ in axes} == {"accuracy", "completeness"}  # level:example is no axis
    accuracy = axes[("accuracy", "model-a")]
    assert accuracy["value"] == pytest.approx(0.3) and accuracy["n"] == 2
    low, high = _by_hand_interval({"p-a": [0.6], "p-b": [0.0]})
    assert (accuracy["low"], accuracy["high"]) == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))
    assert any(layer["mark"]["type"] == "rule" and layer["encoding"]["x"]["field"] == "low" for layer in axis["layer"])
    assert {"field": "span", "title": "95% interval"} in axis["layer"][0]["encoding"]["tooltip"]
    assert "(n = 5 example-axis pairs)" in axis["title"]["text"]  # model-a 2 + 2, model-b 1
    plain = healthbench.get(url).content.decode()
    assert "with 95% intervals" not in plain and "Tick <b>95% intervals</b>" in plain
    assert "low" not in _bars(_by_title(plain, "HealthBench score per axis"))[("accuracy", "model-a")]


def test_healthbench_without_theme_or_axis_tags_says_why(healthbench):
    from annotation.models import Case, Criterion

    for case in Case.objects.filter(project__slug="hb"):
        case.metadata = {**case.metadata, "example_tags": [t.replace("theme:", "topic:") for t in case.metadata["example_tags"]]}
        case.save()
    Criterion.objects.filter(project__slug="hb").update(tags=["level:example"])
    html = healthbench.get(reverse("report-healthbench", args=["hb"])).content.decode()
    assert 'id="healthbench-no-themes"' in html and 'id="healthbench-no-axes"' in html
    assert "HealthBench score per theme" not in html and "HealthBench score per model" in html
