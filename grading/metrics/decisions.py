"""The decision rules of SPEC §2 and §3, in one module. Every page, command, API view, prompt
builder and exporter gets a source's decisions from these functions (through
``grading.selectors``, which only loads the rows), so no reader re-derives a rule:

- ``cohort_decide``: the cohort decision — the checker's label if there is one; else the
  single annotator's label; else the majority of the annotators' labels; a tie is unresolved
  (and counts as a disagreement). ``cohort_votes``: the labels behind it.
- ``samples_decide``: a judge's decision over its Monte Carlo samples — the majority for
  binary and nominal criteria (a tie is unresolved), the mean value for ordinal ones. A
  missing or unparseable output is counted invalid, and on a binary criterion it is a
  not-met vote (SPEC §3); on other criteria it is no vote.
- ``missing_outputs``: an item a judge left without output inside a response it judged is an
  invalid output too: not met on a binary criterion.
- ``panel_decide``: a panel's decision over its member judges' decisions by the panel's
  vote rule (SPEC §3 "Ensemble vote"); ordinal criteria take the (weighted) mean value.
- ``gold_decide``: the gold decision of an item and its provenance, from the cohort
  decisions and the adjudications.
A decision's value and the rescaling to [0, 1] are in ``values`` (``numeric_values``,
``unit_scale``, ``unit_bounds``).

Decisions are typed columns, never encoded strings: ``verdict`` (met / not_met /
cannot_assess, or None), ``option`` (an option label, or None), ``value`` (the option's
value or the ordinal value, NaN otherwise), ``unresolved`` (a tie: no decision), ``invalid``
(judge outputs behind the decision that were missing or malformed) and ``n`` (labels or
samples behind it). One decision as a Python value is a ``SourceDecision``. Votes compare
the whole decision: an option and a bare value equal to that option's value are different
votes, as a label with a value states something other than a chosen option.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from annotation.vocabulary import (
    ADJUDICATED,
    AGREED,
    CANNOT_ASSESS,
    MET,
    NOT_MET,
    SINGLE_COHORT,
    UNRESOLVED,
    VERDICTS,
    decision_text,
)

from .ensemble import VoteRule, ensemble_vote
from .errors import MetricError

BINARY, ORDINAL, NOMINAL = "binary", "ordinal", "nominal"
DECISION_COLUMNS = ["verdict", "option", "value", "unresolved", "invalid", "n"]


@dataclass(frozen=True)
class SourceDecision:
    """One source's decision on one (response, criterion)."""

    verdict: str | None = None
    option: str | None = None
    value: float | None = None
    unresolved: bool = False
    invalid: int = 0
    n: int = 0

    @classmethod
    def from_row(cls, row: Mapping) -> SourceDecision:
        value = row.get("value")
        return cls(
            verdict=_none(row.get("verdict")), option=_none(row.get("option")),
            value=None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value),
            unresolved=bool(row.get("unresolved", False)), invalid=int(row.get("invalid", 0) or 0), n=int(row.get("n", 0) or 0),
        )

    @property
    def decided(self) -> bool:
        return self.verdict is not None or self.option is not None or self.value is not None

    def fields(self) -> dict:
        """The decision in bundle form: ``{"verdict": ...}``, ``{"option": ...}`` or ``{"value": ...}``;
        ``{"verdict": None}`` when there is none (a tie, or invalid output only)."""
        return decision_fields(verdict=self.verdict, option=self.option, value=self.value)

    def text(self) -> str:
        """How pages show it (the vocabulary's ``decision_text``): an option label, "not met",
        "value 6.5", "unresolved" for a tie, "invalid" for invalid outputs only."""
        return decision_text(verdict=self.verdict, option=self.option, value=self.value,
                             unresolved=self.unresolved, invalid=self.invalid)


def decision_fields(*, verdict: str | None, option: str | None, value: float | None) -> dict:
    """The bundle fields of one stored decision (label, judgment, adjudication or source decision)."""
    if option is not None and option == option:  # NaN (a missing string in pandas) is no option
        return {"option": option}
    if verdict is not None and verdict == verdict:
        return {"verdict": verdict}
    if value is not None and not (isinstance(value, float) and math.isnan(value)):
        return {"value": float(value)}
    return {"verdict": None}


def _none(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The decision columns in their one form: verdict and option objects with None for none
    (pandas would otherwise infer a string dtype with NaN), value float, the flags and counts
    as bool and int."""
    for column in ("verdict", "option"):
        if column in frame.columns:
            frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    if "value" in frame.columns:
        frame["value"] = frame["value"].astype(float)
    if "unresolved" in frame.columns:
        frame["unresolved"] = frame["unresolved"].astype(bool)
    for column in ("invalid", "n"):
        if column in frame.columns:
            frame[column] = frame[column].astype(np.int64)
    return frame


# -- votes --------------------------------------------------------------------------------------


def _vote_codes(frame: pd.DataFrame) -> np.ndarray:
    """One integer per distinct decision (verdict, option, or bare value); -1 for no decision."""
    n = len(frame)
    codes = np.full(n, -1, dtype=np.int64)
    option = frame["option"].to_numpy(dtype=object)
    verdict = frame["verdict"].to_numpy(dtype=object)
    value = frame["value"].to_numpy(dtype=float)
    has_option = pd.notna(option)
    has_verdict = pd.notna(verdict) & ~has_option
    has_value = ~np.isnan(value) & ~has_option & ~has_verdict
    if has_verdict.any():
        # The distinct verdicts first, then each row's: hashing millions of strings against the
        # categories row by row (``pd.Categorical``) takes four times as long.
        seen, distinct = pd.factorize(verdict[has_verdict])
        codes[has_verdict] = pd.Index(VERDICTS, dtype=object).get_indexer(distinct)[seen]  # an unknown verdict stays -1
    offset = len(VERDICTS)
    if has_option.any():
        option_codes, uniques = pd.factorize(option[has_option])
        codes[has_option] = offset + option_codes
        offset += len(uniques)
    if has_value.any():
        value_codes, _ = pd.factorize(value[has_value])
        codes[has_value] = offset + value_codes
    return codes


def _item_numbers(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Item number of each row: rows with the same ``keys`` (missing values included) share it."""
    return frame.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()


def _items(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Item number of each row (rows of one item share it) and the item keys, one row per item."""
    item = _item_numbers(frame, keys)
    first = np.unique(item, return_index=True)[1]
    return item, frame.iloc[first][keys].reset_index(drop=True)


def _keys_among(frame: pd.DataFrame, other: pd.DataFrame, *, keys: list[str]) -> np.ndarray:
    """Per row of ``frame``, whether ``other`` has a row with the same ``keys``. Both numbered as
    items together: a third less time than a merge with an indicator at a million rows, and a
    fraction of it at a page's few hundred."""
    item = _item_numbers(pd.concat([frame[keys], other[keys]], ignore_index=True), keys)
    return np.isin(item[:len(frame)], item[len(frame):])


def _winning_rows(frame: pd.DataFrame, item: np.ndarray, codes: np.ndarray, n_items: int, *, rule: str,
                  voters: np.ndarray | None = None, weights: Mapping | None = None) -> np.ndarray:
    """Per item the index of a row carrying the winning decision, -1 for a tie or no vote."""
    voting = codes >= 0
    winner_row = np.full(n_items, -1, dtype=np.int64)
    if not voting.any():
        return winner_row
    votes = pd.DataFrame({"item": item[voting], "vote": codes[voting],
                          "voter": voters[voting] if voters is not None else np.zeros(int(voting.sum()), dtype=np.int64)})
    positive = negative = None
    if rule == VoteRule.ANY:
        positive, negative = VERDICTS.index(MET), VERDICTS.index(NOT_MET)
    result = ensemble_vote(votes, rule=rule, weights=weights, positive=positive, negative=negative)
    winning = result.decisions.dropna()
    if not len(winning):
        return winner_row
    # The first row of each item that carries the winning code.
    rows = np.flatnonzero(voting)
    width = int(codes.max()) + 1
    pairs, first = np.unique(item[rows] * width + codes[rows], return_index=True)
    won_items = winning.index.to_numpy(dtype=np.int64)
    wanted = won_items * width + winning.to_numpy(dtype=np.int64)
    winner_row[won_items] = rows[first[np.searchsorted(pairs, wanted)]]
    return winner_row


def _decisions_from_rows(frame: pd.DataFrame, winner_row: np.ndarray) -> pd.DataFrame:
    """verdict / option / value columns of each item's winning row (None / NaN where there is none)."""
    chosen = winner_row >= 0
    verdict = np.full(len(winner_row), None, dtype=object)
    option = np.full(len(winner_row), None, dtype=object)
    value = np.full(len(winner_row), np.nan)
    if chosen.any():
        picked = winner_row[chosen]
        verdict[chosen] = frame["verdict"].to_numpy(dtype=object)[picked]
        option[chosen] = frame["option"].to_numpy(dtype=object)[picked]
        value[chosen] = frame["value"].to_numpy(dtype=float)[picked]
    return _typed(pd.DataFrame({"verdict": pd.Series(verdict, dtype=object), "option": pd.Series(option, dtype=object),
                                "value": value}))


def _empty(keys: list[str]) -> pd.DataFrame:
    return _typed(pd.DataFrame(columns=[*keys, *DECISION_COLUMNS]))


# -- the cohort decision ------------------------------------------------------------------------


def _deciding(frame: pd.DataFrame, item: np.ndarray, n_items: int) -> np.ndarray:
    """Which labels decide their item: a checked item counts its checker label only, any other
    item every annotator's label."""
    is_checker = frame["role"].to_numpy(dtype=object) == "checker"
    checked_item = np.zeros(n_items, dtype=bool)
    checked_item[item[is_checker]] = True
    return ~checked_item[item] | is_checker


def cohort_votes(labels: pd.DataFrame, *, keys: list[str]) -> pd.DataFrame:
    """The labels behind each item's cohort decision (``cohort_decide``'s rule), item by item: the
    checker's label where the item has one, else every annotator's. A page that says how many
    labels agree with a decision counts these, so a response whose checker reviewed some criteria
    keeps the annotators' votes on the others. ``labels`` as for ``cohort_decide``."""
    if labels.empty:
        return labels
    frame = labels.reset_index(drop=True)
    item, items = _items(frame, keys)
    return frame[_deciding(frame, item, len(items))].reset_index(drop=True)


def cohort_decide(labels: pd.DataFrame, *, keys: list[str]) -> pd.DataFrame:
    """The cohort decision of every item (SPEC §2).

    ``labels``: one row per label with the item ``keys`` (e.g. response_id, criterion_id and
    the cohort), ``role`` (annotator / checker), ``verdict``, ``option`` and ``value``.
    Returns one row per item: the keys and the decision columns; ``n`` counts the labels
    that decided it (the checker's, or the annotators').
    """
    if labels.empty:
        return _empty(keys)
    frame = labels.reset_index(drop=True)
    item, items = _items(frame, keys)
    counts = _deciding(frame, item, len(items))
    frame, item = frame[counts].reset_index(drop=True), item[counts]
    codes = _vote_codes(frame)
    winner = _winning_rows(frame, item, codes, len(items), rule=VoteRule.MAJORITY)
    out = pd.concat([items, _decisions_from_rows(frame, winner)], axis=1)
    out["unresolved"] = winner < 0
    out["invalid"] = 0
    out["n"] = np.bincount(item, minlength=len(items)).astype(np.int64)
    return _typed(out)


# -- a judge's decision over samples, a panel's over members -------------------------------------


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


# -- gold ---------------------------------------------------------------------------------------


def gold_decide(cohorts: pd.DataFrame, adjudications: pd.DataFrame, *, keys: list[str],
                with_cohort_decisions: bool = True, with_settled: bool = False) -> pd.DataFrame:
    """The gold decision of every item with its provenance.

    ``cohorts``: the cohort decisions (``cohort_decide`` output) with the item ``keys`` and a
    ``cohort`` column; ``adjudications``: rows with the keys and a decision. An adjudication
    wins (``adjudicated``); otherwise, when two or more cohorts decided the item and all agree,
    their decision is ``agreed``; when only one cohort labelled it and decided, ``single-cohort``;
    anything else (the cohorts differ, or one is a tie) is ``unresolved``, with no decision.
    Returns the keys, the decision columns (``n`` = cohorts that labelled the item),
    ``provenance`` and ``cohort_decisions`` ({cohort: the decision in bundle form}, ``{"verdict":
    None}`` for a tie; every item's ``{}`` without ``with_cohort_decisions``: gold as a decision
    source needs only the decision, and a dict per item was seconds at full scale). With
    ``with_settled``, also ``settled``: the provenance the cohorts alone give, before any
    adjudication (``unresolved`` is a disputed item; None for an item only an adjudicator decided).
    """
    columns = [*keys, "verdict", "option", "value", "provenance", "n", "cohort_decisions"]
    parts = []
    if not cohorts.empty:
        frame = cohorts.reset_index(drop=True)
        codes = _vote_codes(frame)
        codes[frame["unresolved"].to_numpy(dtype=bool)] = -1
        item, items = _items(frame, keys)
        n_items = len(items)
        n_cohorts = np.bincount(item, minlength=n_items)
        decided = codes >= 0
        n_decided = np.bincount(item[decided], minlength=n_items)
        low = np.full(n_items, np.iinfo(np.int64).max)
        high = np.full(n_items, -1)
        np.minimum.at(low, item[decided], codes[decided])
        np.maximum.at(high, item[decided], codes[decided])
        agreed = (n_cohorts >= 2) & (n_decided == n_cohorts) & (low == high)
        single = (n_cohorts == 1) & (n_decided == 1)
        first_row = np.full(n_items, -1, dtype=np.int64)
        rows = np.flatnonzero(decided)
        first_row[item[rows[::-1]]] = rows[::-1]
        winner = np.where(agreed | single, first_row, -1)
        out = pd.concat([items, _decisions_from_rows(frame, winner)], axis=1)
        out["provenance"] = np.select([agreed, single], [AGREED, SINGLE_COHORT], UNRESOLVED)
        out["n"] = n_cohorts
        per_item: list[dict] = [{} for _ in range(n_items)]
        unresolved = frame["unresolved"].to_numpy(dtype=bool)
        for i, name, verdict, option, value, tie in zip(item, frame["cohort"].to_numpy(dtype=object),
                                                        frame["verdict"].to_numpy(dtype=object),
                                                        frame["option"].to_numpy(dtype=object),
                                                        frame["value"].to_numpy(dtype=float), unresolved) \
                if with_cohort_decisions else ():
            per_item[i][name] = {"verdict": None} if tie else decision_fields(verdict=verdict, option=option, value=value)
        out["cohort_decisions"] = per_item
        parts.append(out)
    gold = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    if with_settled:
        gold["settled"] = gold["provenance"].astype(object)
        columns = [*columns, "settled"]
    if adjudications is not None and not adjudications.empty:
        adj = adjudications[[*keys, "verdict", "option", "value"]].copy()
        adj["provenance"] = ADJUDICATED
        merged = gold.merge(adj, on=keys, how="outer", suffixes=("", "_adj"), indicator=True)
        taken = merged["_merge"] != "left_only"
        for column in ("verdict", "option", "value", "provenance"):
            merged.loc[taken, column] = merged.loc[taken, f"{column}_adj"]
        merged["n"] = merged["n"].fillna(0).astype(np.int64)
        merged["cohort_decisions"] = [c if isinstance(c, dict) else {} for c in merged["cohort_decisions"]]
        if with_settled:
            merged["settled"] = merged["settled"].astype(object).where(merged["settled"].notna(), None)
        gold = merged[columns]
    gold["n"] = gold["n"].fillna(0) if len(gold) else gold["n"]
    return _typed(gold[columns].reset_index(drop=True))
