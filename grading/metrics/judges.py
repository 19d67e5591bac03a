"""How good and how steady an LLM judge is (SPEC §3 "Judge fidelity", "Cross-grader
robustness", "Monte Carlo stability"). Fidelity is `binary_agreement` of the judge
against each reference source (cohorts, gold) over the decisions both gave. Robustness
compares the per-model criterion-positive rate under two sources: rank correlations,
mean absolute difference in percentage points, top-n overlap. Stability summarises the
repeated samples of one judge per (judge, response, criterion) by mean and sample sd
(ddof = 1, NaN for a single sample) and, per judge, the mean of the defined sds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .agreement import BinaryAgreement, binary_agreement
from .bootstrap import case_bootstrap_ci
from .errors import MetricError
from .ranking import compare_rankings


@dataclass(frozen=True, eq=False)
class CrossGraderRobustness:
    """Per-model positive rates (percent) under sources a and b and how they rank the models.

    `rates` is indexed by model with columns rate_a_pct, rate_b_pct, n_a, n_b.
    """

    n_models: int
    rates: pd.DataFrame
    spearman_rho: float | None
    kendall_tau: float | None
    mean_abs_diff_pp: float | None
    top3_overlap: float | None
    top5_overlap: float | None


@dataclass(frozen=True)
class JudgeStability:
    """Monte Carlo spread of one judge: mean sd over items that had at least two samples."""

    n_items: int
    n_items_with_sd: int
    mean_sd: float | None


@dataclass(frozen=True, eq=False)
class MonteCarloStability:
    """`per_item` has the key columns plus n, mean, sd (NaN when n = 1); `per_judge` maps judge → JudgeStability."""

    per_item: pd.DataFrame
    per_judge: dict


def _require(df: pd.DataFrame, columns) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise MetricError(f"missing column(s): {', '.join(map(str, missing))}")


def judge_fidelity(df: pd.DataFrame, *, judge: str, references: Sequence[str]) -> dict[str, BinaryAgreement]:
    """Agreement of the judge column with each reference column (reference = truth).

    `df` has one row per (response, criterion) and a 0/1 column per source, NaN where
    that source gave no decision; each comparison uses the rows where both are present.
    """
    _require(df, [judge, *references])
    result = {}
    for ref in references:
        both = df[[ref, judge]].dropna()
        result[ref] = binary_agreement(both[ref].to_numpy(), both[judge].to_numpy())
    return result


def cross_grader_robustness(
    df: pd.DataFrame, *, model: str = "model", a: str = "a", b: str = "b"
) -> CrossGraderRobustness:
    """Compare per-model criterion-positive rates under sources `a` and `b`.

    Each source's rate is over its own non-missing 0/1 decisions. The mean absolute
    difference is over models in percentage points; correlations and top-n overlap as in
    `ranking.compare_rankings` (top-n overlap is a fraction).
    """
    _require(df, [model, a, b])
    for col in (a, b):
        vals = df[col].dropna()
        if len(vals) and not vals.isin((0, 1)).all():
            raise MetricError(f"{col} must hold only 0, 1 or missing")
    grouped = df.groupby(model, sort=True, observed=True)
    rates = pd.DataFrame(
        {
            "rate_a_pct": grouped[a].mean() * 100.0,
            "rate_b_pct": grouped[b].mean() * 100.0,
            "n_a": grouped[a].count(),
            "n_b": grouped[b].count(),
        }
    )
    both = rates.dropna(subset=["rate_a_pct", "rate_b_pct"])
    cmp = compare_rankings(both["rate_a_pct"].to_dict(), both["rate_b_pct"].to_dict())
    diff = (both["rate_a_pct"] - both["rate_b_pct"]).abs()
    return CrossGraderRobustness(
        n_models=len(both),
        rates=rates,
        spearman_rho=cmp.spearman_rho,
        kendall_tau=cmp.kendall_tau,
        mean_abs_diff_pp=float(diff.mean()) if len(diff) else None,
        top3_overlap=cmp.top3_overlap,
        top5_overlap=cmp.top5_overlap,
    )


def cross_grader_intervals(df: pd.DataFrame, *, case: str = "case", model: str = "model", a: str = "a",
                           b: str = "b", seed: int = 0) -> dict:
    """Bootstrap 95% intervals (whole cases resampled, ``case_bootstrap_ci``) of the figures of
    ``cross_grader_robustness`` that summarise the models: the mean absolute difference in points,
    Spearman ρ and Kendall τ. Each resample recomputes every model's two rates from the drawn
    cases' decisions (models left without a decision drop out, as in the rule)."""
    _require(df, [case, model, a, b])
    names, codes = np.unique(df[model].astype(str).to_numpy(), return_inverse=True)
    columns = {side: df[side].to_numpy(dtype=float) for side in (a, b)}

    def rates(rows, side):
        values = columns[side][rows]
        present = ~np.isnan(values)
        counts = np.bincount(codes[rows][present], minlength=names.size)
        sums = np.bincount(codes[rows][present], weights=values[present], minlength=names.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            return 100.0 * sums / counts

    def figures(rows):
        ra, rb = rates(rows, a), rates(rows, b)
        both = ~np.isnan(ra) & ~np.isnan(rb)
        ranks = compare_rankings(dict(zip(names[both], ra[both])), dict(zip(names[both], rb[both])))
        return float(np.mean(np.abs(ra[both] - rb[both]))) if both.any() else None, ranks.spearman_rho, ranks.kendall_tau

    intervals = case_bootstrap_ci(df[case].to_numpy(), figures, seed=seed) or [None] * 3
    return dict(zip(("mean_abs_diff_pp", "spearman_rho", "kendall_tau"), intervals))


def monte_carlo_stability(
    df: pd.DataFrame,
    *,
    keys: Sequence[str] = ("judge", "response", "criterion"),
    judge: str = "judge",
    value: str = "value",
) -> MonteCarloStability:
    """Mean and sample sd of `value` over the samples of each `keys` group; mean sd per judge."""
    keys = list(keys)
    if judge not in keys:
        raise MetricError("the judge column must be one of the keys")
    _require(df, [*keys, value])
    grouped = df.groupby(keys, sort=True, observed=True)[value]
    per_item = pd.DataFrame({"n": grouped.count(), "mean": grouped.mean(), "sd": grouped.std(ddof=1)})
    per_item = per_item.reset_index()
    per_judge = {}
    for name, rows in per_item.groupby(judge, sort=True):
        sds = rows["sd"].dropna()
        per_judge[name] = JudgeStability(
            n_items=len(rows),
            n_items_with_sd=len(sds),
            mean_sd=float(sds.mean()) if len(sds) else None,
        )
    return MonteCarloStability(per_item=per_item, per_judge=per_judge)
