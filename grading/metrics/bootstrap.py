"""Percentile bootstrap confidence interval for a mean (SPEC §3: every mean may carry
a 95% interval on request). Resamples are drawn with numpy's seeded default_rng in
chunks, so memory stays bounded for hundreds of thousands of values while the result
is the same for the same seed. Missing values are dropped and not counted in n.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from .errors import MetricError

DEFAULT_RESAMPLES = 2000
_MAX_CELLS_PER_CHUNK = 4_000_000


class BootstrapCI(NamedTuple):
    """(low, high, n) — unpacks like a tuple."""

    low: float
    high: float
    n: int


def bootstrap_mean_ci(
    values, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> BootstrapCI:
    """Percentile interval of the mean: the (1−c)/2 and (1+c)/2 quantiles of resampled means."""
    x = np.asarray(values, dtype=float).ravel()
    x = x[~np.isnan(x)]
    if x.size == 0:
        raise MetricError("a bootstrap interval needs at least one value")
    if not 0 < confidence < 1:
        raise MetricError("confidence must lie strictly between 0 and 1")
    if n_resamples < 1:
        raise MetricError("n_resamples must be at least 1")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, _MAX_CELLS_PER_CHUNK // x.size)
    index_type = np.int32 if x.size < 2**31 else np.int64  # int32 draws are about twice as fast
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        idx = rng.integers(0, x.size, size=(stop - start, x.size), dtype=index_type)
        means[start:stop] = x[idx].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return BootstrapCI(low=float(low), high=float(high), n=int(x.size))


def case_bootstrap_mean_ci(values, cases, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                           seed: int = 0) -> BootstrapCI | None:
    """Percentile interval of the mean of ``values`` resampling whole cases (clusters), by
    ``scipy.stats.bootstrap``: each resample draws cases with replacement and takes the mean of
    all their values (sum of the drawn cases' sums / sum of their counts). None with fewer than
    two cases (nothing to resample). Missing values are dropped."""
    from scipy import stats  # lazy: SciPy loads on first use, not at start-up

    frame = np.asarray(values, dtype=float).ravel()
    groups = np.asarray(cases).ravel()
    if frame.shape != groups.shape:
        raise MetricError("values and cases differ in length")
    keep = ~np.isnan(frame)
    frame, groups = frame[keep], groups[keep]
    unique, inverse = np.unique(groups, return_inverse=True)
    if unique.size < 2:
        return None
    sums = np.bincount(inverse, weights=frame)
    counts = np.bincount(inverse).astype(float)

    def ratio(s, c, axis=-1):
        return np.sum(s, axis=axis) / np.sum(c, axis=axis)

    with np.errstate(invalid="ignore", divide="ignore"):
        result = stats.bootstrap((sums, counts), ratio, paired=True, vectorized=True, n_resamples=n_resamples,
                                 confidence_level=confidence, method="percentile", rng=np.random.default_rng(seed))
    return BootstrapCI(low=float(result.confidence_interval.low), high=float(result.confidence_interval.high),
                       n=int(frame.size))


MIN_DEFINED_SHARE = 0.9


def case_bootstrap_ci(cases, statistic, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = 0):
    """Percentile interval of any statistic of row-level data, resampling whole cases by
    ``scipy.stats.bootstrap``: each resample draws the cases with replacement and the statistic is
    computed on the rows of the drawn cases, each row repeated as often as its case was drawn (so
    the statistic must not depend on the order of its rows). ``cases``: the case of each row;
    ``statistic(rows)``: a float (NaN or None when undefined), or a tuple of them, from an array
    of row positions. Returns a BootstrapCI (n = the number of rows), or a list of them for a
    tuple; None with fewer than two cases, and for a figure that fewer than 90% of the resamples
    define (an interval conditional on a rare event would mislead)."""
    from scipy import stats  # lazy: SciPy loads on first use, not at start-up

    groups = np.asarray(cases).ravel()
    unique, inverse = np.unique(groups, return_inverse=True)
    if unique.size < 2:
        return None
    positions = np.arange(groups.size)
    several = []

    def on_cases(drawn):
        times = np.bincount(drawn, minlength=unique.size)
        value = statistic(np.repeat(positions, times[inverse]))
        if isinstance(value, tuple):
            several.append(True)
            return np.array([np.nan if v is None else float(v) for v in value])
        return np.nan if value is None else float(value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined resamples are counted below, not reported by scipy
        draws = stats.bootstrap((np.arange(unique.size),), on_cases, vectorized=False, n_resamples=n_resamples,
                                method="percentile", rng=np.random.default_rng(seed)).bootstrap_distribution
    tail = (1 - confidence) / 2

    def interval(values):
        values = values[~np.isnan(values)]
        if values.size == 0 or values.size < MIN_DEFINED_SHARE * n_resamples:
            return None
        low, high = np.quantile(values, [tail, 1 - tail])
        return BootstrapCI(low=float(low), high=float(high), n=int(groups.size))

    return [interval(row) for row in np.atleast_2d(draws)] if several else interval(np.ravel(draws))
