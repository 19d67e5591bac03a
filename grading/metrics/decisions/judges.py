"""A judge's decision over its Monte Carlo samples, its missing outputs, and a panel's decision
over its member judges (SPEC §2 "Decision source", §3 "Ensemble vote")."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from annotation.vocabulary import (
    CANNOT_ASSESS,
    NOT_MET,
)

from ..ensemble import VoteRule, ensemble_vote
from ..errors import MetricError
from .core import (
    BINARY,
    DECISION_COLUMNS,
    ORDINAL,
    _decisions_from_rows,
    _empty,
    _items,
    _keys_among,
    _typed,
    _vote_codes,
    _winning_rows,
)


def judge_outputs(rows: pd.DataFrame) -> pd.DataFrame:
    """Judge outputs as votes: ``invalid`` (0/1) set for a missing or malformed output, which
    becomes a not-met vote on a binary criterion and no vote on others (SPEC §3).

    ``rows``: one row per output with ``kind`` (the criterion's), ``verdict``, ``option``,
    ``value`` and ``valid``.
    """
    rows = rows.copy()
    empty = rows["verdict"].isna() & rows["option"].isna() & rows["value"].isna()
    invalid = (~rows["valid"].astype(bool) | empty).to_numpy()
    binary = (rows["kind"] == BINARY).to_numpy()
    rows["invalid"] = invalid.astype(np.int64)
    if invalid.any():
        rows["verdict"] = rows["verdict"].astype(object)
        rows["option"] = rows["option"].astype(object)
        rows.loc[binary & invalid, "verdict"] = NOT_MET
        rows.loc[binary & invalid, "option"] = None
        rows.loc[~binary & invalid, ["verdict", "option"]] = None
        rows.loc[invalid, "value"] = np.nan
    return rows


def _combine(rows: pd.DataFrame, *, keys: list[str], rule: str, voter: str | None,
             weights: Mapping | None) -> pd.DataFrame:
    """Several decisions per item into one: a vote by ``rule`` for binary and nominal criteria,
    the (weighted) mean value for ordinal ones. ``rows`` carry ``kind``, ``invalid`` and ``n``
    (outputs behind each row) besides the decision columns."""
    frame = rows.reset_index(drop=True)
    item, items = _items(frame, keys)
    n_items = len(items)
    kind = frame["kind"].to_numpy(dtype=object)
    ordinal = kind == ORDINAL
    codes = _vote_codes(frame)
    codes[ordinal] = -1  # ordinal criteria are averaged, not voted
    voters = frame[voter].to_numpy(dtype=object) if voter is not None else None
    if rule == VoteRule.ANY:
        # "any" means met if any voter says met: a binary notion; other criteria take the majority.
        item_kind = np.empty(n_items, dtype=object)
        item_kind[item] = kind
        binary_items = item_kind == BINARY
        on_binary = np.where(binary_items[item], codes, -1)
        on_other = np.where(binary_items[item], -1, codes)
        winner = np.where(
            binary_items,
            _winning_rows(frame, item, on_binary, n_items, rule=VoteRule.ANY, voters=voters),
            _winning_rows(frame, item, on_other, n_items, rule=VoteRule.MAJORITY, voters=voters),
        )
    else:
        winner = _winning_rows(frame, item, codes, n_items, rule=rule, voters=voters, weights=weights)
    out = pd.concat([items, _decisions_from_rows(frame, winner)], axis=1)

    has_value = ordinal & ~np.isnan(frame["value"].to_numpy(dtype=float))
    if ordinal.any():
        value = frame["value"].to_numpy(dtype=float)
        w = np.ones(len(frame))
        if weights and voter is not None:
            w = frame[voter].map(weights).fillna(0.0).to_numpy(dtype=float)
        total = np.bincount(item[has_value], weights=(value * w)[has_value], minlength=n_items)
        weight = np.bincount(item[has_value], weights=w[has_value], minlength=n_items)
        cannot = np.zeros(n_items, dtype=bool)
        cannot[item[ordinal & (frame["verdict"].to_numpy(dtype=object) == CANNOT_ASSESS)]] = True
        item_ordinal = np.zeros(n_items, dtype=bool)
        item_ordinal[item[ordinal]] = True
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(weight > 0, total / np.where(weight > 0, weight, 1.0), np.nan)
        out.loc[item_ordinal, "value"] = mean[item_ordinal]
        out.loc[item_ordinal, "option"] = None
        out.loc[item_ordinal, "verdict"] = np.where(np.isnan(mean[item_ordinal]) & cannot[item_ordinal], CANNOT_ASSESS, None)
    # An item with one decision behind it (one sample, or one member's vote) keeps it as it is,
    # whatever the rule: the same answer as deciding that source on its own.
    rows_per_item = np.bincount(item, minlength=n_items)
    lone = rows_per_item == 1
    if lone.any():
        lone_row = np.full(n_items, -1, dtype=np.int64)
        lone_row[item] = np.arange(len(frame))
        kept = _decisions_from_rows(frame, np.where(lone, lone_row, -1))
        out.loc[lone, ["verdict", "option", "value"]] = kept.loc[lone, ["verdict", "option", "value"]].to_numpy()
    invalid = np.bincount(item, weights=frame["invalid"].to_numpy(dtype=float), minlength=n_items).astype(np.int64)
    n = np.bincount(item, weights=frame["n"].to_numpy(dtype=float), minlength=n_items).astype(np.int64)
    decided = out["verdict"].notna().to_numpy() | out["option"].notna().to_numpy() | out["value"].notna().to_numpy()
    out["unresolved"] = ~decided & (invalid < n)
    out["invalid"] = invalid
    out["n"] = n
    return _typed(out)


def samples_decide(rows: pd.DataFrame, *, keys: list[str]) -> pd.DataFrame:
    """A judge's decision of every item over its samples (SPEC §2 "Decision source").

    ``rows``: one row per judge output with the item ``keys``, ``kind``, ``verdict``,
    ``option``, ``value`` and ``valid``. Returns one row per item: the keys and the decision
    columns (``n`` = samples, ``invalid`` = invalid samples among them).
    """
    if rows.empty:
        return _empty(keys)
    votes = judge_outputs(rows)
    votes["n"] = 1
    if not votes.duplicated(keys).any():  # one sample per item: its output is the decision
        out = votes[[*keys, "verdict", "option", "value", "invalid", "n"]].reset_index(drop=True)
        out["unresolved"] = False
        return _typed(out[[*keys, *DECISION_COLUMNS]])
    return _combine(votes, keys=keys, rule=VoteRule.MAJORITY, voter=None, weights=None)[[*keys, *DECISION_COLUMNS]]


def missing_outputs(expected: pd.DataFrame, decided: pd.DataFrame, *, keys: list[str]) -> pd.DataFrame:
    """The decisions of items a judge was expected to decide but gave no output for (SPEC §3:
    missing output is never dropped): not met on a binary criterion, no decision otherwise,
    one invalid output, no sample. ``expected``: the keys and ``kind`` of every item of the
    rubric inside the responses the judge judged; ``decided``: the keys of its decisions."""
    missing = expected[~_keys_among(expected, decided, keys=keys)].reset_index(drop=True)
    binary = (missing["kind"] == BINARY).to_numpy()
    out = missing[keys].copy()
    out["verdict"] = np.where(binary, NOT_MET, None)
    out["verdict"] = out["verdict"].astype(object).where(binary, None)
    out["option"] = None
    out["value"] = np.nan
    out["unresolved"] = False
    out["invalid"] = 1
    out["n"] = 0
    return _typed(out[[*keys, *DECISION_COLUMNS]])


def panel_decide(decisions: pd.DataFrame, *, keys: list[str], rule: str, weights: Mapping | None = None) -> pd.DataFrame:
    """A panel's decision of every item over its members' decisions (SPEC §3 "Ensemble vote").

    ``decisions``: the members' decisions (as ``samples_decide`` returns them) with the item
    ``keys``, ``member`` and ``kind``. An unresolved member decision is no vote. ``invalid``
    and ``n`` add up the members' outputs.
    """
    rule = VoteRule(str(rule))
    if decisions.empty:
        return _empty(keys)
    if rule == VoteRule.WEIGHTED and not weights:
        raise MetricError("a weighted panel needs a weight per member")
    frame = decisions.reset_index(drop=True)
    return _combine(frame, keys=keys, rule=rule, voter="member", weights=weights)[[*keys, *DECISION_COLUMNS]]


def panel_agreement(decisions: pd.DataFrame, *, keys: list[str], rule: str = "majority",
                    weights: Mapping | None = None, per_item: bool = False):
    """How much a panel's members agree (``ensemble_vote``'s mean agreement, SPEC §3 "Ensemble
    vote"): over the items with two or more votes, the mean share of votes for the winning
    decision; and how many items that averages. Ordinal criteria, which a panel averages rather
    than votes on, are left out, as unresolved member decisions are. With ``per_item``, also the
    items behind the mean: their keys and ``agreement``."""
    none = (None, 0, pd.DataFrame(columns=[*keys, "agreement"])) if per_item else (None, 0)
    if decisions.empty:
        return none
    frame = decisions.reset_index(drop=True)
    item, item_keys = _items(frame, keys)
    codes = _vote_codes(frame)
    codes[frame["kind"].to_numpy(dtype=object) == ORDINAL] = -1
    voting = codes >= 0
    if not voting.any():
        return none
    votes = pd.DataFrame({"item": item[voting], "vote": codes[voting], "voter": frame["member"].to_numpy(dtype=object)[voting]})
    rule = VoteRule(str(rule)) if str(rule) != VoteRule.ANY else VoteRule.MAJORITY
    result = ensemble_vote(votes, rule=rule, weights=weights if rule == VoteRule.WEIGHTED else None)
    if not per_item:
        return result.mean_agreement, result.n_items_agreement
    agreeing = item_keys.iloc[result.item_agreement.index.to_numpy()].reset_index(drop=True)
    return result.mean_agreement, result.n_items_agreement, agreeing.assign(agreement=result.item_agreement.to_numpy())
