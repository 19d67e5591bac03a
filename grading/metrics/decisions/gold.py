"""The gold decision of an item and its provenance, from the cohort decisions and the
adjudications (SPEC §2)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from annotation.vocabulary import (
    ADJUDICATED,
    AGREED,
    SINGLE_COHORT,
    UNRESOLVED,
)

from .core import (
    _decisions_from_rows,
    _items,
    _typed,
    _vote_codes,
    decision_fields,
)


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
