"""Trait scores of RULERS compiled rubrics (SPEC §3 "Trait score").

A trait is an ordinal criterion whose options are the score scale [lo, hi]; its checklist items
decide d ∈ {0, 1, 2} (not present / partially / clearly). With μ = mean over the items of d / 2,
s = clamp(round_half_up(lo + (hi − lo) · μ), lo, hi). The evidence gate: when the trait has a
minimum evidence m and a gate τ and fewer than m valid quotes support it, s = min(s, τ − 1).
A judge's samples are scored one by one and their scores averaged, rounded half up.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from .errors import MetricError


def round_half_up(x: float) -> int:
    """2.5 → 3, 3.5 → 4, −0.5 → 0 (never Python's round half to even)."""
    return int(math.floor(x + 0.5))


def trait_score(*, decisions: Iterable[float | None], lo: float, hi: float, valid_quotes: int = 0,
                min_evidence: int = 0, gate: float | None = None) -> int | None:
    """The score of one trait from its items' decisions (None for an item without a decision);
    None when no item has one."""
    ds = [float(d) for d in decisions if d is not None and d == d]
    if not ds:
        return None
    if any(d not in (0.0, 1.0, 2.0) for d in ds):
        raise MetricError(f"checklist decisions are 0, 1 or 2, not {sorted(set(ds))}")
    mu = sum(d / 2 for d in ds) / len(ds)
    score = min(max(round_half_up(lo + (hi - lo) * mu), math.ceil(lo)), math.floor(hi))
    if min_evidence and gate is not None and valid_quotes < min_evidence:
        score = min(score, math.ceil(gate) - 1)
    return score


def samples_trait_score(scores: Iterable[int | None]) -> int | None:
    """A judge's trait score over its samples: the mean of the samples' scores, rounded half up."""
    defined = [s for s in scores if s is not None]
    return round_half_up(sum(defined) / len(defined)) if defined else None
