"""Verbosity check (SPEC §3): does a grader reward longer answers? Pearson's r and
Spearman's rho (scipy) between response length in characters and the per-response
score, pooled over all responses and per source model, each with its n. Rows with a
missing score (an undefined weighted score) are left out; a correlation with fewer
than three pairs or a constant side is None.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .errors import MetricError

MIN_PAIRS = 3


@dataclass(frozen=True)
class LengthCorrelation:
    """Correlation of length (characters) with score over n responses, with two-sided p-values."""

    n: int
    pearson_r: float | None
    pearson_p: float | None
    spearman_rho: float | None
    spearman_p: float | None


@dataclass(frozen=True)
class VerbosityReport:
    pooled: LengthCorrelation
    per_model: dict


def _finite_or_none(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def length_score_correlation(lengths, scores) -> LengthCorrelation:
    """Pearson and Spearman between lengths and scores, dropping pairs with a missing score."""
    x = np.asarray(lengths, dtype=float)
    y = np.asarray(scores, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise MetricError("lengths and scores must be one-dimensional and of equal length")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = int(x.size)
    if n < MIN_PAIRS or np.all(x == x[0]) or np.all(y == y[0]):
        return LengthCorrelation(n, None, None, None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pearson = stats.pearsonr(x, y)
        spearman = stats.spearmanr(x, y)
    return LengthCorrelation(
        n=n,
        pearson_r=_finite_or_none(pearson.statistic),
        pearson_p=_finite_or_none(pearson.pvalue),
        spearman_rho=_finite_or_none(spearman.statistic),
        spearman_p=_finite_or_none(spearman.pvalue),
    )


def verbosity_check(
    df: pd.DataFrame, *, length: str = "length_chars", score: str = "score", model: str = "model"
) -> VerbosityReport:
    """Length–score correlations pooled and per model, from one row per response."""
    missing = [c for c in (length, score, model) if c not in df.columns]
    if missing:
        raise MetricError(f"missing column(s): {', '.join(missing)}")
    per_model = {
        name: length_score_correlation(rows[length].to_numpy(), rows[score].to_numpy())
        for name, rows in df.groupby(model, sort=True, observed=True)
    }
    return VerbosityReport(
        pooled=length_score_correlation(df[length].to_numpy(), df[score].to_numpy()),
        per_model=per_model,
    )
