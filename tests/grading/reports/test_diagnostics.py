"""ClinConsensus' diagnostics on the command line (issue 14, point 3): cross_grader for any two
sources (by hand on the mini project), and verbosity with the partial correlation checked
against a hand computation (residuals of length and score on model and case indicators, which
in a balanced two-way design are x − model mean − case mean + grand mean)."""
import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from scipy import stats

from grading.bundles import bundle_import
from grading.metrics import partial_correlation
from tests.bundles import write_bundle


def run(*args):
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_cross_grader_by_hand(mini_project):
    result = run("cross_grader", "--project", "mini", "--a", "cohort:group-1", "--b", "judge:judge-a")
    # positive rates: model-a 2/3 (group-1) vs 1/3 (judge), model-b 1/3 vs 0: the same order, 33.3 points apart
    assert result["n_models"] == 2 and result["spearman_rho"] == pytest.approx(1.0)
    assert result["mean_abs_diff_pp"] == pytest.approx(100 / 3)
    assert result["rates"]["model-a"]["a_pct"] == pytest.approx(200 / 3) and result["rates"]["model-b"]["b_pct"] == 0.0
    cohorts = run("cross_grader", "--project", "mini", "--a", "cohort:group-1", "--b", "cohort:group-2")
    assert cohorts["b"] == "cohort:group-2" and set(cohorts["rates"]) == {"model-a", "model-b", "physician"}


def _two_way_residuals(values: np.ndarray, models: list, cases: list) -> np.ndarray:
    frame = pd.DataFrame({"v": values, "m": models, "c": cases})
    return (frame["v"] - frame.groupby("m")["v"].transform("mean") - frame.groupby("c")["v"].transform("mean")
            + frame["v"].mean()).to_numpy()


def test_partial_correlation_against_a_hand_computation():
    models = ["a", "a", "a", "b", "b", "b"]
    cases = ["c1", "c2", "c3", "c1", "c2", "c3"]
    length = np.array([120.0, 300.0, 90.0, 150.0, 260.0, 200.0])
    score = np.array([40.0, 80.0, 20.0, 60.0, 70.0, 90.0])
    rx, ry = _two_way_residuals(length, models, cases), _two_way_residuals(score, models, cases)
    expected = np.corrcoef(rx, ry)[0, 1]
    assert partial_correlation(length, score, pd.DataFrame({"model": models, "case": cases})) == pytest.approx(expected)


LENGTHS = {("c1", "m1"): 400, ("c1", "m2"): 120, ("c2", "m1"): 650, ("c2", "m2"): 200, ("c3", "m1"): 300, ("c3", "m2"): 280}
HITS = {("c1", "m1"): 4, ("c1", "m2"): 1, ("c2", "m1"): 3, ("c2", "m2"): 2, ("c3", "m1"): 2, ("c3", "m2"): 4}


def verbose_bundle(directory):
    cases = [{"case_id": c, "prompt": f"Question {c}", "criteria": [
        {"criterion_id": f"{c}-{j}", "text": f"Point {j}"} for j in range(4)]} for c in ("c1", "c2", "c3")]
    responses = [{"response_id": f"{c}-{m}", "case_id": c, "model": m, "text": "x" * n} for (c, m), n in LENGTHS.items()]
    labels = [{"response_id": f"{c}-{m}", "criterion_id": f"{c}-{j}", "cohort": "docs", "annotator": "d1",
               "verdict": "met" if j < HITS[(c, m)] else "not_met"} for (c, m) in LENGTHS for j in range(4)]
    project = {"slug": "verbose", "name": "Verbose", "coverage_k": 2, "cohorts": [{"name": "docs"}]}
    return write_bundle(directory, {"project": project, "cases": cases, "responses": responses, "labels": labels,
                                    "judgments": []})


def test_verbosity_by_hand(db, tmp_path):
    bundle_import(path=verbose_bundle(tmp_path / "verbose"))
    result = run("verbosity", "--project", "verbose", "--source", "cohort:docs")
    keys = sorted(LENGTHS)
    length = np.array([LENGTHS[k] for k in keys], dtype=float)
    hits = np.array([HITS[k] for k in keys], dtype=float)
    accuracy, cacs = 100 * hits / 4, 100 * np.maximum(0, hits - 2 + 1) / (4 - 2 + 1)
    assert (result["k"], result["n"]) == (2, 6)
    assert result["rubric_accuracy"]["pearson"] == pytest.approx(stats.pearsonr(length, accuracy)[0])
    assert result["rubric_accuracy"]["spearman"] == pytest.approx(stats.spearmanr(length, accuracy)[0])
    assert result["cacs"]["pearson"] == pytest.approx(stats.pearsonr(length, cacs)[0])
    models, cases = [m for _, m in keys], [c for c, _ in keys]
    rx, ry = _two_way_residuals(length, models, cases), _two_way_residuals(accuracy, models, cases)
    assert result["rubric_accuracy"]["partial"] == pytest.approx(np.corrcoef(rx, ry)[0, 1])
