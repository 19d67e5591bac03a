"""Score calibration of a judge to the human score distribution (SPEC §3, after
RULERS): g(z) = F_human⁻¹(F_judge(z)), the empirical quantile mapping, fitted on a
calibration split and applied to new judge scores. F_judge(z) is the share of
calibration judge scores ≤ z and F_human⁻¹(u) the smallest human calibration score
whose empirical CDF reaches u (the lowest one for u = 0), so g maps onto observed human
scores and is a non-decreasing step function. Quadratic-weighted kappa before and after
is measured on held-out items after snapping both scores to the nearest level of the
human scale (a tie between two levels goes to the lower one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .agreement import ordinal_agreement
from .errors import MetricError


@dataclass(frozen=True, eq=False)
class QuantileMap:
    """Sorted calibration scores of the judge and of the humans."""

    judge_sorted: np.ndarray
    human_sorted: np.ndarray

    def __call__(self, scores) -> np.ndarray:
        return apply_quantile_map(self, scores)


@dataclass(frozen=True)
class CalibrationReport:
    """QWK of judge vs human scores on held-out items, raw and after quantile mapping, and the
    held-out score distributions QWK compares: per ``levels`` entry, how many held-out items the
    humans, the raw judge and the mapped judge put there (``holdout_counts``: human, raw,
    calibrated), every score snapped to the levels."""

    n_calibration: int
    n_holdout: int
    levels: tuple[float, ...]
    qwk_before: float | None
    qwk_after: float | None
    holdout_counts: dict[str, tuple[int, ...]] | None = None


def level_counts(snapped, levels: Sequence[float]) -> tuple[int, ...]:
    """How many of the ``snapped`` scores sit on each level."""
    values = np.asarray(snapped, dtype=float)
    return tuple(int(np.sum(values == level)) for level in levels)


def split_items(items, *, holdout_fraction: float = 0.5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded split of the distinct items into (calibration, holdout), each sorted.

    The holdout gets round(holdout_fraction · n) items (at least one of each side when
    n ≥ 2); the same items and seed always give the same split.
    """
    unique = np.unique(np.asarray(items))
    if not 0 < holdout_fraction < 1:
        raise MetricError("holdout_fraction must lie strictly between 0 and 1")
    if unique.size < 2:
        raise MetricError("a calibration split needs at least two items")
    n_hold = min(max(int(round(holdout_fraction * unique.size)), 1), unique.size - 1)
    order = np.random.default_rng(seed).permutation(unique.size)
    return np.sort(unique[order[n_hold:]]), np.sort(unique[order[:n_hold]])


def _finite(values, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0 or np.isnan(arr).any():
        raise MetricError(f"{name} must be non-empty and have no missing values")
    return arr


def fit_quantile_map(judge_scores, human_scores) -> QuantileMap:
    """Fit g from the calibration split's judge scores and human scores (need not be paired)."""
    return QuantileMap(
        judge_sorted=np.sort(_finite(judge_scores, "judge_scores")),
        human_sorted=np.sort(_finite(human_scores, "human_scores")),
    )


def apply_quantile_map(qmap: QuantileMap, scores) -> np.ndarray:
    """g(z) for each score z; exact integer arithmetic picks the human order statistic."""
    z = np.asarray(scores, dtype=float)
    n_j, n_h = qmap.judge_sorted.size, qmap.human_sorted.size
    at_or_below = np.searchsorted(qmap.judge_sorted, z, side="right")
    # smallest index i with (i + 1) / n_h >= count / n_j, i.e. ceil(count · n_h / n_j) − 1
    index = -(-at_or_below * n_h // n_j) - 1
    mapped = qmap.human_sorted[np.clip(index, 0, n_h - 1)]
    return np.where(np.isnan(z), np.nan, mapped)


def snap_to_levels(scores, levels: Sequence[float]) -> np.ndarray:
    """Each score replaced by the nearest level; halfway goes to the lower level."""
    grid = np.unique(np.asarray(levels, dtype=float))
    z = np.asarray(scores, dtype=float)
    upper = np.clip(np.searchsorted(grid, z, side="left"), 0, grid.size - 1)
    lower = np.clip(upper - 1, 0, grid.size - 1)
    return np.where(np.abs(z - grid[lower]) <= np.abs(grid[upper] - z), grid[lower], grid[upper])


def evaluate_calibration(
    df: pd.DataFrame,
    *,
    item: str = "item",
    judge: str = "judge_score",
    human: str = "human_score",
    levels: Sequence[float] | None = None,
    holdout_fraction: float = 0.5,
    seed: int = 0,
) -> CalibrationReport:
    """Split items, fit g on the calibration items, report QWK on the holdout before and after.

    `df` has one row per item with the judge's and the human score. `levels` is the
    human scale (default: the distinct human scores in `df`).
    """
    missing = [c for c in (item, judge, human) if c not in df.columns]
    if missing:
        raise MetricError(f"missing column(s): {', '.join(missing)}")
    rows = df.dropna(subset=[judge, human])
    grid = np.unique(_finite(rows[human] if levels is None else levels, "levels"))
    if grid.size < 2:
        raise MetricError("the human scale needs at least two levels")
    calib_items, hold_items = split_items(rows[item].to_numpy(), holdout_fraction=holdout_fraction, seed=seed)
    calib = rows[rows[item].isin(calib_items)]
    hold = rows[rows[item].isin(hold_items)]
    qmap = fit_quantile_map(calib[judge], calib[human])
    human_hold = snap_to_levels(hold[human], grid)
    raw_hold = snap_to_levels(hold[judge], grid)
    mapped_hold = snap_to_levels(qmap(hold[judge]), grid)
    before = ordinal_agreement(human_hold, raw_hold, option_values=grid)
    after = ordinal_agreement(human_hold, mapped_hold, option_values=grid)
    return CalibrationReport(
        n_calibration=len(calib),
        n_holdout=len(hold),
        levels=tuple(float(x) for x in grid),
        qwk_before=before.qwk,
        qwk_after=after.qwk,
        holdout_counts={name: level_counts(values, grid)
                        for name, values in (("human", human_hold), ("raw", raw_hold), ("calibrated", mapped_hold))},
    )


@dataclass(frozen=True, eq=False)
class RidgeCalibration:
    """RULERS phase III: a ridge regression from the judge's features to the human score (the
    latent z), then z quantile-mapped onto the human calibration scores and snapped to the
    nearest level of the human scale."""

    model: object
    qmap: QuantileMap
    levels: tuple[float, ...]

    def __call__(self, features) -> np.ndarray:
        z = self.model.predict(np.asarray(features, dtype=float))
        return snap_to_levels(self.qmap(z), self.levels)


def fit_ridge_calibration(features, human, *, levels: Sequence[float], alpha: float = 1.0) -> RidgeCalibration:
    """Fit on the calibration split: ``features`` (n × k), ``human`` scores (n)."""
    from sklearn.linear_model import Ridge  # lazy: scikit-learn loads on first use, not at start-up

    x = np.asarray(features, dtype=float)
    y = _finite(human, "human")
    if x.ndim != 2 or x.shape[0] != y.size or np.isnan(x).any():
        raise MetricError("features must be one complete row per human score")
    grid = np.unique(_finite(levels, "levels"))
    if grid.size < 2:
        raise MetricError("the human scale needs at least two levels")
    model = Ridge(alpha=alpha).fit(x, y)
    return RidgeCalibration(model=model, qmap=fit_quantile_map(model.predict(x), y), levels=tuple(float(v) for v in grid))


def split_by_size(items, *, size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded split of the distinct items into (calibration of ``size`` items, the rest), each
    sorted; at least one item on each side."""
    unique = np.unique(np.asarray(items))
    if unique.size < 2:
        raise MetricError("a calibration split needs at least two items")
    n_cal = min(max(int(size), 1), unique.size - 1)
    order = np.random.default_rng(seed).permutation(unique.size)
    return np.sort(unique[order[:n_cal]]), np.sort(unique[order[n_cal:]])
