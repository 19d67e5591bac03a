"""Consensus-deviation and human–LLM bias matrices, worked by hand."""

import numpy as np
import pandas as pd
import pytest

from grading.metrics import (
    attenuation_by_judge,
    bias_matrix,
    consensus_deviation,
    human_llm_bias,
    self_bias_attenuation,
)

# Mean scores S[judge][target]; each cell comes from two responses around it.
S = {
    "A": {"A": 0.9, "B": 0.6, "C": 0.5},
    "B": {"A": 0.6, "B": 0.8, "C": 0.4},
    "C": {"A": 0.6, "B": 0.5, "C": 0.9},
}


def _rows(matrix, spread=0.1):
    rows = []
    for judge, targets in matrix.items():
        for target, mean in targets.items():
            rows += [(judge, target, mean - spread), (judge, target, mean + spread)]
    return pd.DataFrame(rows, columns=["judge", "target", "score"])


def test_bias_matrix_worked_by_hand():
    result = bias_matrix(_rows(S))
    assert result.scores.loc["A", "A"] == pytest.approx(0.9)
    assert result.counts.loc["A", "A"] == 2
    # Bias[A][A] = 0.9 − (0.6 + 0.6)/2; Bias[B][A] = 0.6 − (0.9 + 0.6)/2
    assert result.bias.loc["A", "A"] == pytest.approx(0.3)
    assert result.bias.loc["B", "A"] == pytest.approx(-0.15)
    assert result.bias.loc["C", "B"] == pytest.approx(0.5 - (0.6 + 0.8) / 2)
    assert result.self_bias == pytest.approx({"A": 0.3, "B": 0.25, "C": 0.45})


def test_columns_sum_to_zero():
    rng = np.random.default_rng(5)
    scores = pd.DataFrame(rng.random((6, 4)), index=list("abcdef"), columns=list("wxyz"))
    bias = consensus_deviation(scores)
    assert np.allclose(bias.sum(axis=0), 0.0)
    assert not np.allclose(bias.to_numpy(), 0.0)


def test_self_exclusion_is_n_over_n_minus_one_times_naive_deviation():
    rng = np.random.default_rng(9)
    n = 5
    scores = pd.DataFrame(rng.random((n, 3)), index=list("abcde"), columns=list("xyz"))
    naive = scores - scores.mean(axis=0)  # deviation from the all-judge mean
    bias = consensus_deviation(scores)
    assert np.allclose(bias.to_numpy(), n / (n - 1) * naive.to_numpy())
    # the naive deviation is attenuated by (n − 1)/n
    assert not np.allclose(bias.to_numpy(), naive.to_numpy())


def test_missing_cell_stays_nan_and_others_use_present_judges():
    matrix = {k: dict(v) for k, v in S.items()}
    del matrix["C"]["A"]  # judge C never scored target A
    matrix["A"]["D"] = 0.7  # only judge A scored target D
    result = bias_matrix(_rows(matrix))
    assert np.isnan(result.bias.loc["C", "A"])
    # with C absent, Bias[A][A] = 0.9 − 0.6 and Bias[B][A] = 0.6 − 0.9
    assert result.bias.loc["A", "A"] == pytest.approx(0.3)
    assert result.bias.loc["B", "A"] == pytest.approx(-0.3)
    assert result.bias["D"].isna().all()
    assert result.bias["A"].sum() == pytest.approx(0.0)


def test_judge_names_mapped_to_models():
    df = _rows(S)
    df["judge"] = df["judge"].map({"A": "judge-a", "B": "judge-b", "C": "judge-c"})
    models = {"judge-a": "A", "judge-b": "B", "judge-c": "C"}
    expected = {"judge-a": 0.3, "judge-b": 0.25, "judge-c": 0.45}
    assert bias_matrix(df, judge_models=models).self_bias == pytest.approx(expected)
    assert bias_matrix(df).self_bias == {}


def test_attenuation():
    assert self_bias_attenuation(attributed=0.3, anonymized=0.1) == pytest.approx(2 / 3)
    assert self_bias_attenuation(attributed=-0.2, anonymized=0.3) == pytest.approx(-0.5)
    assert self_bias_attenuation(attributed=0.0, anonymized=0.1) is None
    assert self_bias_attenuation(attributed=0.3, anonymized=None) is None
    anon = {k: dict(v) for k, v in S.items()}
    anon["A"]["A"] = 0.7  # Bias[A][A] becomes 0.7 − 0.6 = 0.1
    result = attenuation_by_judge(attributed=bias_matrix(_rows(S)), anonymized=bias_matrix(_rows(anon)))
    assert result["A"] == pytest.approx(1 - 0.1 / 0.3)


def test_human_llm_bias_worked_by_hand():
    humans = pd.DataFrame({"target": ["A", "A", "B", "C", "C"], "score": [0.6, 0.8, 0.6, 0.5, np.nan]})
    result = human_llm_bias(_rows(S), humans)
    assert result.human_means.to_dict() == pytest.approx({"A": 0.7, "B": 0.6, "C": 0.5})
    assert result.matrix.loc["A", "A"] == pytest.approx(0.2)
    assert result.matrix.loc["B", "C"] == pytest.approx(-0.1)
    assert result.per_judge_mean["C"] == pytest.approx((-0.1 - 0.1 + 0.4) / 3)
    # mean of all nine cells: 5.8/9 − 1.8/3
    assert result.overall_mean == pytest.approx(5.8 / 9 - 0.6)


def test_monte_carlo_cells_from_known_samples():
    import math

    import pandas as pd

    from grading.metrics import monte_carlo_cells

    rows = pd.DataFrame([
        # judge j, target t: sample means 4 (items 3, 5), 6 (items 6, 6), 8 (one item; the other NaN: no value)
        ("j", "t", 0, 3.0), ("j", "t", 0, 5.0), ("j", "t", 1, 6.0), ("j", "t", 1, 6.0), ("j", "t", 2, 8.0), ("j", "t", 2, None),
        ("j", "u", 0, 1.0),  # one sample: no sd
    ], columns=["judge", "target", "sample", "score"])
    mu, sd, n = monte_carlo_cells(rows)
    assert mu.at["j", "t"] == 6.0 and sd.at["j", "t"] == math.sqrt(4.0) and n.at["j", "t"] == 3
    assert mu.at["j", "u"] == 1.0 and math.isnan(sd.at["j", "u"]) and n.at["j", "u"] == 1
