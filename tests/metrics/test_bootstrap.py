"""Percentile bootstrap interval for a mean: degenerate data, seeding and agreement
with the normal approximation and scipy's percentile bootstrap."""

import numpy as np
import pytest
from scipy import stats

from grading.metrics import MetricError, bootstrap_mean_ci
from grading.metrics import bootstrap as bootstrap_module


def test_constant_values_give_a_point_interval():
    low, high, n = bootstrap_mean_ci([0.7] * 20)
    assert (low, high, n) == (pytest.approx(0.7), pytest.approx(0.7), 20)


def test_seeded_and_missing_values_not_counted():
    values = [0.1, 0.9, 0.4, np.nan, 0.6, 0.2]
    first = bootstrap_mean_ci(values, seed=3)
    assert first == bootstrap_mean_ci(values, seed=3)
    assert first != bootstrap_mean_ci(values, seed=4)
    assert first.n == 5
    assert first.low < np.nanmean(values) < first.high


def test_close_to_normal_approximation_and_scipy():
    rng = np.random.default_rng(12)
    x = rng.normal(10, 2, 400)
    ci = bootstrap_mean_ci(x, n_resamples=4000, seed=1)
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
    assert ci.low == pytest.approx(x.mean() - half, abs=0.03)
    assert ci.high == pytest.approx(x.mean() + half, abs=0.03)
    ref = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=4000, random_state=1)
    assert ci.low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert ci.high == pytest.approx(ref.confidence_interval.high, abs=0.03)


def test_chunked_resampling_keeps_the_interval(monkeypatch):
    x = np.random.default_rng(6).random(1000)
    whole = bootstrap_mean_ci(x, seed=2)
    monkeypatch.setattr(bootstrap_module, "_MAX_CELLS_PER_CHUNK", 5000)
    chunked = bootstrap_mean_ci(x, seed=2)
    assert chunked.low == pytest.approx(whole.low, abs=0.01)
    assert chunked.high == pytest.approx(whole.high, abs=0.01)


def test_bad_input():
    with pytest.raises(MetricError):
        bootstrap_mean_ci([])
    with pytest.raises(MetricError):
        bootstrap_mean_ci([1.0], confidence=1.5)
