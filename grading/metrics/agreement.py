"""Agreement between two sources of decisions (SPEC §3 "MF1" and "Chance-corrected
agreement"). Binary decisions are int arrays, 1 = met (the positive class) and 0 = not
met, with source A taken as the truth. Pooled figures come from scikit-learn
(`f1_score`, `cohen_kappa_score`); the case-level distribution needs F1 for tens of
thousands of (model, case) groups at once, which no library offers, so it computes the
SPEC formulas from grouped confusion counts. An F1 whose class occurs in neither source
is undefined and reported as None — never 0 or 1 — and so is the MF1 built on it.
Ordinal agreement uses quadratic-weighted kappa on the options' order index, and
Krippendorff's alpha comes from the `krippendorff` library. All proportions here
(F1, MF1, percent_agreement, positive rates, exact, adjacent) are fractions in [0, 1].

scikit-learn and krippendorff are imported by the functions that call them: importing them
costs more than a second, and the case-level MF1 (the adjudication queue's order) needs neither.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .bootstrap import case_bootstrap_ci
from .errors import MetricError

DEFAULT_LOW_AGREEMENT_THRESHOLD = 0.6
KRIPPENDORFF_LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class BinaryAgreement:
    """Agreement of B with reference A over n aligned binary decisions (proportions in [0, 1])."""

    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    f1_met: float | None
    f1_not_met: float | None
    mf1: float | None
    cohen_kappa: float | None
    percent_agreement: float | None
    positive_rate_a: float | None
    positive_rate_b: float | None


@dataclass(frozen=True, eq=False)
class CaseLevelMF1:
    """Distribution of per-group (e.g. per (model, case)) MF1 values.

    `n` counts groups, `n_undefined` those whose MF1 is None; mean, median and the
    quartiles (numpy's linear interpolation) and `share_below` (fraction of the
    defined groups with MF1 < `threshold`) are over the defined groups only.
    `per_group` has the group keys plus n, tp, fp, fn, tn, f1_met, f1_not_met, mf1
    (NaN where undefined), in key order.
    """

    n: int
    n_undefined: int
    mean: float | None
    median: float | None
    q25: float | None
    q75: float | None
    share_below: float | None
    threshold: float
    per_group: pd.DataFrame

    def low_agreement(self) -> pd.DataFrame:
        """The groups with a defined MF1 below the threshold, lowest first."""
        tail = self.per_group[self.per_group["mf1"] < self.threshold]
        return tail.sort_values("mf1", kind="stable")


@dataclass(frozen=True)
class OrdinalAgreement:
    """Agreement on ordinal options: QWK on option order, exact and within-one-step shares."""

    n: int
    qwk: float | None
    exact: float | None
    adjacent: float | None


def _none_if_nan(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _binary_array(values, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise MetricError(f"{name} must be one-dimensional")
    if arr.size and not np.isin(arr, (0, 1)).all():
        raise MetricError(f"{name} must hold only 0 (not met) and 1 (met); resolve verdicts first")
    return arr.astype(np.int8)


def _f1_from_counts(tp, fp, fn, tn) -> tuple[np.ndarray, np.ndarray]:
    """SPEC F1 per class from count arrays; NaN where the class is in neither source."""
    tp, fp, fn, tn = (np.asarray(x, dtype=float) for x in (tp, fp, fn, tn))
    with np.errstate(invalid="ignore", divide="ignore"):
        met_den = 2 * tp + fp + fn
        not_den = 2 * tn + fp + fn
        f1_met = np.where(met_den > 0, 2 * tp / met_den, np.nan)
        f1_not = np.where(not_den > 0, 2 * tn / not_den, np.nan)
    return f1_met, f1_not


def _mf1_from_counts(tp, fp, fn, tn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """F1 per class and their mean (MF1) from count arrays; NaN where undefined."""
    f1_met, f1_not = _f1_from_counts(tp, fp, fn, tn)
    return f1_met, f1_not, (f1_met + f1_not) / 2


def mf1_from_counts(tp, fp, fn, tn) -> np.ndarray:
    """MF1 of each group from its confusion counts (arrays; A is the truth, met the positive
    class), as ``case_level_mf1`` computes it: NaN where a class occurs in neither source. For
    callers that counted the pairs already (the adjudication queue counts them in the database)."""
    return _mf1_from_counts(tp, fp, fn, tn)[2]


def binary_agreement(a, b) -> BinaryAgreement:
    """Compare decisions `b` with reference `a` (aligned 0/1 arrays of equal length).

    With n = 0 every figure is None. kappa is None when chance agreement is 1
    (both sources give the same single class throughout).
    """
    a = _binary_array(a, "a")
    b = _binary_array(b, "b")
    if a.shape != b.shape:
        raise MetricError(f"a and b differ in length ({a.size} vs {b.size})")
    n = int(a.size)
    tp = int(np.sum((a == 1) & (b == 1)))
    fp = int(np.sum((a == 0) & (b == 1)))
    fn = int(np.sum((a == 1) & (b == 0)))
    return _agreement_from_counts(tp, fp, fn, n - tp - fp - fn)


def _agreement_from_counts(tp: int, fp: int, fn: int, tn: int) -> BinaryAgreement:
    """``binary_agreement`` of the pairs whose confusion counts these are."""
    n = tp + fp + fn + tn
    if n == 0:
        return BinaryAgreement(0, 0, 0, 0, 0, None, None, None, None, None, None, None)
    from sklearn.metrics import cohen_kappa_score, f1_score  # lazy: scikit-learn loads on first use, not at start-up

    # scikit-learn's figures of the four (a, b) pairs weighted by their counts: the confusion matrix of
    # the n pairs, so the same figures, without validating n rows on each call (a tenth of a second
    # at the 825,000 pairs of a full-scale study, eleven calls per comparison with the models').
    pair_a, pair_b = np.array([1, 0, 1, 0]), np.array([1, 1, 0, 0])
    weight = np.array([tp, fp, fn, tn], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f1_met, f1_not = f1_score(pair_a, pair_b, labels=[1, 0], average=None, zero_division=np.nan, sample_weight=weight)
        kappa = cohen_kappa_score(pair_a, pair_b, labels=[0, 1], sample_weight=weight, replace_undefined_by=np.nan)
    f1_met, f1_not = _none_if_nan(f1_met), _none_if_nan(f1_not)
    mf1 = None if f1_met is None or f1_not is None else (f1_met + f1_not) / 2
    return BinaryAgreement(
        n=n,
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        f1_met=f1_met,
        f1_not_met=f1_not,
        mf1=mf1,
        cohen_kappa=_none_if_nan(kappa),
        percent_agreement=(tp + tn) / n,
        positive_rate_a=(tp + fn) / n,
        positive_rate_b=(tp + fp) / n,
    )


def _require_columns(df: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise MetricError(f"missing column(s): {', '.join(map(str, missing))}")


def case_level_mf1(
    df: pd.DataFrame,
    *,
    keys: Sequence[str] = ("model", "case"),
    a: str = "a",
    b: str = "b",
    threshold: float = DEFAULT_LOW_AGREEMENT_THRESHOLD,
) -> CaseLevelMF1:
    """MF1 per group of `keys` (one row per aligned decision, 0/1 columns `a` and `b`).

    A group in which one class occurs in neither source (e.g. both sources mark every
    criterion of the case not met) has MF1 undefined: NaN in `per_group`, counted in
    `n_undefined`, excluded from the summary statistics.
    """
    keys = list(keys)
    _require_columns(df, [*keys, a, b])
    va = _binary_array(df[a].to_numpy(), a)
    vb = _binary_array(df[b].to_numpy(), b)
    counts = pd.DataFrame(
        {
            "tp": va & vb,
            "fp": (1 - va) & vb,
            "fn": va & (1 - vb),
            "tn": (1 - va) & (1 - vb),
        },
        index=df.index,
    ).astype(np.int64)
    for key in keys:
        counts[key] = df[key]  # the same index: no alignment, and the column keeps its dtype
    grouped = counts.groupby(keys, sort=True, observed=True, dropna=False)
    per_group = grouped[["tp", "fp", "fn", "tn"]].sum()
    per_group.insert(0, "n", grouped.size())
    f1_met, f1_not, mf1 = _mf1_from_counts(per_group["tp"], per_group["fp"], per_group["fn"], per_group["tn"])
    per_group["f1_met"] = f1_met
    per_group["f1_not_met"] = f1_not
    per_group["mf1"] = mf1
    per_group = per_group.reset_index()

    defined = per_group["mf1"].dropna().to_numpy()
    n_groups = len(per_group)
    if defined.size:
        q25, median, q75 = (float(x) for x in np.percentile(defined, [25, 50, 75]))
        summary = dict(
            mean=float(defined.mean()),
            median=median,
            q25=q25,
            q75=q75,
            share_below=float(np.mean(defined < threshold)),
        )
    else:
        summary = dict(mean=None, median=None, q25=None, q75=None, share_below=None)
    return CaseLevelMF1(
        n=n_groups,
        n_undefined=n_groups - int(defined.size),
        threshold=float(threshold),
        per_group=per_group,
        **summary,
    )


def mf1_by_group(df: pd.DataFrame, *, by: str | Sequence[str] = "model", a: str = "a", b: str = "b") -> dict:
    """`binary_agreement` per group, keyed by the group value (a tuple when `by` is a list).

    Meant for a handful of groups such as source models; for thousands of (model, case)
    groups use `case_level_mf1`, which also reports the distribution. Each group's confusion
    counts are summed at once and its figures made from them, as `binary_agreement` makes them.
    """
    by_cols = [by] if isinstance(by, str) else list(by)
    _require_columns(df, [*by_cols, a, b])
    va = _binary_array(df[a].to_numpy(), a)
    vb = _binary_array(df[b].to_numpy(), b)
    counts = pd.DataFrame({"tp": va & vb, "fp": (1 - va) & vb, "fn": va & (1 - vb), "tn": (1 - va) & (1 - vb)},
                          index=df.index).astype(np.int64)
    for key in by_cols:
        counts[key] = df[key]  # the same index: no alignment, and the column keeps its dtype
    per_group = counts.groupby(by_cols, sort=True, observed=True)[["tp", "fp", "fn", "tn"]].sum()
    result = {}
    for key, tp, fp, fn, tn in zip(per_group.index, per_group["tp"], per_group["fp"], per_group["fn"], per_group["tn"]):
        if not isinstance(by, str) and not isinstance(key, tuple):
            key = (key,)
        result[key] = _agreement_from_counts(int(tp), int(fp), int(fn), int(tn))
    return result


def _option_index(values, sorted_options: np.ndarray, name: str) -> np.ndarray:
    vals = np.asarray(values, dtype=float)
    if vals.ndim != 1:
        raise MetricError(f"{name} must be one-dimensional")
    if np.isnan(vals).any():
        raise MetricError(f"{name} contains missing values; drop or resolve them first")
    idx = np.clip(np.searchsorted(sorted_options, vals), 0, sorted_options.size - 1)
    lower = np.clip(idx - 1, 0, sorted_options.size - 1)
    idx = np.where(np.abs(sorted_options[lower] - vals) < np.abs(sorted_options[idx] - vals), lower, idx)
    if not np.allclose(sorted_options[idx], vals, rtol=0, atol=1e-9):
        raise MetricError(f"{name} contains values that are not option values")
    return idx


def ordinal_agreement(a_values, b_values, *, option_values) -> OrdinalAgreement:
    """Quadratic-weighted kappa, exact and adjacent (|step| ≤ 1) agreement on an ordinal scale.

    Values are mapped to the index of their option in ascending value order, so a
    0/1/5/10 scale is treated as four equally spaced steps; QWK uses every option as a
    label even if unused. `adjacent` includes exact matches.
    """
    options = np.sort(np.asarray(option_values, dtype=float))
    if options.size < 2 or np.unique(options).size != options.size:
        raise MetricError("option_values must hold at least two distinct values")
    ia = _option_index(a_values, options, "a_values")
    ib = _option_index(b_values, options, "b_values")
    if ia.shape != ib.shape:
        raise MetricError(f"a_values and b_values differ in length ({ia.size} vs {ib.size})")
    if ia.size == 0:
        return OrdinalAgreement(n=0, qwk=None, exact=None, adjacent=None)
    from sklearn.metrics import cohen_kappa_score  # lazy: scikit-learn loads on first use, not at start-up

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qwk = cohen_kappa_score(
            ia, ib, labels=np.arange(options.size), weights="quadratic", replace_undefined_by=np.nan
        )
    step = np.abs(ia - ib)
    return OrdinalAgreement(
        n=int(ia.size),
        qwk=_none_if_nan(qwk),
        exact=float(np.mean(step == 0)),
        adjacent=float(np.mean(step <= 1)),
    )


def krippendorff_alpha(reliability_data, *, level: str = "nominal", value_domain=None) -> float | None:
    """Krippendorff's alpha of a raters × units matrix with NaN for missing ratings.

    `level` is nominal, ordinal, interval or ratio. Returns None when alpha is
    undefined: no unit rated by two raters, fewer than two distinct values, or no
    disagreement expected by chance among the pairable values.
    """
    if level not in KRIPPENDORFF_LEVELS:
        raise MetricError(f"unknown level {level!r}; use one of {', '.join(KRIPPENDORFF_LEVELS)}")
    try:
        data = np.array(reliability_data, dtype=float)
    except (TypeError, ValueError):
        raise MetricError("reliability_data must be numeric, with NaN for missing ratings") from None
    if data.ndim != 2:
        raise MetricError("reliability_data must be a raters × units matrix")
    present = ~np.isnan(data)
    if not (present.sum(axis=0) >= 2).any() or np.unique(data[present]).size < 2:
        return None
    import krippendorff  # lazy: krippendorff loads on first use, not at start-up

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = krippendorff.alpha(
                reliability_data=data, level_of_measurement=level, value_domain=value_domain
            )
    except ValueError as exc:
        raise MetricError(str(exc)) from None
    return _none_if_nan(value)


def krippendorff_alpha_ci(reliability_data, unit_cases, *, level: str = "nominal", seed: int = 0):
    """Bootstrap 95% interval of ``krippendorff_alpha`` resampling whole cases (every unit of a
    drawn case, ``case_bootstrap_ci``); ``unit_cases``: the case of each unit (column). The
    raters × units matrix is reduced once to each unit's counts of the observed values, and the
    krippendorff package computes each resample's alpha from those counts (the same estimator,
    over the same value domain). None when alpha has nothing to resample."""
    if level not in KRIPPENDORFF_LEVELS:
        raise MetricError(f"unknown level {level!r}; use one of {', '.join(KRIPPENDORFF_LEVELS)}")
    data = np.array(reliability_data, dtype=float)
    present = ~np.isnan(data)
    domain = np.unique(data[present])
    if domain.size < 2:
        return None
    counts = np.stack([(data == value).sum(axis=0) for value in domain], axis=1)
    import krippendorff  # lazy: krippendorff loads on first use, not at start-up

    def alpha(rows):
        drawn = counts[rows]
        if not (drawn.sum(axis=1) >= 2).any():
            return None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _none_if_nan(krippendorff.alpha(value_counts=drawn, value_domain=domain, level_of_measurement=level))
        except (ValueError, ZeroDivisionError):
            return None

    return case_bootstrap_ci(np.asarray(unit_cases), alpha, seed=seed)
