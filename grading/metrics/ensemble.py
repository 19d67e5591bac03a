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
    item has two or more votes; `n_items_agreement` counts the items it averages, and
    `item_agreement` gives each of them its share of votes for the modal decision.
    """

    rule: VoteRule
    decisions: pd.Series
    n_items: int
    n_unresolved: int
    mean_agreement: float | None
    n_items_agreement: int
    item_agreement: pd.Series


def _parse_rule(rule: VoteRule | str) -> VoteRule:
    try:
        return rule if isinstance(rule, VoteRule) else VoteRule(str(rule).strip().lower())
    except ValueError:
        raise MetricError(f"unknown vote rule {rule!r}; use one of {', '.join(r.value for r in VoteRule)}") from None


def _tallies(item_codes: np.ndarray, vote_codes: np.ndarray, n_votes: int, weights: np.ndarray | None):
    """(item, vote, tally) of every (item, vote) pair present, sorted by item then tally (largest first)."""
    pair = item_codes.astype(np.int64) * n_votes + vote_codes
    keys, inverse = np.unique(pair, return_inverse=True)
    tally = np.bincount(inverse, weights=weights, minlength=len(keys)).astype(float)
    item, vote = keys // n_votes, keys % n_votes
    order = np.lexsort((-tally, item))
    return item[order], vote[order], tally[order]


def _top(item, vote, tally, n_items: int, tolerance: float) -> np.ndarray:
    """Per item the vote with the largest tally; -1 where the top two tallies tie."""
    winner = np.full(n_items, -1, dtype=np.int64)
    if not len(item):
        return winner
    first = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    runner_up = np.minimum(first + 1, len(item) - 1)
    tied = (runner_up != first) & (item[runner_up] == item[first]) & (np.abs(tally[first] - tally[runner_up]) <= tolerance)
    winner[item[first]] = np.where(tied, -1, vote[first])
    return winner


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
    # Items and votes as integer codes: counting is then a sort and a bincount, whatever the labels.
    item_codes, items = pd.factorize(frame[item], sort=True)
    vote_codes, labels = pd.factorize(frame[vote], sort=False)
    n_items, n_labels = len(items), max(len(labels), 1)
    labels = np.asarray(labels, dtype=object)

    weight_values = None
    if rule is VoteRule.WEIGHTED:
        if weights is None:
            raise MetricError("the weighted rule needs a weight per voter")
        w = frame[voter].map(weights)
        if w.isna().any():
            raise MetricError("weights lack some voters")
        if (w < 0).any():
            raise MetricError("voter weights must be non-negative")
        weight_values = w.to_numpy(dtype=float)

    t_item, t_vote, t_tally = _tallies(item_codes, vote_codes, n_labels, None)
    n_votes = np.bincount(item_codes, minlength=n_items)
    modal = np.zeros(n_items)
    np.maximum.at(modal, t_item, t_tally)
    multi = n_votes >= 2
    agreement = pd.Series(modal[multi] / n_votes[multi], index=pd.Index(np.asarray(items)[multi], name=item))

    if rule is VoteRule.MAJORITY:
        winner = _top(t_item, t_vote, t_tally, n_items, tolerance=0)
    elif rule is VoteRule.WEIGHTED:
        w_item, w_vote, w_tally = _tallies(item_codes, vote_codes, n_labels, weight_values)
        winner = _top(w_item, w_vote, w_tally, n_items, tolerance=1e-12)
    elif rule is VoteRule.UNANIMOUS:
        distinct = np.bincount(t_item, minlength=n_items)
        winner = np.full(n_items, -1, dtype=np.int64)
        first = np.flatnonzero(np.r_[True, t_item[1:] != t_item[:-1]]) if len(t_item) else np.array([], dtype=np.int64)
        winner[t_item[first]] = np.where(distinct[t_item[first]] == 1, t_vote[first], -1)
    else:
        positive_code = np.flatnonzero(pd.Series(labels).eq(positive).to_numpy())
        hit = np.zeros(n_items, dtype=bool)
        if len(positive_code):
            hit[item_codes[vote_codes == positive_code[0]]] = True
        decided = np.empty(n_items, dtype=object)
        decided[:] = negative
        decided[hit] = positive
        decisions = pd.Series(decided, index=pd.Index(items, name=item), dtype=object)
        return _result(rule, decisions, agreement)

    values = np.empty(n_items, dtype=object)
    values[:] = None
    chosen = winner >= 0
    values[chosen] = labels[winner[chosen]]
    decisions = pd.Series(values, index=pd.Index(items, name=item), dtype=object)
    return _result(rule, decisions, agreement)


def _result(rule: VoteRule, decisions: pd.Series, agreement: pd.Series) -> EnsembleResult:
    return EnsembleResult(
        rule=rule,
        decisions=decisions,
        n_items=int(len(decisions)),
        n_unresolved=int(decisions.isna().sum()),
        mean_agreement=float(agreement.mean()) if len(agreement) else None,
        n_items_agreement=int(len(agreement)),
        item_agreement=agreement,
    )
