"""Comparing two rankings of the same models. Threshold sensitivity (coverage) and
cross-grader robustness (judges) both ask how far a second score per model reorders
the models: Spearman's rho and Kendall's tau from scipy over the models both sides
scored, plus top-n overlap. A ranking sorts by score descending and breaks ties by
model name, so the top-n sets are deterministic; top-n overlap is the fraction
|top_n(a) ∩ top_n(b)| / min(n, number of models), in [0, 1].
"""

from __future__ import annotations

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
    clean = _finite_scores(scores)
    return sorted(clean, key=lambda m: (-clean[m], str(m)))


def top_n_overlap(a: Mapping[str, float], b: Mapping[str, float], *, n: int) -> float | None:
    """Fraction of the top-n models of `a` that are also top-n in `b`, over the models both scored."""
    if n < 1:
        raise MetricError("n must be at least 1")
    common = set(_finite_scores(a)) & set(_finite_scores(b))
    if not common:
        return None
    size = min(n, len(common))
    top_a = rank_models({m: a[m] for m in common})[:size]
    top_b = rank_models({m: b[m] for m in common})[:size]
    return len(set(top_a) & set(top_b)) / size


def _correlation(func, x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(func(x, y).statistic)
    return value if math.isfinite(value) else None


def compare_rankings(reference: Mapping[str, float], other: Mapping[str, float]) -> RankComparison:
    """Spearman rho, Kendall tau (tau-b) and top-3 / top-5 overlap of two per-model scores.

    Only models with a finite score on both sides take part; correlations are None
    with fewer than two such models or when either side is constant.
    """
    ref, oth = _finite_scores(reference), _finite_scores(other)
    models = sorted(set(ref) & set(oth), key=str)
    x = np.array([ref[m] for m in models], dtype=float)
    y = np.array([oth[m] for m in models], dtype=float)
    return RankComparison(
        n_models=len(models),
        spearman_rho=_correlation(stats.spearmanr, x, y),
        kendall_tau=_correlation(stats.kendalltau, x, y),
        top3_overlap=top_n_overlap(ref, oth, n=3),
        top5_overlap=top_n_overlap(ref, oth, n=5),
    )
