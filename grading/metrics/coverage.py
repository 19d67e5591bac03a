"""Coverage of rubric criteria by one source (SPEC §3 "Coverage", "Threshold
calibration", "Threshold sensitivity"). Input is one row per response with its hit count
s_i (binary criteria met) and criterion count N_i; `response_hits` builds that from one
row per decision. Rubric accuracy, Pass@k and CACS@k are percentages (0–100). A
response whose case has fewer than k criteria (N_i − k + 1 ≤ 0) cannot reach the
threshold: its CACS term is 0, exactly as Pass@k counts it as a miss, and it is counted
in `n_unreachable` rather than raising. Strata such as task themes are multi-label: the
stratum column may hold lists, and a response then counts once in each of its strata.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from .errors import MetricError
from .ranking import RankComparison, compare_rankings


@dataclass(frozen=True)
class Coverage:
    """Coverage figures of one set of responses at threshold k (percentages)."""

    k: int
    n_responses: int
    n_unreachable: int
    rubric_accuracy_pct: float | None
    pass_at_k_pct: float | None
    cacs_at_k_pct: float | None


@dataclass(frozen=True)
class KCalibration:
    """k = mean hits of the human-authored responses rounded half up."""

    k: int
    mean_hits: float
    n: int


@dataclass(frozen=True)
class RankingAlternative:
    """One alternative ranking compared with the CACS@k reference ranking."""

    name: str
    scores: dict
    comparison: RankComparison


@dataclass(frozen=True)
class ThresholdSensitivity:
    """The CACS@k reference ranking and each alternative compared with it."""

    k: int
    reference_scores: dict
    alternatives: tuple[RankingAlternative, ...]


def response_hits(
    decisions: pd.DataFrame,
    *,
    response: str = "response",
    value: str = "value",
    carry: Sequence[str] = ("model",),
) -> pd.DataFrame:
    """Collapse one row per binary decision (0/1 `value`) to one row per response.

    Returns columns `response`, the `carry` columns (first value per response),
    `hits` (s_i) and `n_criteria` (N_i = number of rows of that response, so pass
    every binary criterion of the case, not met ones included).
    """
    _require(decisions, [response, value, *carry])
    vals = decisions[value].to_numpy()
    if vals.size and not np.isin(vals, (0, 1)).all():
        raise MetricError(f"{value} must hold only 0 and 1")
    grouped = decisions.groupby(response, sort=True, observed=True)
    out = grouped[list(carry)].first() if carry else pd.DataFrame(index=grouped.size().index)
    out["hits"] = grouped[value].sum().astype(np.int64)
    out["n_criteria"] = grouped.size().astype(np.int64)
    return out.reset_index()


def _require(df: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise MetricError(f"missing column(s): {', '.join(map(str, missing))}")


def _check_k(k) -> int:
    if isinstance(k, bool) or not float(k).is_integer() or k < 0:
        raise MetricError(f"k must be a non-negative integer, got {k!r}")
    return int(k)


def _terms(df: pd.DataFrame, k: int, hits: str, total: str) -> pd.DataFrame:
    """Per-response accuracy, pass and CACS terms (fractions) plus an unreachable flag."""
    _require(df, [hits, total])
    s = df[hits].to_numpy(dtype=float)
    n = df[total].to_numpy(dtype=float)
    if np.isnan(s).any() or np.isnan(n).any():
        raise MetricError("hits and criterion counts must not be missing")
    if (n <= 0).any():
        raise MetricError("every response needs at least one binary criterion (N_i ≥ 1)")
    if ((s < 0) | (s > n)).any():
        raise MetricError("hits must lie between 0 and the number of criteria")
    room = n - k + 1
    reachable = room > 0
    cacs = np.where(reachable, np.maximum(0.0, s - k + 1) / np.where(reachable, room, 1.0), 0.0)
    return pd.DataFrame(
        {"accuracy": s / n, "passed": (s >= k).astype(float), "cacs": cacs, "unreachable": ~reachable},
        index=df.index,
    )


def coverage_terms(df: pd.DataFrame, *, k: int, hits: str = "hits", total: str = "n_criteria") -> pd.DataFrame:
    """Each response's own terms of the coverage means (fractions, index of ``df``): ``accuracy``
    s_i / N_i, ``passed`` [s_i ≥ k], ``cacs`` max(0, s_i − k + 1) / (N_i − k + 1) (0 where N_i < k)."""
    return _terms(df, _check_k(k), hits, total)[["accuracy", "passed", "cacs"]]


def _coverage_from_sums(k: int, count: int, unreachable: int, acc: float, passed: float, cacs: float) -> Coverage:
    if count == 0:
        return Coverage(k, 0, 0, None, None, None)
    return Coverage(
        k=k,
        n_responses=int(count),
        n_unreachable=int(unreachable),
        rubric_accuracy_pct=100.0 * acc / count,
        pass_at_k_pct=100.0 * passed / count,
        cacs_at_k_pct=100.0 * cacs / count,
    )


def coverage(df: pd.DataFrame, *, k: int, hits: str = "hits", total: str = "n_criteria") -> Coverage:
    """Rubric accuracy, Pass@k and CACS@k over all rows of `df` (one row per response)."""
    k = _check_k(k)
    t = _terms(df, k, hits, total)
    return _coverage_from_sums(
        k, len(t), t["unreachable"].sum(), t["accuracy"].sum(), t["passed"].sum(), t["cacs"].sum()
    )


def _grouped_coverage(t: pd.DataFrame, keys: list[str], k: int) -> dict:
    sums = t.groupby(keys, sort=True, observed=True).agg(
        count=("accuracy", "size"),
        unreachable=("unreachable", "sum"),
        acc=("accuracy", "sum"),
        passed=("passed", "sum"),
        cacs=("cacs", "sum"),
    )
    result = {}
    for key, row in zip(sums.index, sums.itertuples(index=False)):
        result[key] = _coverage_from_sums(k, row.count, row.unreachable, row.acc, row.passed, row.cacs)
    return result


def coverage_by_model(
    df: pd.DataFrame, *, k: int, model: str = "model", hits: str = "hits", total: str = "n_criteria"
) -> dict:
    """`Coverage` per source model, keyed by model name."""
    k = _check_k(k)
    _require(df, [model])
    t = _terms(df, k, hits, total)
    t[model] = df[model].to_numpy()
    return _grouped_coverage(t, [model], k)


def coverage_by_stratum(
    df: pd.DataFrame,
    *,
    k: int,
    stratum: str,
    model: str | None = "model",
    hits: str = "hits",
    total: str = "n_criteria",
) -> dict:
    """`Coverage` per stratum value (and per model within it unless `model` is None).

    `stratum` may be a scalar column (difficulty, register) or a list-valued column
    (task themes, specialties): a response counts once in each listed stratum. Rows
    with no value (None, NaN, empty list) belong to no stratum. Keys are
    `(stratum_value, model)` tuples, or bare stratum values when `model` is None.
    """
    k = _check_k(k)
    _require(df, [stratum] + ([model] if model else []))
    t = _terms(df, k, hits, total)
    t["_stratum"] = df[stratum].to_numpy()
    keys = ["_stratum"]
    if model:
        t[model] = df[model].to_numpy()
        keys.append(model)
    t = t.explode("_stratum")
    t = t[t["_stratum"].notna()]
    return _grouped_coverage(t, keys, k)


def deviation_from_overall(cells: dict, overall: dict) -> dict:
    """Each (stratum, model) cell's figure minus that model's overall figure (the same unit, e.g.
    percentage points of CACS@k): how much better or worse the model does in the stratum than
    overall. None where either figure is undefined."""
    out = {}
    for (stratum, model), value in cells.items():
        base = overall.get(model)
        out[(stratum, model)] = None if value is None or base is None else float(value) - float(base)
    return out


def calibrate_k(hits_of_human_responses) -> KCalibration:
    """k = round(mean s_i) over human-authored responses, rounding halves up (2.5 → 3).

    Integer hit counts are averaged exactly, so a mean of exactly x.5 always rounds up.
    """
    hits = np.asarray(hits_of_human_responses, dtype=float)
    if hits.size == 0:
        raise MetricError("calibrate_k needs at least one human-authored response")
    if np.isnan(hits).any() or (hits < 0).any():
        raise MetricError("hit counts must be non-negative numbers")
    if np.all(hits == np.round(hits)):
        mean = Fraction(int(hits.sum()), hits.size)
        k = int((mean + Fraction(1, 2)) // 1)
    else:
        mean = float(hits.mean())
        k = int(np.floor(mean + 0.5))
    return KCalibration(k=k, mean_hits=float(mean), n=int(hits.size))


def _model_scores(covs: dict, attr: str) -> dict:
    return {m: getattr(c, attr) for m, c in covs.items()}


def threshold_sensitivity(
    df: pd.DataFrame,
    *,
    k: int,
    ks: Sequence[int],
    model: str = "model",
    hits: str = "hits",
    total: str = "n_criteria",
) -> ThresholdSensitivity:
    """Compare the CACS@k model ranking with CACS@k' for each k' in `ks`, rubric accuracy and Pass@k.

    Each alternative carries Spearman rho, Kendall tau and top-3 / top-5 overlap
    (fraction of the reference top-n also in the alternative's top-n) — see `ranking`.
    Alternatives are named 'CACS@<k'>', 'rubric_accuracy' and 'Pass@<k>'.
    """
    reference = coverage_by_model(df, k=k, model=model, hits=hits, total=total)
    ref_scores = _model_scores(reference, "cacs_at_k_pct")
    alternatives = []
    for alt_k in ks:
        alt = coverage_by_model(df, k=alt_k, model=model, hits=hits, total=total)
        scores = _model_scores(alt, "cacs_at_k_pct")
        alternatives.append(RankingAlternative(f"CACS@{int(alt_k)}", scores, compare_rankings(ref_scores, scores)))
    for name, attr in (("rubric_accuracy", "rubric_accuracy_pct"), (f"Pass@{int(k)}", "pass_at_k_pct")):
        scores = _model_scores(reference, attr)
        alternatives.append(RankingAlternative(name, scores, compare_rankings(ref_scores, scores)))
    return ThresholdSensitivity(k=int(k), reference_scores=ref_scores, alternatives=tuple(alternatives))
