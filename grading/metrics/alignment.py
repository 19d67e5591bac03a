"""Aligning two cohorts' decisions that were imported separately (SPEC §3 "Alignment
of two cohorts"). Rows are matched on source model (exact) and on the normalized case
and criterion texts; rows that share all three keys are paired in source order, the
first with the first, the second with the second, and the rest stay unmatched.
Normalization applies Unicode NFKC, case-folds, deletes punctuation (every Unicode
category P* character) and collapses runs of whitespace to one space, trimmed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import MetricError

_WHITESPACE = re.compile(r"\s+")


class _PunctuationDeleter(dict):
    """str.translate table that deletes Unicode punctuation, filled lazily per code point."""

    def __missing__(self, codepoint: int) -> int | None:
        kept = None if unicodedata.category(chr(codepoint)).startswith("P") else codepoint
        self[codepoint] = kept
        return kept


_DELETE_PUNCTUATION = _PunctuationDeleter()


def normalize_text(text: str) -> str:
    """NFKC, case-fold, drop punctuation, collapse whitespace: 'Chest  Pain?' → 'chest pain'."""
    folded = unicodedata.normalize("NFKC", str(text)).casefold()
    return _WHITESPACE.sub(" ", folded.translate(_DELETE_PUNCTUATION)).strip()


@dataclass(frozen=True, eq=False)
class Alignment:
    """Matched row pairs and the counts of each side.

    `pairs` has columns left_row and right_row: 0-based positions in the inputs, in
    left source order.
    """

    pairs: pd.DataFrame
    matched: int
    left_total: int
    right_total: int
    left_unmatched: int
    right_unmatched: int


def _keyed(df: pd.DataFrame, model: str, texts: Sequence[str]) -> pd.DataFrame:
    missing = [c for c in (model, *texts) if c not in df.columns]
    if missing:
        raise MetricError(f"missing column(s): {', '.join(missing)}")
    keyed = pd.DataFrame({"_model": df[model].to_numpy()})
    for i, col in enumerate(texts):
        raw = df[col].astype(str)
        uniques = raw.unique()
        lookup = dict(zip(uniques, (normalize_text(u) for u in uniques)))
        keyed[f"_text{i}"] = raw.map(lookup).to_numpy()
    key_cols = list(keyed.columns)
    keyed["_occurrence"] = keyed.groupby(key_cols, sort=False, dropna=False).cumcount()
    keyed["_row"] = np.arange(len(keyed))
    return keyed


def align_rows(
    left: pd.DataFrame,
    right: pd.DataFrame,
    *,
    model: str = "model",
    case_text: str = "case_text",
    criterion_text: str = "criterion_text",
) -> Alignment:
    """Pair rows of two cohorts by (model, normalized case text, normalized criterion text, occurrence)."""
    texts = (case_text, criterion_text)
    lk = _keyed(left, model, texts)
    rk = _keyed(right, model, texts)
    on = ["_model", "_text0", "_text1", "_occurrence"]
    merged = lk.merge(rk, on=on, how="inner", suffixes=("_left", "_right"))
    pairs = (
        merged[["_row_left", "_row_right"]]
        .rename(columns={"_row_left": "left_row", "_row_right": "right_row"})
        .sort_values("left_row", kind="stable")
        .reset_index(drop=True)
    )
    matched = len(pairs)
    return Alignment(
        pairs=pairs,
        matched=matched,
        left_total=len(left),
        right_total=len(right),
        left_unmatched=len(left) - matched,
        right_unmatched=len(right) - matched,
    )
