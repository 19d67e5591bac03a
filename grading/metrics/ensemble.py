"""Combining several votes per item into one decision (SPEC §3 "Ensemble vote"): the
judges of an ensemble, or the Monte Carlo samples of one judge. Votes are any hashable
labels (1/0, 'met'/'not_met'/'cannot_assess', option values); missing votes must be
resolved by the caller first (an invalid judge output is a not-met vote, per SPEC).
Rules: MAJORITY takes the label with the most votes, a tie for the top is unresolved;
WEIGHTED does the same with summed voter weights; UNANIMOUS needs every vote equal,
otherwise unresolved; ANY gives the positive label if any voter gave it, else the
negative label. Unresolved decisions are None. Agreement among voters is the mean, over
items with at least two votes, of the share of voters who gave the item's modal label.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import MetricError


class VoteRule(enum.StrEnum):
    MAJORITY = "majority"
    WEIGHTED = "weighted"
    UNANIMOUS = "unanimous"
    ANY = "any"


@dataclass(frozen=True, eq=False)
class EnsembleResult:
    """Decisions per item (None = unresolved) with agreement among the voters.

    `decisions` is an object Series indexed by item. `mean_agreement` is None when no
    item has two or more votes; `n_items_agreement` counts the items it averages.
    """

    rule: VoteRule
    decisions: pd.Series
    n_items: int
    n_unresolved: int
    mean_agreement: float | None
    n_items_agreement: int


def _parse_rule(rule: VoteRule | str) -> VoteRule:
    try:
        return rule if isinstance(rule, VoteRule) else VoteRule(str(rule).strip().lower())
    except ValueError:
        raise MetricError(f"unknown vote rule {rule!r}; use one of {', '.join(r.value for r in VoteRule)}") from None


def _top_label(tallies: pd.DataFrame, item: str, vote: str, tolerance: float) -> pd.Series:
    """Label with the largest tally per item; None where the top two tallies tie."""
    ordered = tallies.sort_values([item, "tally"], ascending=[True, False], kind="stable")
    grouped = ordered.groupby(item, sort=True)
    first = grouped.nth(0).set_index(item)
    second = grouped.nth(1).set_index(item)
    runner_up = second["tally"].reindex(first.index)
    tied = (first["tally"] - runner_up).abs().le(tolerance) & runner_up.notna()
    decisions = first[vote].astype(object)
    decisions[tied] = None
    return decisions


def ensemble_vote(
    df: pd.DataFrame,
    *,
    rule: VoteRule | str,
    item: str = "item",
    voter: str = "voter",
    vote: str = "vote",
    weights: Mapping | None = None,
    positive=1,
    negative=0,
) -> EnsembleResult:
    """One decision per item from one row per (item, voter) vote.

    `weights` (voter → weight ≥ 0) is required for WEIGHTED and must cover every
    voter; `positive` / `negative` are the labels ANY returns.
    """
    rule = _parse_rule(rule)
    missing = [c for c in (item, voter, vote) if c not in df.columns]
    if missing:
        raise MetricError(f"missing column(s): {', '.join(missing)}")
    if df[vote].isna().any():
        raise MetricError("votes must not be missing; count invalid judge output as not met first")
    frame = df[[item, voter, vote]].reset_index(drop=True)

    counts = frame.groupby([item, vote], sort=True, observed=True).size().rename("tally").reset_index()
    n_votes = frame.groupby(item, sort=True, observed=True).size()
    modal = counts.groupby(item, sort=True)["tally"].max()
    multi = n_votes >= 2
    agreement = (modal[multi] / n_votes[multi]) if multi.any() else pd.Series(dtype=float)

    if rule is VoteRule.MAJORITY:
        decisions = _top_label(counts, item, vote, tolerance=0)
    elif rule is VoteRule.WEIGHTED:
        if weights is None:
            raise MetricError("the weighted rule needs a weight per voter")
        w = frame[voter].map(weights)
        if w.isna().any():
            raise MetricError("weights lack some voters")
        if (w < 0).any():
            raise MetricError("voter weights must be non-negative")
        weighted = (
            frame.assign(tally=w.astype(float)).groupby([item, vote], sort=True, observed=True)["tally"].sum()
        ).reset_index()
        decisions = _top_label(weighted, item, vote, tolerance=1e-12)
    elif rule is VoteRule.UNANIMOUS:
        distinct = counts.groupby(item, sort=True).size()
        first = counts.groupby(item, sort=True)[vote].first().astype(object)
        decisions = first.where(distinct == 1, None)
    else:
        hit = frame[vote].eq(positive).groupby(frame[item], sort=True).any()
        decisions = pd.Series(np.where(hit, positive, negative), index=hit.index, dtype=object)

    decisions = decisions.reindex(n_votes.index)
    decisions.index.name = item
    return EnsembleResult(
        rule=rule,
        decisions=decisions,
        n_items=int(len(decisions)),
        n_unresolved=int(decisions.isna().sum()),
        mean_agreement=float(agreement.mean()) if len(agreement) else None,
        n_items_agreement=int(len(agreement)),
    )
