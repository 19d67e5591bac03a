"""Judge fidelity, cross-grader robustness and Monte Carlo stability, worked by hand."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from grading.metrics import cross_grader_robustness, judge_fidelity, monte_carlo_stability

nan = np.nan


def test_fidelity_against_each_reference_uses_rows_both_decided():
    df = pd.DataFrame(
        {
            "judge": [1, 1, 0, 0, 1, 0],
            "cohort:A": [1, 0, 0, 0, nan, 1],
            "gold": [1, 1, nan, 0, 1, 0],
        }
    )
    result = judge_fidelity(df, judge="judge", references=["cohort:A", "gold"])
    a = result["cohort:A"]
    # rows 0,1,2,3,5: A = [1,0,0,0,1], judge = [1,1,0,0,0] → TP 1, FP 1, FN 1, TN 2
    assert (a.n, a.tp, a.fp, a.fn, a.tn) == (5, 1, 1, 1, 2)
    assert a.mf1 == pytest.approx((2 / 4 + 4 / 6) / 2)
    assert a.mf1 == pytest.approx(f1_score([1, 0, 0, 0, 1], [1, 1, 0, 0, 0], average="macro"))
    gold = result["gold"]
    assert gold.n == 5 and gold.percent_agreement == pytest.approx(1.0)


def test_cross_grader_robustness_worked_by_hand():
    rows = []
    for model, a, b in [
        ("X", [1, 1, 0, 0], [1, 0, 0, 0]),  # 50 % vs 25 %
        ("Y", [1, 1, 1, 0], [1, 1, 1, 1]),  # 75 % vs 100 %
        ("Z", [0, 0, 0, 1], [0, 0, 1, 0]),  # 25 % vs 25 %
    ]:
        rows += [(model, x, y) for x, y in zip(a, b)]
    rows.append(("Z", nan, 0))  # one decision only source b made
    df = pd.DataFrame(rows, columns=["model", "a", "b"])
    result = cross_grader_robustness(df)
    assert result.n_models == 3
    assert result.rates.loc["Z", "rate_b_pct"] == pytest.approx(20.0)
    assert result.rates.loc["Z", "n_a"] == 4 and result.rates.loc["Z", "n_b"] == 5
    # |50−25| + |75−100| + |25−20| over 3 models
    assert result.mean_abs_diff_pp == pytest.approx(55 / 3)
    # a ranks Y > X > Z; b ranks Y > X > Z (25 vs 20): identical
    assert result.spearman_rho == pytest.approx(1.0)
    assert result.top3_overlap == pytest.approx(1.0)


def test_cross_grader_rank_correlation_with_a_tie():
    rates = {"X": ([1, 1, 0, 0], [1, 0, 0, 0]), "Y": ([1, 1, 1, 0], [1, 1, 1, 1]), "Z": ([0, 0, 0, 1], [0, 0, 1, 0])}
    rows = [(m, x, y) for m, (a, b) in rates.items() for x, y in zip(a, b)]
    result = cross_grader_robustness(pd.DataFrame(rows, columns=["model", "a", "b"]))
    # b ties X and Z at 25 %: rank deviations a (0, 1, −1), b (−½, 1, −½) → rho = 1.5 / √3
    assert result.spearman_rho == pytest.approx(1.5 / math.sqrt(3))
    # tau-b: 2 concordant, 0 discordant, one tie in b → 2 / √(3·2)
    assert result.kendall_tau == pytest.approx(2 / math.sqrt(6))
    assert result.mean_abs_diff_pp == pytest.approx(50 / 3)


def test_monte_carlo_stability_worked_by_hand():
    df = pd.DataFrame(
        [
            ("J1", "r1", "c1", 1), ("J1", "r1", "c1", 0), ("J1", "r1", "c1", 1),
            ("J1", "r1", "c2", 1), ("J1", "r1", "c2", 1),
            ("J1", "r2", "c1", 0),
            ("J2", "r1", "c1", 0.2), ("J2", "r1", "c1", 0.4),
        ],
        columns=["judge", "response", "criterion", "value"],
    )  # fmt: skip
    result = monte_carlo_stability(df)
    items = result.per_item.set_index(["judge", "response", "criterion"])
    # [1, 0, 1]: mean 2/3, sample variance (1/9 + 4/9 + 1/9) / 2 = 1/3
    assert items.loc[("J1", "r1", "c1"), "mean"] == pytest.approx(2 / 3)
    assert items.loc[("J1", "r1", "c1"), "sd"] == pytest.approx(math.sqrt(1 / 3))
    assert items.loc[("J1", "r1", "c2"), "sd"] == 0.0
    assert np.isnan(items.loc[("J1", "r2", "c1"), "sd"])
    j1 = result.per_judge["J1"]
    assert (j1.n_items, j1.n_items_with_sd) == (3, 2)
    assert j1.mean_sd == pytest.approx(math.sqrt(1 / 3) / 2)
    assert result.per_judge["J2"].mean_sd == pytest.approx(math.sqrt(0.02))


def test_an_annotator_counts_in_the_pairwise_mean_with_more_pairs_than_the_minimum():
    from grading.metrics import annotator_included

    assert annotator_included({"mf1": 0.5, "n": 51}, min_n=50)
    assert not annotator_included({"mf1": 0.5, "n": 50}, min_n=50)  # more than the minimum, not as many
    assert not annotator_included({"mf1": None, "n": 80}, min_n=50)  # an undefined MF1 never counts
