"""Intervals on request (issue 14, point 5, the commands done so far: coverage, scores and
agreement): --ci adds a bootstrap 95% interval resampling cases (scipy.stats.bootstrap, seeded),
checked against scipy run by hand on the same per-response terms."""
import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats

from grading.bundles import bundle_import
from tests.grading.reports.test_diagnostics import HITS, LENGTHS, verbose_bundle


def run(*args):
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


def by_hand(values, cases):
    values, cases = np.asarray(values, dtype=float), np.asarray(cases)
    unique, inverse = np.unique(cases, return_inverse=True)
    sums, counts = np.bincount(inverse, weights=values), np.bincount(inverse).astype(float)
    result = stats.bootstrap((sums, counts), lambda s, c, axis=-1: s.sum(axis=axis) / c.sum(axis=axis), paired=True,
                             vectorized=True, n_resamples=2000, method="percentile", rng=np.random.default_rng(0))
    return [result.confidence_interval.low, result.confidence_interval.high]


def test_coverage_and_scores_intervals_resample_cases(db, tmp_path):
    bundle_import(path=verbose_bundle(tmp_path / "verbose"))
    result = run("coverage", "--project", "verbose", "--source", "cohort:docs", "--ci")
    keys = sorted(LENGTHS)
    accuracy = [100 * HITS[k] / 4 for k in keys]
    cases = [c for c, _ in keys]
    overall = result["overall"]
    assert overall["rubric_accuracy_ci"] == pytest.approx(by_hand(accuracy, cases))
    assert overall["rubric_accuracy_ci"][0] <= overall["rubric_accuracy"] <= overall["rubric_accuracy_ci"][1]
    cacs = [100 * max(0, HITS[k] - 1) / 3 for k in keys]
    assert overall["cacs_ci"] == pytest.approx(by_hand(cacs, cases))
    m1 = [i for i, k in enumerate(keys) if k[1] == "m1"]
    assert result["by_model"]["m1"]["pass_at_k_ci"] == pytest.approx(
        by_hand([100.0 * (HITS[keys[i]] >= 2) for i in m1], [cases[i] for i in m1]))
    assert "rubric_accuracy_ci" not in run("coverage", "--project", "verbose", "--source", "cohort:docs")["overall"]

    scores = run("scores", "--project", "verbose", "--source", "cohort:docs", "--ci")
    low, high = scores["by_model"]["m2"]["mean_score_ci"]
    assert low <= scores["by_model"]["m2"]["mean_score"] <= high


def test_agreement_interval_of_the_case_level_mean(mini_project):
    result = run("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "cohort:group-2", "--ci")
    assert result["case_level"]["mean_ci"] is None  # every (model, case) group is of case c1: nothing to resample
    assert "mean_ci" not in run("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "cohort:group-2")["case_level"]


HUMAN = {("c1", "m1"): (4, "met"), ("c1", "m2"): (2, "not_met"), ("c2", "m1"): (3, "met"), ("c2", "m2"): (1, "met"),
         ("c3", "m1"): (4, "not_met"), ("c3", "m2"): (0, "not_met"), ("c4", "m1"): (2, "met"), ("c4", "m2"): (3, "met")}
JUDGE = {("c1", "m1"): (4, "met"), ("c1", "m2"): (3, "met"), ("c2", "m1"): (3, "met"), ("c2", "m2"): (2, "not_met"),
         ("c3", "m1"): (3, "not_met"), ("c3", "m2"): (1, "not_met"), ("c4", "m1"): (2, "met"), ("c4", "m2"): (4, "not_met")}


def two_criteria_bundle(directory):
    from tests.bundles import write_bundle

    options = [{"label": str(v), "value": v} for v in range(5)]
    rubric = [{"criterion_id": "grade", "text": "Grade 0-4", "kind": "ordinal", "options": options},
              {"criterion_id": "safe", "text": "Safe"}]
    project = {"slug": "ci", "name": "CI", "rubric": rubric, "cohorts": [{"name": "docs"}],
               "judges": [{"name": "j", "backend": "replay", "model": "m-j", "condition": "anonymized"}]}
    cases = [{"case_id": c, "prompt": c} for c in ("c1", "c2", "c3", "c4")]
    responses = [{"response_id": f"{c}-{m}", "case_id": c, "model": m, "text": "x"} for c, m in HUMAN]
    labels, judgments = [], []
    for (c, m), (grade, verdict) in HUMAN.items():
        labels += [{"response_id": f"{c}-{m}", "criterion_id": "grade", "cohort": "docs", "annotator": "d", "option": str(grade)},
                   {"response_id": f"{c}-{m}", "criterion_id": "safe", "cohort": "docs", "annotator": "d", "verdict": verdict}]
    for (c, m), (grade, verdict) in JUDGE.items():
        base = {"response_id": f"{c}-{m}", "judge": "j", "judge_model": "m-j", "condition": "anonymized", "sample": 0,
                "explanation": "", "evidence": [], "raw": ""}
        judgments += [{**base, "criterion_id": "grade", "option": str(grade)}, {**base, "criterion_id": "safe", "verdict": verdict}]
    return write_bundle(directory, {"project": project, "cases": cases, "responses": responses, "labels": labels,
                                    "judgments": judgments})


def test_reliability_report_and_calibrate_k_intervals(db, tmp_path):
    bundle_import(path=two_criteria_bundle(tmp_path / "ci"))
    result = run("reliability_report", "--project", "ci", "--a", "cohort:docs", "--b", "judge:j", "--ci")["pooled"]
    keys = sorted(HUMAN)
    cases = [c for c, _ in keys]
    agree = [float(HUMAN[k][1] == JUDGE[k][1]) for k in keys]
    diff = [JUDGE[k][0] - HUMAN[k][0] for k in keys]
    assert result["accuracy_ci"] == pytest.approx(by_hand(agree, cases))
    assert result["mean_difference_ci"] == pytest.approx(by_hand(diff, cases))
    assert result["mean_difference_ci"][0] <= result["mean_difference"] <= result["mean_difference_ci"][1]
    bias = run("bias_matrix", "--project", "ci", "--condition", "anonymized", "--criterion", "grade", "--ci")
    m1 = [k for k in keys if k[1] == "m1"]
    assert bias["scores_ci"][0][0] == pytest.approx(by_hand([JUDGE[k][0] for k in m1], [c for c, _ in m1]))
