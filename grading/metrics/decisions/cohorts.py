"""The cohort decision (SPEC §2): the checker's label where the item has one, else the
annotators' majority; a tie is unresolved. ``cohort_votes``: the labels behind it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..ensemble import VoteRule
from .core import (
    _decisions_from_rows,
    _empty,
    _items,
    _typed,
    _vote_codes,
    _winning_rows,
)


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
