"""Ranking comparison helpers: tie-breaking, overlap and undefined correlations."""

import math

import pytest

from grading.metrics import MetricError, compare_rankings, rank_models, top_n_overlap


def test_rank_models_breaks_ties_by_name_and_drops_missing():
    assert rank_models({"b": 0.5, "a": 0.5, "c": 0.9, "d": math.nan, "e": None}) == ["c", "a", "b"]


def test_top_n_overlap_fraction():
    a = {"m1": 5, "m2": 4, "m3": 3, "m4": 2}
    b = {"m1": 1, "m2": 4, "m3": 3, "m4": 5}
    # top-2: {m1, m2} vs {m4, m2}
    assert top_n_overlap(a, b, n=2) == pytest.approx(0.5)
    # n larger than the number of models: all four are in both tops
    assert top_n_overlap(a, b, n=5) == pytest.approx(1.0)
    with pytest.raises(MetricError):
        top_n_overlap(a, b, n=0)


def test_reversed_ranking_has_rho_and_tau_minus_one():
    a = {"w": 1, "x": 2, "y": 3, "z": 4}
    b = {"w": 40, "x": 30, "y": 20, "z": 10}
    result = compare_rankings(a, b)
    assert result.spearman_rho == pytest.approx(-1.0)
    assert result.kendall_tau == pytest.approx(-1.0)
    assert result.top3_overlap == pytest.approx(2 / 3)


def test_constant_or_tiny_rankings_have_no_correlation():
    assert compare_rankings({"a": 1, "b": 1}, {"a": 1, "b": 2}).spearman_rho is None
    assert compare_rankings({"a": 1}, {"a": 2}).kendall_tau is None
    assert compare_rankings({"a": 1, "b": 2}, {"c": 1}).n_models == 0


def test_scores_equal_but_for_summation_noise_are_a_tie():
    """A mean summed in another row order (PostgreSQL returns rows in its own order) differs in its
    last bits; that must not break a tie: the comparison equals the exact tie's."""
    exact = {"a": 0.3, "b": 0.3, "c": 0.1, "d": 0.5}
    noisy = {**exact, "b": 0.1 + 0.2}  # 0.30000000000000004
    assert noisy["b"] != exact["b"]
    reference = {"a": 0.2, "b": 0.4, "c": 0.1, "d": 0.9}
    assert compare_rankings(reference, noisy) == compare_rankings(reference, exact)
    assert rank_models(noisy) == rank_models(exact) == ["d", "a", "b", "c"]


def test_correlations_by_rankings_are_scipys_on_the_values_exactly():
    """compare_rankings asks scipy once per pair of rankings (dense ranks) and remembers the answer:
    Spearman's rho and Kendall's tau-b read only the order of the values, so each figure is the
    very float scipy gives on the values themselves, ties, constant sides and two models included."""
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(7)
    for _ in range(400):
        n = int(rng.integers(2, 13))
        x = np.round(rng.normal(size=n), int(rng.integers(0, 3)))  # few decimals: ties on both sides
        y = np.round(x + rng.normal(size=n) * rng.uniform(0, 2), int(rng.integers(0, 3)))
        if rng.random() < 0.05:
            y[:] = 1.0
        names = [f"m{i}" for i in range(n)]
        got = compare_rankings(dict(zip(names, x)), dict(zip(names, y)))

        def scipy_on_values(function):
            if np.all(x == x[0]) or np.all(y == y[0]):
                return None
            value = float(function(x, y).statistic)
            return value if math.isfinite(value) else None

        assert (got.spearman_rho, got.kendall_tau) == (scipy_on_values(stats.spearmanr), scipy_on_values(stats.kendalltau))
