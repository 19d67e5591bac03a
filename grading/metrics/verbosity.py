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
    correlation of the residuals. None when a residual has no spread.

    The residuals are those of that regression, computed by Frisch–Waugh–Lovell: the covariate
    with the most levels is absorbed by subtracting its group means (the projection on its
    indicators and the intercept), and what is left is regressed on the other covariates'
    indicators, demeaned alike. At 2,500 cases the full indicator matrix took minutes."""
    xv, yv = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xv.shape != yv.shape or xv.size != len(covariates):
        raise MetricError("x, y and the covariates must have one row per observation")
    labels = covariates.astype(str)
    if labels.shape[1]:
        widest = max(labels.columns, key=lambda c: labels[c].nunique())
        codes = pd.factorize(labels[widest])[0]
        others = labels.drop(columns=widest)
        design = (pd.get_dummies(others, drop_first=True, dtype=float).to_numpy() if others.shape[1]
                  else np.zeros((xv.size, 0)))
        values = _group_demeaned(np.column_stack([xv, yv, design]), codes)
        values, design = values[:, :2], values[:, 2:]
        if design.shape[1]:
            coefficients, *_ = np.linalg.lstsq(design, values, rcond=None)
            values = values - design @ coefficients
        rx, ry = values[:, 0], values[:, 1]
    else:
        rx, ry = xv - xv.mean(), yv - yv.mean()
    if np.std(rx) < 1e-12 or np.std(ry) < 1e-12:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def _group_demeaned(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``values`` (rows × columns) less the mean of each row's group (``codes``: 0..g-1)."""
    counts = np.bincount(codes).astype(float)
    means = np.column_stack([np.bincount(codes, weights=column) for column in values.T]) / counts[:, None]
    return values - means[codes]
