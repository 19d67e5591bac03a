"""Comparing two rankings of the same models. Threshold sensitivity (coverage) and
cross-grader robustness (judges) both ask how far a second score per model reorders
the models: Spearman's rho and Kendall's tau from scipy over the models both sides
scored (remembered per pair of rankings: a bootstrap asks for the same few thousands of times),
plus top-n overlap. A ranking sorts by score descending and breaks ties by
model name, so the top-n sets are deterministic; top-n overlap is the fraction
|top_n(a) ∩ top_n(b)| / min(n, number of models), in [0, 1].
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .errors import MetricError


@dataclass(frozen=True)
class RankComparison:
    """How a second per-model score reorders the models relative to a reference."""

    n_models: int
    spearman_rho: float | None
    kendall_tau: float | None
    top3_overlap: float | None
    top5_overlap: float | None


# Scores are compared at this many significant digits: a mean summed in another row order (the
# database returns rows in its own order) differs in its last bits, and must not break or make a tie.
SIGNIFICANT_DIGITS = 12


def _finite_scores(scores: Mapping[str, float]) -> dict[str, float]:
    return {m: float(f"{float(v):.{SIGNIFICANT_DIGITS}g}") for m, v in scores.items()
            if v is not None and math.isfinite(float(v))}


def rank_models(scores: Mapping[str, float]) -> list[str]:
    """Model names best first: score descending, ties broken by name; NaN/None scores are left out."""
    return _best_first(_finite_scores(scores))


def _best_first(clean: Mapping[str, float]) -> list[str]:
    return sorted(clean, key=lambda m: (-clean[m], str(m)))


def top_n_overlap(a: Mapping[str, float], b: Mapping[str, float], *, n: int) -> float | None:
    """Fraction of the top-n models of `a` that are also top-n in `b`, over the models both scored."""
    if n < 1:
        raise MetricError("n must be at least 1")
    return _top_n_overlap(_finite_scores(a), _finite_scores(b), n)


def _top_n_overlap(a: Mapping[str, float], b: Mapping[str, float], n: int) -> float | None:
    """``top_n_overlap`` of scores already rounded and finite (``_finite_scores``)."""
    common = set(a) & set(b)
    if not common:
        return None
    size = min(n, len(common))
    top_a = _best_first({m: a[m] for m in common})[:size]
    top_b = _best_first({m: b[m] for m in common})[:size]
    return len(set(top_a) & set(top_b)) / size


def _correlation(func, x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(func(x, y).statistic)
    return value if math.isfinite(value) else None


def _ranks(values: np.ndarray) -> tuple[int, ...]:
    """Each value's dense rank (equal values share one): all that Spearman's rho and Kendall's tau read."""
    return tuple(np.unique(values, return_inverse=True)[1].tolist())


@functools.lru_cache(maxsize=8192)
def _rank_correlations(x_ranks: tuple[int, ...], y_ranks: tuple[int, ...]) -> tuple[float | None, float | None]:
    """Spearman's rho and Kendall's tau-b by scipy, of two rankings. Both depend on the order of
    the values alone, so scipy given the dense ranks returns what it returns given the values; a
    bootstrap of a cross-grader comparison asks for the same few rankings thousands of times."""
    x, y = np.array(x_ranks, dtype=float), np.array(y_ranks, dtype=float)
    return _correlation(stats.spearmanr, x, y), _correlation(stats.kendalltau, x, y)


def compare_rankings(reference: Mapping[str, float], other: Mapping[str, float]) -> RankComparison:
    """Spearman rho, Kendall tau (tau-b) and top-3 / top-5 overlap of two per-model scores.

    Only models with a finite score on both sides take part; correlations are None
    with fewer than two such models or when either side is constant.
    """
    ref, oth = _finite_scores(reference), _finite_scores(other)
    models = sorted(set(ref) & set(oth), key=str)
    x = np.array([ref[m] for m in models], dtype=float)
    y = np.array([oth[m] for m in models], dtype=float)
    rho, tau = _rank_correlations(_ranks(x), _ranks(y))
    return RankComparison(
        n_models=len(models),
        spearman_rho=rho,
        kendall_tau=tau,
        top3_overlap=_top_n_overlap(ref, oth, 3),
        top5_overlap=_top_n_overlap(ref, oth, 5),
    )
