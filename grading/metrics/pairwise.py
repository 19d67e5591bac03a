"""Pairwise rater agreement, HealthBench's meta-evaluation protocol (SPEC §3 "Pairwise rater
agreement"): each physician is scored against every other physician who labelled the same item,
and a model grader is placed among them.

For each annotator, every item they labelled that another annotator also labelled gives one
pair per other annotator (their label as the prediction, the other's as the truth); their MF1 is
computed over all their pairs pooled (``binary_agreement``, the one MF1 rule: F1 of each class,
their mean); n = their pairs. A grader is paired with every individual label. Annotators with
n ≤ min_n are left out of the n-weighted mean and of the percentile; the grader's percentile =
(annotators below it + ½ · ties) / annotators, in percent.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from .agreement import binary_agreement


def annotator_pairs(labels: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``labels``: item, rater, value (0/1), one label per (item, rater). Returns per rater the
    (truth, prediction) arrays of their pairs."""
    truth: dict[str, list] = defaultdict(list)
    prediction: dict[str, list] = defaultdict(list)
    for _, rows in labels.groupby("item", sort=False):
        if len(rows) < 2:
            continue  # an item with one rater gives no pair
        raters, values = rows["rater"].tolist(), rows["value"].tolist()
        for i, (rater, mine) in enumerate(zip(raters, values)):
            for j, other in enumerate(values):
                if i != j:
                    truth[rater].append(other)
                    prediction[rater].append(mine)
    return {r: (np.asarray(truth[r], dtype=np.int8), np.asarray(prediction[r], dtype=np.int8)) for r in truth}


def grader_pairs(labels: pd.DataFrame, grader: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The grader's decision (``grader``: item → 0/1) paired with every individual label."""
    decided = labels[labels["item"].isin(grader.index)]
    return decided["value"].to_numpy(dtype=np.int8), grader.reindex(decided["item"]).to_numpy(dtype=np.int8)


def percentile(value: float | None, others: list[float]) -> float | None:
    """(others below ``value`` + ½ · ties) / others, in percent."""
    scored = [o for o in others if o is not None]
    if value is None or not scored:
        return None
    below = sum(1 for o in scored if o < value)
    ties = sum(1 for o in scored if o == value)
    return 100.0 * (below + 0.5 * ties) / len(scored)


def pairwise_agreement(labels: pd.DataFrame, grader: pd.Series | None = None, *, min_n: int = 50) -> dict:
    """The figures of one group of items: {"annotators": {rater: {"mf1", "n"}},
    "weighted_mean_mf1", "n_included", "grader": {"mf1", "n", "percentile"} | None}."""
    annotators = {}
    for rater, (truth, prediction) in sorted(annotator_pairs(labels).items()):
        annotators[rater] = {"mf1": binary_agreement(truth, prediction).mf1, "n": int(truth.size)}
    included = {r: f for r, f in annotators.items() if f["n"] > min_n and f["mf1"] is not None}
    weight = sum(f["n"] for f in included.values())
    weighted = sum(f["mf1"] * f["n"] for f in included.values()) / weight if weight else None
    out = {"annotators": annotators, "weighted_mean_mf1": weighted, "n_included": weight, "grader": None}
    if grader is not None:
        truth, prediction = grader_pairs(labels, grader)
        mf1 = binary_agreement(truth, prediction).mf1 if truth.size else None
        out["grader"] = {"mf1": mf1, "n": int(truth.size),
                         "percentile": percentile(mf1, [f["mf1"] for f in included.values()])}
    return out
