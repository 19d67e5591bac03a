"""What every decision rule shares: the decision columns and their types, one decision as a
Python value (``SourceDecision``), how votes are coded and counted per item, and the winning
row of each item under a vote rule."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from annotation.vocabulary import (
    MET,
    NOT_MET,
    VERDICTS,
    decision_text,
)

from ..ensemble import VoteRule, ensemble_vote

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
