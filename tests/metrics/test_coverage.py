"""Rubric accuracy, Pass@k, CACS@k, strata, k calibration and threshold sensitivity,
pinned to hand calculations."""

import pandas as pd
import pytest

from grading.metrics import (
    MetricError,
    calibrate_k,
    coverage,
    coverage_by_model,
    coverage_by_stratum,
    response_hits,
    threshold_sensitivity,
)


def _responses():
    # model A: N = 5, s = 3, 5, 1; model B: N = 4, s = 2, 4
    return pd.DataFrame(
        {
            "model": ["A", "A", "A", "B", "B"],
            "hits": [3, 5, 1, 2, 4],
            "n_criteria": [5, 5, 5, 4, 4],
            "difficulty": ["low", "high", "low", "low", "high"],
            "themes": [["triage", "drugs"], ["drugs"], [], ["triage"], ["triage", "drugs"]],
        }
    )


def test_coverage_by_model_worked_by_hand():
    result = coverage_by_model(_responses(), k=3)
    a, b = result["A"], result["B"]
    assert a.n_responses == 3 and b.n_responses == 2
    # A: accuracy (0.6 + 1 + 0.2)/3; Pass@3 2/3; CACS@3 = (1/3 + 3/3 + 0)/3
    assert a.rubric_accuracy_pct == pytest.approx(60.0)
    assert a.pass_at_k_pct == pytest.approx(200 / 3)
    assert a.cacs_at_k_pct == pytest.approx(100 * 4 / 9)
    # B: accuracy (0.5 + 1)/2; Pass@3 1/2; CACS@3 = (0/2 + 2/2)/2
    assert b.rubric_accuracy_pct == pytest.approx(75.0)
    assert b.pass_at_k_pct == pytest.approx(50.0)
    assert b.cacs_at_k_pct == pytest.approx(50.0)


def test_cacs_equals_paper_form_for_fixed_n():
    a = _responses().query("model == 'A'")
    k, n = 3, 5
    paper = 100 / (len(a) * (n - k + 1)) * sum(max(0, s - k + 1) for s in a["hits"])
    assert coverage(a, k=k).cacs_at_k_pct == pytest.approx(paper)


def test_overall_coverage_worked_by_hand():
    result = coverage(_responses(), k=3)
    assert result.n_responses == 5
    assert result.rubric_accuracy_pct == pytest.approx(100 * 3.3 / 5)
    assert result.pass_at_k_pct == pytest.approx(60.0)
    assert result.cacs_at_k_pct == pytest.approx(100 * (7 / 3) / 5)


def test_response_that_cannot_reach_k_scores_zero_and_is_counted():
    df = pd.DataFrame({"hits": [2, 4], "n_criteria": [2, 5]})
    result = coverage(df, k=3)
    # first response: N − k + 1 = 0 → term 0; second: (4 − 2) / 3
    assert result.n_unreachable == 1
    assert result.cacs_at_k_pct == pytest.approx(100 * (2 / 3) / 2)
    assert result.pass_at_k_pct == pytest.approx(50.0)


def test_invalid_counts_and_k_are_rejected():
    with pytest.raises(MetricError):
        coverage(pd.DataFrame({"hits": [6], "n_criteria": [5]}), k=1)
    with pytest.raises(MetricError):
        coverage(pd.DataFrame({"hits": [0], "n_criteria": [0]}), k=1)
    with pytest.raises(MetricError):
        coverage(_responses(), k=2.5)


def test_scalar_stratum_per_model():
    result = coverage_by_stratum(_responses(), k=3, stratum="difficulty")
    low_a = result[("low", "A")]
    # A low: s = 3, 1 of 5 → accuracy 40 %, CACS (1/3 + 0)/2
    assert low_a.n_responses == 2
    assert low_a.rubric_accuracy_pct == pytest.approx(40.0)
    assert low_a.cacs_at_k_pct == pytest.approx(100 / 6)
    assert set(result) == {("low", "A"), ("high", "A"), ("low", "B"), ("high", "B")}


def test_list_stratum_counts_a_response_in_each_theme():
    result = coverage_by_stratum(_responses(), k=3, stratum="themes", model=None)
    # drugs: A(3,5), A(5,5), B(4,4); triage: A(3,5), B(2,4), B(4,4); A(1,5) has no theme
    assert result["drugs"].n_responses == 3
    assert result["triage"].n_responses == 3
    assert result["drugs"].rubric_accuracy_pct == pytest.approx(100 * (0.6 + 1 + 1) / 3)
    assert result["triage"].pass_at_k_pct == pytest.approx(200 / 3)
    assert set(result) == {"drugs", "triage"}


def test_response_hits_from_decisions():
    decisions = pd.DataFrame(
        {"response": [1, 1, 1, 2, 2], "model": ["A", "A", "A", "B", "B"], "value": [1, 0, 1, 0, 0]}
    )
    hits = response_hits(decisions).set_index("response")
    assert hits.loc[1, "hits"] == 2 and hits.loc[1, "n_criteria"] == 3
    assert hits.loc[2, "hits"] == 0 and hits.loc[2, "model"] == "B"


@pytest.mark.parametrize(
    "hits, k, mean",
    [
        ([2, 3], 3, 2.5),  # half rounds up (Python's round(2.5) would give 2)
        ([1, 2], 2, 1.5),
        ([1, 2, 2], 2, 5 / 3),
        ([14, 15, 15, 14], 15, 14.5),
        ([0.5, 2.5], 2, 1.5),
    ],
)
def test_calibrate_k_rounds_half_up(hits, k, mean):
    result = calibrate_k(hits)
    assert result.k == k
    assert result.mean_hits == pytest.approx(mean)
    assert result.n == len(hits)


def test_calibrate_k_needs_responses():
    with pytest.raises(MetricError):
        calibrate_k([])


def _ranking_data():
    # N = 6 for every response, k = 3 (CACS term max(0, s − 2) / 4):
    # A (6,6) 100 | B (6,0) 50 | C (5,4) 62.5 | D (3,4) 37.5 | E (2,2) 0
    pairs = {"A": (6, 6), "B": (6, 0), "C": (5, 4), "D": (3, 4), "E": (2, 2)}
    rows = [(m, s, 6) for m, ss in pairs.items() for s in ss]
    return pd.DataFrame(rows, columns=["model", "hits", "n_criteria"])


def test_threshold_sensitivity_worked_by_hand():
    result = threshold_sensitivity(_ranking_data(), k=3, ks=[2])
    assert result.reference_scores["C"] == pytest.approx(62.5)
    alts = {alt.name: alt for alt in result.alternatives}
    assert list(alts) == ["CACS@2", "rubric_accuracy", "Pass@3"]

    # accuracy ranks A C D B E against A C B D E: Σd² = 2 → rho = 1 − 12/120; one discordant pair of 10
    acc = alts["rubric_accuracy"].comparison
    assert acc.spearman_rho == pytest.approx(0.9)
    assert acc.kendall_tau == pytest.approx(0.8)
    assert acc.top3_overlap == pytest.approx(2 / 3)
    assert acc.top5_overlap == pytest.approx(1.0)

    # Pass@3: A, C, D tie at 100 (mid-rank 4), B 50, E 0 → rho = 6 / √80; top 3 by name {A, C, D}
    pass_k = alts["Pass@3"].comparison
    assert pass_k.spearman_rho == pytest.approx(6 / 80**0.5)
    assert pass_k.top3_overlap == pytest.approx(2 / 3)

    # CACS@2 (term max(0, s − 1)/5): A 100, C 70, B 50, D 50, E 20 → rho = √(9.5/10)
    cacs2 = alts["CACS@2"].comparison
    assert alts["CACS@2"].scores["D"] == pytest.approx(50.0)
    assert cacs2.spearman_rho == pytest.approx((9.5 / 10) ** 0.5)
    assert cacs2.top3_overlap == pytest.approx(1.0)
    assert cacs2.n_models == 5


def test_coverage_terms_per_response_by_hand():
    from grading.metrics import coverage_terms

    # k = 3: (s, N) = (3, 5) -> accuracy 0.6, passed, CACS (3 - 2) / (5 - 2) = 1/3; (5, 5) -> 1, 1, 1;
    # (1, 5) -> 0.2, not passed, 0; (2, 4) -> 0.5, not passed, 0; (4, 4) -> 1, passed, (4 - 2) / (4 - 2) = 1
    terms = coverage_terms(_responses(), k=3)
    assert terms["accuracy"].tolist() == pytest.approx([0.6, 1.0, 0.2, 0.5, 1.0])
    assert terms["passed"].tolist() == [1.0, 1.0, 0.0, 0.0, 1.0]
    assert terms["cacs"].tolist() == pytest.approx([1 / 3, 1.0, 0.0, 0.0, 1.0])
    # their means are coverage()'s figures, in percent
    assert 100 * terms["cacs"].mean() == pytest.approx(coverage(_responses(), k=3).cacs_at_k_pct)
    # N < k: CACS 0, never a division by a negative room
    short = pd.DataFrame({"hits": [2], "n_criteria": [2]})
    assert coverage_terms(short, k=4)["cacs"].tolist() == [0.0]
    with pytest.raises(MetricError):
        coverage_terms(_responses(), k=-1)
