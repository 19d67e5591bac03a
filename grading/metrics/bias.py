"""Bias matrices of LLM judges (SPEC §3, after the multi-evaluator framework).
S[i][j] is the mean score judge i gives to responses of target model j. The
consensus-deviation bias is Bias[i][j] = S[i][j] − mean over the other judges k ≠ i of
S[k][j]; with m judges scoring target j this equals m/(m−1) · (S[i][j] − column mean),
so every column sums to zero (in the rubric's own points or on [0, 1]: the caller chooses the
values; each cell also carries its Monte Carlo μ ± σ over the judge's samples,
``monte_carlo_cells``). Missing cells (a judge that never scored a target) stay
NaN: the consensus for the others is then the mean over the judges who did score j, so
a column sums to zero over its present cells, and a column with fewer than two judges
has no bias at all (NaN). Self-bias reads Bias[i][j] where judge i's model is target j.
The human–LLM matrix subtracts the human mean of each target instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .bootstrap import case_bootstrap_ci
from .errors import MetricError


@dataclass(frozen=True, eq=False)
class BiasMatrix:
    """Judges × targets: mean scores, their counts, consensus-deviation bias and self-bias.

    `self_bias` maps each judge whose model is among the targets to Bias[i][own
    model] (None when that cell is NaN).
    """

    scores: pd.DataFrame
    counts: pd.DataFrame
    bias: pd.DataFrame
    self_bias: dict


@dataclass(frozen=True, eq=False)
class HumanLlmBias:
    """Hum[i][j] = S[i][j] − human mean of target j; `overall_mean` over all defined cells."""

    matrix: pd.DataFrame
    human_means: pd.Series
    per_judge_mean: pd.Series
    overall_mean: float | None


def _require(df: pd.DataFrame, columns) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise MetricError(f"missing column(s): {', '.join(map(str, missing))}")


def mean_score_matrix(df: pd.DataFrame, *, judge: str = "judge", target: str = "target", score: str = "score"):
    """S (judges × targets, mean of non-missing scores) and the number of scores per cell."""
    _require(df, [judge, target, score])
    rows = df[[judge, target, score]].dropna(subset=[score])
    grouped = rows.groupby([judge, target], sort=True, observed=True)[score]
    means = grouped.mean().unstack(target)
    counts = grouped.size().unstack(target).reindex_like(means).fillna(0).astype(np.int64)
    return means, counts


def monte_carlo_groups(df: pd.DataFrame, *, keys: list[str], sample: str = "sample", score: str = "score") -> pd.DataFrame:
    """Monte Carlo μ and σ of each ``keys`` group (SPEC §3): x_r = the mean score over the group's
    items in sample r, μ = mean_r x_r, σ = sd_r x_r (ddof = 1; NaN with fewer than two samples).
    Returns one row per group: the keys, ``mu``, ``sd``, ``n_samples``."""
    _require(df, [*keys, sample, score])
    rows = df[[*keys, sample, score]].dropna(subset=[score])
    per_sample = rows.groupby([*keys, sample], sort=True, observed=True)[score].mean()
    grouped = per_sample.groupby(level=list(range(len(keys))), sort=True, observed=True)
    out = pd.DataFrame({"mu": grouped.mean(), "sd": grouped.std(ddof=1), "n_samples": grouped.size()})
    return out.reset_index()


def monte_carlo_mu_ci(samples, scores, cases, *, seed: int = 0):
    """Bootstrap 95% interval of one group's Monte Carlo μ (``monte_carlo_groups``: the mean over
    samples of each sample's mean score), resampling whole cases (``case_bootstrap_ci``): one
    entry per scored item in ``samples``, ``scores`` and ``cases``."""
    values = np.asarray(scores, dtype=float)
    labels, codes = np.unique(np.asarray(samples), return_inverse=True)

    def mu(rows):
        counts = np.bincount(codes[rows], minlength=labels.size)
        sums = np.bincount(codes[rows], weights=values[rows], minlength=labels.size)
        seen = counts > 0
        return float(np.mean(sums[seen] / counts[seen]))

    return case_bootstrap_ci(cases, mu, seed=seed)


def monte_carlo_cells(df: pd.DataFrame, *, judge: str = "judge", target: str = "target", sample: str = "sample",
                      score: str = "score") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``monte_carlo_groups`` of each (judge, target) cell as three judges × targets matrices:
    μ, σ and the number of samples."""
    groups = monte_carlo_groups(df, keys=[judge, target], sample=sample, score=score).set_index([judge, target])
    mu = groups["mu"].unstack(target)
    sd = groups["sd"].unstack(target).reindex_like(mu)
    n = groups["n_samples"].unstack(target).reindex_like(mu).fillna(0).astype(np.int64)
    return mu, sd, n


def consensus_deviation(scores: pd.DataFrame) -> pd.DataFrame:
    """Bias[i][j] = S[i][j] − mean_{k≠i} S[k][j] over the judges with a score for target j."""
    present = scores.notna()
    m = present.sum(axis=0)
    total = scores.sum(axis=0, skipna=True)
    others = (total - scores) / (m - 1).where(m > 1)
    return (scores - others).where(present)


def bias_matrix(
    df: pd.DataFrame,
    *,
    judge: str = "judge",
    target: str = "target",
    score: str = "score",
    judge_models: Mapping | None = None,
) -> BiasMatrix:
    """Consensus-deviation bias from one row per scored (judge, target) response or decision.

    `judge_models` maps a judge name to its model name, for judges named otherwise
    than their model; by default a judge's name is its model name.
    """
    scores, counts = mean_score_matrix(df, judge=judge, target=target, score=score)
    bias = consensus_deviation(scores)
    self_bias = {}
    for name in bias.index:
        own = judge_models.get(name, name) if judge_models is not None else name
        if own in bias.columns:
            value = bias.at[name, own]
            self_bias[name] = None if pd.isna(value) else float(value)
    return BiasMatrix(scores=scores, counts=counts, bias=bias, self_bias=self_bias)


def self_bias_attenuation(*, attributed: float | None, anonymized: float | None) -> float | None:
    """1 − |anonymized| / |attributed|; None when either is missing or attributed is 0."""
    if attributed is None or anonymized is None or attributed == 0 or np.isnan(attributed) or np.isnan(anonymized):
        return None
    return 1.0 - abs(anonymized) / abs(attributed)


def attenuation_by_judge(*, attributed: BiasMatrix, anonymized: BiasMatrix) -> dict:
    """Self-bias attenuation per judge present in both conditions (None where undefined)."""
    return {
        name: self_bias_attenuation(attributed=value, anonymized=anonymized.self_bias.get(name))
        for name, value in attributed.self_bias.items()
        if name in anonymized.self_bias
    }


def human_llm_bias(
    judge_df: pd.DataFrame,
    human_df: pd.DataFrame,
    *,
    judge: str = "judge",
    target: str = "target",
    score: str = "score",
) -> HumanLlmBias:
    """Hum[i][j] = S[i][j] − mean human score of target j (one chosen cohort).

    Targets the humans never scored give NaN columns; `per_judge_mean` and
    `overall_mean` average the defined cells only.
    """
    scores, _ = mean_score_matrix(judge_df, judge=judge, target=target, score=score)
    _require(human_df, [target, score])
    human_means = human_df.dropna(subset=[score]).groupby(target, sort=True, observed=True)[score].mean()
    matrix = scores - human_means.reindex(scores.columns)
    cells = matrix.to_numpy(dtype=float)
    defined = cells[~np.isnan(cells)]
    return HumanLlmBias(
        matrix=matrix,
        human_means=human_means,
        per_judge_mean=matrix.mean(axis=1, skipna=True),
        overall_mean=float(defined.mean()) if defined.size else None,
    )
