"""The Autorubric weighted score of a response (SPEC §3 "Weighted score"). Each
criterion outcome has a weight w (negative = penalty), a value v (1/0 for binary
met/not met, the option value otherwise; None for cannot-assess or a not-applicable
option) and the lowest and highest option value of its criterion (0 and 1 for binary).
Criteria whose options leave [0, 1] are rescaled by that min and max. With S = Σ
contributions, P = Σ w over scored criteria with w > 0 and Nn = Σ |w| over scored
criteria with w ≤ 0: score = clamp(S/P, 0, 1) if P > 0, else clamp(1 + S/Nn, 0, 1) if
Nn > 0, else 0; None when nothing was scored. An optional length penalty is then
subtracted, floored at 0. `score_response` scores one response; `score_responses` scores
a long DataFrame with the same array code and one groupby.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import MetricError
from .strategies import CannotAssess, parse_strategy
from .values import unit_bounds

DEFAULT_PARTIAL_CREDIT = 0.5


@dataclass(frozen=True)
class CriterionOutcome:
    """One criterion's result for one response.

    `value` None means cannot assess; `not_applicable` marks a chosen option flagged
    not-applicable, which is scored like cannot assess. `min_value` / `max_value` are
    the criterion's lowest and highest (applicable) option values.
    """

    weight: float
    value: float | None
    min_value: float = 0.0
    max_value: float = 1.0
    not_applicable: bool = False


@dataclass(frozen=True)
class LengthPenalty:
    """penalty_at_cap · ((n − free_words) / (cap_words − free_words))^exponent, n in words."""

    free_words: int
    cap_words: int
    penalty_at_cap: float
    exponent: float = 1.0

    def __post_init__(self) -> None:
        if self.cap_words <= self.free_words:
            raise MetricError("cap_words must exceed free_words")
        if self.penalty_at_cap < 0 or self.exponent <= 0:
            raise MetricError("penalty_at_cap must be ≥ 0 and exponent > 0")

    def amount(self, word_counts) -> np.ndarray:
        """Penalty per word count: 0 up to free_words, growing to penalty_at_cap at cap_words and beyond."""
        n = np.asarray(word_counts, dtype=float)
        excess = np.clip(n, self.free_words, self.cap_words) - self.free_words
        return self.penalty_at_cap * (excess / (self.cap_words - self.free_words)) ** self.exponent


def word_count(text: str) -> int:
    """Number of whitespace-separated words, the n of the length penalty."""
    return len(text.split())


def _contributions(weight, value, vmin, vmax, cannot, strategy: CannotAssess, partial_credit: float):
    """Per-criterion contribution and scored mask, all arrays."""
    w = np.asarray(weight, dtype=float)
    v = np.asarray(value, dtype=float)
    lo = np.asarray(vmin, dtype=float)
    hi = np.asarray(vmax, dtype=float)
    cannot = np.asarray(cannot, dtype=bool) | np.isnan(v)
    if not np.isfinite(w).all():
        raise MetricError("weights must be finite numbers")
    offset, span = unit_bounds(lo, hi)  # the one rescaling rule (SPEC §3)
    scaled = (v - offset) / span
    assessed = ~cannot
    if (assessed & ((scaled < -1e-9) | (scaled > 1 + 1e-9))).any():
        raise MetricError("a value lies outside its criterion's option range")
    if strategy is CannotAssess.PARTIAL and not 0 <= partial_credit <= 1:
        raise MetricError("partial_credit must lie in [0, 1]")

    contrib = np.where(assessed, w * np.nan_to_num(scaled), 0.0)
    scored = assessed.copy()
    if strategy is not CannotAssess.SKIP:
        scored[:] = True
        if strategy is CannotAssess.PARTIAL:
            contrib = np.where(cannot & (w > 0), partial_credit * w, contrib)
        elif strategy is CannotAssess.FAIL:
            worst = np.where(w > 0, (lo - offset) / span, (hi - offset) / span)
            contrib = np.where(cannot, w * worst, contrib)
    return w, contrib, scored, cannot


def _combine(s, p, nn, n_scored) -> np.ndarray:
    """SPEC's S/P/Nn rule, vectorised; NaN where nothing was scored."""
    s, p, nn = (np.asarray(x, dtype=float) for x in (s, p, nn))
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(
            p > 0,
            np.clip(s / np.where(p > 0, p, 1.0), 0, 1),
            np.where(nn > 0, np.clip(1 + s / np.where(nn > 0, nn, 1.0), 0, 1), 0.0),
        )
    return np.where(np.asarray(n_scored) > 0, score, np.nan)


def score_response(
    outcomes: Sequence[CriterionOutcome],
    *,
    strategy: CannotAssess | str,
    partial_credit: float = DEFAULT_PARTIAL_CREDIT,
    length_penalty: LengthPenalty | None = None,
    words: int | None = None,
) -> float | None:
    """Weighted score in [0, 1] of one response, or None if no criterion was scored.

    With a `length_penalty`, `words` (the response's word count) is required.
    """
    rule = parse_strategy(strategy)
    if not outcomes:
        return None
    w, contrib, scored, _ = _contributions(
        [o.weight for o in outcomes],
        [np.nan if o.value is None else o.value for o in outcomes],
        [o.min_value for o in outcomes],
        [o.max_value for o in outcomes],
        [o.not_applicable for o in outcomes],
        rule,
        partial_credit,
    )
    score = _combine(
        contrib[scored].sum(), w[scored & (w > 0)].sum(), -w[scored & (w <= 0)].sum(), scored.sum()
    )
    result = float(score)
    if np.isnan(result):
        return None
    if length_penalty is not None:
        if words is None:
            raise MetricError("words is required with a length penalty")
        result = max(0.0, result - float(length_penalty.amount(words)))
    return result


def score_responses(
    df: pd.DataFrame,
    *,
    strategy: CannotAssess | str,
    partial_credit: float = DEFAULT_PARTIAL_CREDIT,
    response: str = "response",
    length_penalty: LengthPenalty | None = None,
    words: pd.Series | None = None,
) -> pd.DataFrame:
    """Score many responses from one row per (response, criterion).

    Columns: `response`, `weight`, `value` (NaN = cannot assess), optional
    `min_value` / `max_value` (default 0 and 1) and `not_applicable` (default False).
    Returns a DataFrame indexed by response with `score` (NaN where undefined, i.e.
    None in `score_response`), `n_scored` and `n_cannot_assess`. `words` is a Series of
    word counts indexed by response, required with a length penalty.
    """
    rule = parse_strategy(strategy)
    missing = [c for c in (response, "weight", "value") if c not in df.columns]
    if missing:
        raise MetricError(f"missing column(s): {', '.join(missing)}")
    n = len(df)
    w, contrib, scored, cannot = _contributions(
        df["weight"].to_numpy(),
        df["value"].to_numpy(dtype=float, na_value=np.nan),
        df["min_value"].to_numpy() if "min_value" in df.columns else np.zeros(n),
        df["max_value"].to_numpy() if "max_value" in df.columns else np.ones(n),
        df["not_applicable"].to_numpy(dtype=bool) if "not_applicable" in df.columns else np.zeros(n, bool),
        rule,
        partial_credit,
    )
    parts = pd.DataFrame(
        {
            "s": np.where(scored, contrib, 0.0),
            "p": np.where(scored & (w > 0), w, 0.0),
            "nn": np.where(scored & (w <= 0), -w, 0.0),
            "n_scored": scored.astype(np.int64),
            "n_cannot_assess": cannot.astype(np.int64),
        },
    )
    parts[response] = df[response].to_numpy()
    sums = parts.groupby(response, sort=True, observed=True).sum()
    score = _combine(sums["s"], sums["p"], sums["nn"], sums["n_scored"])
    if length_penalty is not None:
        if words is None:
            raise MetricError("words is required with a length penalty")
        counts = words.reindex(sums.index)
        if counts.isna().any():
            raise MetricError("words lacks a word count for some responses")
        score = np.maximum(0.0, score - length_penalty.amount(counts.to_numpy()))
    return pd.DataFrame(
        {"score": score, "n_scored": sums["n_scored"], "n_cannot_assess": sums["n_cannot_assess"]},
        index=sums.index,
    )
