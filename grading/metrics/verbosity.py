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


def partial_correlation(x, y, covariates: pd.DataFrame) -> float | None:
    """Pearson correlation of ``x`` and ``y`` after each is regressed (least squares, with an
    intercept) on indicator columns of the categorical ``covariates`` (e.g. model and case): the
    correlation of the residuals. None when a residual has no spread."""
    xv, yv = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xv.shape != yv.shape or xv.size != len(covariates):
        raise MetricError("x, y and the covariates must have one row per observation")
    design = pd.get_dummies(covariates.astype(str), drop_first=True, dtype=float)
    matrix = np.column_stack([np.ones(xv.size), design.to_numpy()]) if design.shape[1] else np.ones((xv.size, 1))
    residuals = []
    for values in (xv, yv):
        coefficients, *_ = np.linalg.lstsq(matrix, values, rcond=None)
        residuals.append(values - matrix @ coefficients)
    rx, ry = residuals
    if np.std(rx) < 1e-12 or np.std(ry) < 1e-12:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])
