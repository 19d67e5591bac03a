"""The pages of the reports that had only a command and an API endpoint (issue 25, point 2):
Monte Carlo stability, pairwise agreement, cross-grader robustness and verbosity. Each renders its
figures (worked by hand), a Vega-Lite chart with axis titles (and a legend where there are series),
tables whose headers are words with their definition as a tooltip, CSV downloads, and an empty
state that says why and what to do; each is linked from the project page."""
import csv
import io
import json
import re

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from scipy import stats

from annotation.models import Project
from grading.bundles import bundle_import
from grading.models import Judge
from tests.grading.reports.conftest import add_judgments
from tests.grading.reports.test_diagnostics import HITS, LENGTHS, verbose_bundle
from tests.grading.reports.test_pairwise import bundle as pairwise_bundle
from tests.roles import grant

NEW_PAGES = ["stability", "pairwise", "cross-grader", "verbosity"]


def _specs(html: str) -> list[dict]:
    return [json.loads(text) for text in re.findall(r'<script type="application/json" class="vega-spec">(.*?)</script>', html, re.S)]


def _titles(spec: dict) -> set:
    """Every axis title of a layered spec's encodings."""
    return {enc[channel]["title"] for layer in spec.get("layer", []) for enc in [layer.get("encoding", {})]
            for channel in ("x", "y") if channel in enc and enc[channel].get("title")}


def _csv(client, url: str, table: str, **query) -> list[list[str]]:
    response = client.get(url, {**query, "format": "csv", "table": table})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.content.decode())))


def _viewer(client, slug: str):
    user = get_user_model().objects.create_user(username=f"reader-{slug}", password="pw-12345")
    grant(user, Project.objects.get(slug=slug), "viewer")
    client.force_login(user)
    return client


def test_every_new_page_is_linked_from_the_project_page(staff_client, mini_project):
    html = staff_client.get(reverse("project-detail", args=["mini"])).content.decode()
    for page in NEW_PAGES:
        assert reverse(f"report-{page}", args=["mini"]) in html


@pytest.mark.parametrize("page, explanation", [
    ("stability", "Add a judge with <b>Samples</b> 2 or more"),
    ("pairwise", "This project has no cohort"),
    ("cross-grader", "This project has no\n    cohort and no judge yet"),
    ("verbosity", "This project has no cohort and no judge yet"),
])
def test_empty_states_say_why_and_what_to_do(staff_client, db, page, explanation):
    grant(get_user_model().objects.get(username="researcher"), Project.objects.create(slug="empty", name="Empty"), "viewer")
    html = staff_client.get(reverse(f"report-{page}", args=["empty"])).content.decode()
    assert "empty-state" in html and explanation in html and 'class="vega-spec"' not in html


# --- Monte Carlo stability -------------------------------------------------------------------

@pytest.fixture
def sampled_judge(mini_project):
    """Judge mc with two samples: r1 (model-a) ecg 1 then 0, call 1 and 1, abx missing in both (not
    met); r3 (model-a) tone 0.5 then 1.0 on the ordinal scale."""
    judge = Judge.objects.create(project=mini_project, name="mc", model="m", samples=2, temperature=0.7)
    add_judgments(judge, [
        ("r1", "c1-ecg", 0, "met", None, None, True), ("r1", "c1-ecg", 1, "not_met", None, None, True),
        ("r1", "c1-call", 0, "met", None, None, True), ("r1", "c1-call", 1, "met", None, None, True),
        ("r3", "tone", 0, None, "ok", 0.5, True), ("r3", "tone", 1, None, "good", 1.0, True),
    ])
    return judge


def test_stability_page_by_hand(staff_client, sampled_judge):
    url = reverse("report-stability", args=["mini"])
    response = staff_client.get(url)  # the judge with the most samples is the default
    html = response.content.decode()
    result = response.context["result"]
    assert result["judge"] == "mc" and result["samples_seen"] == 2
    from grading.reports.stability import page_cells

    cells = {(c["target"], c["criterion"]): c for c in page_cells(result)}
    assert cells[("model-a", "c1-ecg")]["mu"] == pytest.approx(0.5)
    assert cells[("model-a", "c1-ecg")]["sigma"] == pytest.approx(2 ** 0.5 / 2)  # sd(1, 0), ddof 1
    assert cells[("model-a", "c1-call")]["sigma"] == 0.0
    assert cells[("model-a", "tone")]["mu"] == pytest.approx(0.75) and cells[("model-a", "tone")]["sigma"] == pytest.approx(2 ** 0.5 / 4)
    # mean spread per item: binary (0.7071 + 0 + 0) / 3 items; ordinal one item 0.3536
    by_kind = {row[0]: row for row in _csv(staff_client, url, "by_kind")[1:]}
    assert float(by_kind["binary"][3]) == pytest.approx(2 ** 0.5 / 2 / 3) and float(by_kind["ordinal"][3]) == pytest.approx(2 ** 0.5 / 4)
    assert _csv(staff_client, url, "by_kind")[0] == ["kind", "n_items", "n_items_with_sd", "mean_sd"]  # keys in the CSV
    assert '<abbr class="term" title="The mean over items of the standard deviation' in html and ">Mean spread per item</abbr></th>" in html
    specs = {s["title"]["text"]: s for s in _specs(html)}
    heatmap = next(s for t, s in specs.items() if t.startswith("μ ± σ per criterion and target model, binary"))
    assert _titles(heatmap) == {"criterion", "target model"}
    assert heatmap["layer"][0]["encoding"]["color"]["title"] == "μ (mean over samples)"  # the colour legend
    assert {"0.50 ± 0.71", "1.00 ± 0.00"} <= {c["text"] for c in heatmap["data"]["values"]}
    assert {"field": "n", "title": "n", "format": ","} in heatmap["layer"][0]["encoding"]["tooltip"]
    spread = next(s for t, s in specs.items() if t.startswith("Mean spread per item"))
    assert _titles(spread) == {"standard deviation over samples", "criterion kind"}
    assert 'id="stability-one-sample"' not in html


def test_stability_page_of_a_single_sample_judge_says_so(staff_client, mini_project):
    html = staff_client.get(reverse("report-stability", args=["mini"]), {"judge": "judge-a"}).content.decode()
    assert 'id="stability-one-sample"' in html and "Set its <b>Samples</b> to 2 or more" in html


def test_stability_page_refuses_an_unknown_judge(staff_client, mini_project):
    html = staff_client.get(reverse("report-stability", args=["mini"]), {"judge": "nobody"}).content.decode()
    assert 'id="report-error"' in html and "nobody" in html


# --- pairwise agreement ----------------------------------------------------------------------

def test_pairwise_page_by_hand(client, db, tmp_path):
    """tests/grading/reports/test_pairwise.py's three physicians and grader: p1 and p2 MF1 0.25 over
    3 pairs, p3 0 over 2; the grader 0.4 over 6 labels, percentile 100."""
    bundle_import(path=pairwise_bundle(tmp_path / "hb"))
    viewer = _viewer(client, "hb")
    url = reverse("report-pairwise", args=["hb"])
    response = viewer.get(url, {"min_n": "0"})  # the grader is the first judge by default
    html = response.content.decode()
    assert _csv(viewer, url, "annotators", min_n="0") == [
        ["annotator", "n_pairs", "annotator_mf1", "included"], ["p1", "3", "0.25", "yes"], ["p2", "3", "0.25", "yes"],
        ["p3", "2", "0.0", "yes"]]
    summary = _csv(viewer, url, "summary", min_n="0")
    assert summary[1][0] == "annotators" and float(summary[1][1]) == pytest.approx((0.25 * 3 + 0.25 * 3) / 8)
    assert summary[2][0] == "grader judge:g" and float(summary[2][1]) == pytest.approx(0.4) and summary[2][2:] == ["6", "100.0"]
    chart = next(s for s in _specs(html) if s["title"]["text"].startswith("Each annotator's MF1"))
    assert _titles(chart) == {"MF1 (macro F1 of met / not met)", "annotator"}
    assert chart["layer"][2]["data"]["values"] == [{"reference": "grader judge:g", "value": 0.4}]  # the grader's line
    themes = next(s for s in _specs(html) if s["title"]["text"].startswith("MF1 per theme"))
    assert themes["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["annotators' mean MF1", "grader judge:g"]  # legend
    assert ">Annotator&#x27;s MF1</abbr></th>" in html and 'title="Percent of the included annotators whose MF1 is below' in html
    # p3 (2 pairs) is left out at a minimum of 2, and says so; no grader on request
    left_out = viewer.get(url, {"min_n": "2", "grader": "none"})
    assert left_out.context["result"]["grader"] is None
    assert "p3 (left out: 2 pairs)" in left_out.content.decode()
    assert 'id="pairwise-none-included"' in viewer.get(url).content.decode()  # the default minimum of 50 pairs


def test_pairwise_page_refuses_a_bad_minimum(client, db, tmp_path):
    bundle_import(path=pairwise_bundle(tmp_path / "hb"))
    html = _viewer(client, "hb").get(reverse("report-pairwise", args=["hb"]), {"min_n": "-1"}).content.decode()
    assert 'id="report-error"' in html and "the minimum of pairs must be 0 or more" in html


# --- cross-grader robustness -----------------------------------------------------------------

def test_cross_grader_page_by_hand(staff_client, mini_project):
    url = reverse("report-cross-grader", args=["mini"])
    query = {"a": "cohort:group-1", "b": "judge:judge-a"}
    html = staff_client.get(url, query).content.decode()
    rows = _csv(staff_client, url, "rates", **query)
    # positive rates (tests/grading/reports/test_diagnostics.py): model-a 2/3 vs 1/3, model-b 1/3 vs 0, 3 pairs each
    assert rows[0] == ["model", "a_pct", "b_pct", "n_pairs_model"]
    rates = {r[0]: r[1:] for r in rows[1:]}
    assert [float(v) for v in rates["model-a"]] == pytest.approx([200 / 3, 100 / 3, 3])
    assert [float(v) for v in rates["model-b"]] == pytest.approx([100 / 3, 0, 3])
    summary = _csv(staff_client, url, "summary", **query)
    assert summary[0][:4] == ["n_models", "spearman_rho", "kendall_tau", "mean_abs_diff_pp"]
    assert float(summary[1][3]) == pytest.approx(100 / 3)
    chart = _specs(html)[0]
    assert _titles(chart) == {"criteria marked met (% of paired binary decisions)", "model"}
    assert chart["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["cohort:group-1", "judge:judge-a"]
    assert ">Positive rate under cohort:group-1 (%)</abbr></th>" in html
    # the default pair: the first cohort against the first judge
    assert staff_client.get(url).context["result"]["b"] == "judge:judge-a"


def test_cross_grader_page_with_nothing_shared_says_why(staff_client, mini_project):
    Judge.objects.create(project=mini_project, name="idle", model="m")
    html = staff_client.get(reverse("report-cross-grader", args=["mini"]), {"a": "cohort:group-1", "b": "judge:idle"}).content.decode()
    assert "cannot be compared" in html and "share no binary decision" in html and 'class="vega-spec"' not in html


# --- verbosity -------------------------------------------------------------------------------

def test_verbosity_page_by_hand(client, db, tmp_path):
    bundle_import(path=verbose_bundle(tmp_path / "verbose"))
    viewer = _viewer(client, "verbose")
    url = reverse("report-verbosity", args=["verbose"])
    html = viewer.get(url).content.decode()
    keys = sorted(LENGTHS)
    length = np.array([LENGTHS[k] for k in keys], dtype=float)
    accuracy = 100 * np.array([HITS[k] for k in keys], dtype=float) / 4
    correlations = _csv(viewer, url, "correlations")
    assert correlations[0] == ["score", "pearson", "spearman", "partial", "n"]
    assert correlations[1][0] == "rubric accuracy" and correlations[2][0] == "CACS@2"
    assert float(correlations[1][1]) == pytest.approx(stats.pearsonr(length, accuracy)[0])
    assert correlations[1][4] == "6"
    responses = {r[0]: r for r in _csv(viewer, url, "responses")[1:]}
    # c2-m1: 3 of 4 met -> 75 %; CACS@2 max(0, 3 - 2 + 1) / (4 - 2 + 1) = 2/3
    assert float(responses["c2-m1"][3]) == 75.0 and float(responses["c2-m1"][4]) == pytest.approx(200 / 3)
    assert float(responses["c2-m1"][2]) == 650.0
    specs = {s["title"]["text"].split(",")[0]: s for s in _specs(html)}
    scatter = specs["Length against rubric accuracy per response"]
    assert _titles(scatter) == {"length (characters)", "rubric accuracy (%)"}
    assert scatter["layer"][0]["encoding"]["color"]["title"] == "model" and len(scatter["data"]["values"]) == 6
    bars = specs["Correlation of length with each score"]
    assert bars["layer"][0]["encoding"]["x"]["scale"]["domain"] == [-1.0, 1.0]
    assert ">Partial r (model and case held fixed)</abbr></th>" in html


def test_verbosity_page_with_too_few_responses_says_why(staff_client, mini_project):
    html = staff_client.get(reverse("report-verbosity", args=["mini"])).content.decode()
    assert "Too little to correlate" in html and "at least three model-authored responses" in html
