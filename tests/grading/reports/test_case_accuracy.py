"""Case-level rubric accuracy distributions with k marked on the coverage page (issue 25, point 2;
ClinConsensus Fig. 7): per model, a histogram over cases of the model's rubric accuracy on each case,
with a dashed rule at the accuracy k met criteria make, a table of the distribution and its CSV.

The strata project (``test_strata_heatmaps``): three cases of four binary criteria, k = 2, so k makes
50 % on every case. Case accuracies: m1 100, 75, 50 %; m2 25, 50, 100 %.
"""
import numpy as np
import pandas as pd
import pytest
from django.urls import reverse

from grading.bundles import bundle_import
from grading.reports.coverage import case_accuracy
from tests.grading.reports.test_figure_pages import _specs
from tests.grading.reports.test_strata_heatmaps import strata_bundle, viewer  # noqa: F401 (a fixture)


def test_case_accuracy_by_hand_with_cases_of_different_sizes():
    """Model a answers case x twice (2 and 4 of 4 met: 75 % on the case) and case y once (3 of 6:
    50 %); model b answers x once (1 of 4: 25 %). k = 3 is 75 % of x and 50 % of y; the median size
    is 5, where k makes 60 %."""
    df = pd.DataFrame({"model": ["a", "a", "a", "b"], "hits": [2, 4, 3, 1], "n_criteria": [4, 4, 6, 4]})
    result = case_accuracy(df, k=3, cases=["x", "x", "y", "x"])
    a, b = result["by_model"]["a"], result["by_model"]["b"]
    assert a["n_cases"] == 2 and a["mean"] == pytest.approx(62.5) and (a["min"], a["max"]) == (50.0, 75.0)
    assert a["q1"] == pytest.approx(56.25) and a["median"] == pytest.approx(62.5) and a["q3"] == pytest.approx(68.75)
    assert b["n_cases"] == 1 and b["median"] == 25.0
    assert len(result["edges"]) == 21 and result["edges"][:3] == [0.0, 5.0, 10.0]
    assert np.nonzero(a["counts"])[0].tolist() == [10, 15] and sum(a["counts"]) == 2  # 50 in [50, 55), 75 in [75, 80)
    assert np.nonzero(b["counts"])[0].tolist() == [5]
    assert result["k_accuracy"] == {"median_n_criteria": 5.0, "pct": 60.0, "min_n_criteria": 4, "max_n_criteria": 6,
                                    "low_pct": 50.0, "high_pct": 75.0}


def test_a_case_full_marks_fall_in_the_last_bin_and_k_beyond_a_case_stops_at_100():
    df = pd.DataFrame({"model": ["a"], "hits": [2], "n_criteria": [2]})
    result = case_accuracy(df, k=3, cases=["x"])
    assert result["by_model"]["a"]["counts"][-1] == 1
    assert result["k_accuracy"]["pct"] == 100.0 and result["k_accuracy"]["high_pct"] == 100.0


def test_the_coverage_page_draws_the_distributions_with_k_marked(viewer, tmp_path):  # noqa: F811
    bundle_import(path=strata_bundle(tmp_path / "s"))
    client = viewer()
    url = reverse("report-coverage", args=["strata"])
    response = client.get(url)
    html = response.content.decode()
    distribution = response.context["result"]["case_accuracy"]
    assert distribution["k_accuracy"]["pct"] == 50.0
    m1, m2 = distribution["by_model"]["m1"], distribution["by_model"]["m2"]
    assert (m1["mean"], m1["q1"], m1["median"], m1["q3"]) == (75.0, 62.5, 75.0, 87.5)
    assert m2["mean"] == pytest.approx(175 / 3) and (m2["min"], m2["median"], m2["max"]) == (25.0, 50.0, 100.0)
    spec = next(s for s in _specs(html) if s["title"]["text"].startswith("Case-level rubric accuracy per model"))
    assert "(n = 6 model-cases)" in spec["title"]["text"]
    assert spec["facet"]["row"]["title"] == "model" and spec["facet"]["row"]["sort"] == ["m1", "m2"]
    bars, rule = spec["spec"]["layer"]  # all cases have four criteria: no band
    assert bars["encoding"]["x"]["title"] == "case-level rubric accuracy (%)" and bars["encoding"]["y"]["title"] == "cases"
    assert rule["mark"]["type"] == "rule" and rule["encoding"]["x"]["datum"] == 50.0
    assert rule["encoding"]["color"]["datum"] == "k = 2 of 4 criteria (50.0 %)"  # the rule is in the legend
    assert bars["encoding"]["color"]["scale"]["domain"] == ["cases per bin", "k = 2 of 4 criteria (50.0 %)"]
    assert {"field": "n", "title": "n", "format": ","} in bars["encoding"]["tooltip"]
    assert {"group": "m1", "start": 75.0, "end": 80.0, "count": 1, "n": 3} in spec["data"]["values"]
    assert "on a case with 4\n    binary criteria: 50.0 %" in html and 'id="case-accuracy"' in html
    assert ">Lower quartile</abbr>" in html and ">Mean case accuracy (%)</abbr>" in html
    rows = client.get(url, {"format": "csv", "table": "case_accuracy"}).content.decode().splitlines()
    assert rows[0] == '"model","n_cases","mean","minimum","lower_quartile","median","upper_quartile","maximum"'
    assert rows[1].split(",")[:3] == ['"m1"', "3", "75.0"]


def test_the_coverage_page_of_a_project_without_sources_says_why(viewer, db):  # noqa: F811
    from annotation.models import Project

    Project.objects.create(slug="strata", name="Strata")
    client = viewer()
    html = client.get(reverse("report-coverage", args=["strata"])).content.decode()
    assert "has no cohort and no judge yet" in html and 'class="vega-spec"' not in html
