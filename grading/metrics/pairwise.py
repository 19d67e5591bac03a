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

import numpy as np
import pandas as pd

from .agreement import _mf1_from_counts, binary_agreement
from .bootstrap import case_bootstrap_ci


def pair_frame(labels: pd.DataFrame) -> pd.DataFrame:
    """``labels``: item, rater, value (0/1), one label per (item, rater). One row per ordered pair
    of two raters' labels of the same item: rater, truth (the other's label), prediction (the
    rater's own) and the row of ``labels`` the prediction came from (``label``).

    Rows come item by item (in order of first appearance), and within an item for each of its
    labels in turn (as the prediction) every other label (as the truth), in the labels' order. Built
    with numpy, one index template per item size: at a million items a loop over the items took
    minutes."""
    codes, _ = pd.factorize(labels["item"], use_na_sentinel=False)
    sizes = np.bincount(codes) if len(codes) else np.zeros(0, dtype=np.int64)
    order = np.argsort(codes, kind="stable")  # the rows of each item together, in their order
    starts = np.cumsum(sizes) - sizes
    items, mine, other = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for size in np.unique(sizes[sizes >= 2]):  # an item with one rater gives no pair
        groups = np.flatnonzero(sizes == size)
        own, others = np.array([(i, j) for i in range(size) for j in range(size) if i != j]).T
        items.append(np.repeat(groups, own.size))
        mine.append(order[(starts[groups][:, None] + own[None, :]).ravel()])
        other.append(order[(starts[groups][:, None] + others[None, :]).ravel()])
    by_item = np.argsort(np.concatenate(items), kind="stable")  # item by item, each in its template's order
    mine, other = np.concatenate(mine)[by_item], np.concatenate(other)[by_item]
    raters, values = labels["rater"].to_numpy(dtype=object), labels["value"].to_numpy()
    return pd.DataFrame({"rater": pd.Series(raters[mine], dtype=object), "truth": np.asarray(values[other], dtype=np.int8),
                         "prediction": np.asarray(values[mine], dtype=np.int8), "label": mine.astype(np.int64)})


def annotator_pairs(labels: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per rater the (truth, prediction) arrays of their pairs (``pair_frame``)."""
    pairs = pair_frame(labels)
    return {r: (rows["truth"].to_numpy(), rows["prediction"].to_numpy()) for r, rows in pairs.groupby("rater", sort=False)}


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


def annotator_included(figures: dict, *, min_n: int) -> bool:
    """Whether an annotator ({"mf1", "n"}) counts in the weighted mean: more than ``min_n`` pairs
    and an MF1 that is defined."""
    return figures["n"] > min_n and figures["mf1"] is not None


def pairwise_agreement(labels: pd.DataFrame, grader: pd.Series | None = None, *, min_n: int = 50) -> dict:
    """The figures of one group of items: {"annotators": {rater: {"mf1", "n"}},
    "weighted_mean_mf1", "n_included", "grader": {"mf1", "n", "percentile"} | None}."""
    annotators = {}
    for rater, (truth, prediction) in sorted(annotator_pairs(labels).items()):
        annotators[rater] = {"mf1": binary_agreement(truth, prediction).mf1, "n": int(truth.size)}
    included = {r: f for r, f in annotators.items() if annotator_included(f, min_n=min_n)}
    weight = sum(f["n"] for f in included.values())
    weighted = sum(f["mf1"] * f["n"] for f in included.values()) / weight if weight else None
    out = {"annotators": annotators, "weighted_mean_mf1": weighted, "n_included": weight, "grader": None}
    if grader is not None:
        truth, prediction = grader_pairs(labels, grader)
        mf1 = binary_agreement(truth, prediction).mf1 if truth.size else None
        out["grader"] = {"mf1": mf1, "n": int(truth.size),
                         "percentile": percentile(mf1, [f["mf1"] for f in included.values()])}
    return out


def _mf1_by_group(group: np.ndarray, truth: np.ndarray, prediction: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """MF1 and n per group from the confusion counts of its pairs (``case_level_mf1``'s rule from
    counts, NaN where undefined)."""
    cells = np.bincount(group * 4 + truth * 2 + prediction, minlength=4 * n_groups).reshape(n_groups, 4)
    tn, fp, fn, tp = cells.T
    return _mf1_from_counts(tp, fp, fn, tn)[2], cells.sum(axis=1)


def pairwise_intervals(labels: pd.DataFrame, grader: pd.Series | None = None, *, min_n: int = 50, seed: int = 0) -> dict:
    """Bootstrap 95% intervals (``case_bootstrap_ci``: whole cases resampled, seeded) of the
    n-weighted mean annotator MF1 and of the grader's MF1; ``labels`` carries a ``case`` column.
    The annotators in the mean are those of the data (n > min_n, MF1 defined); each resample
    recomputes their MF1 and n from the drawn cases' pairs. None where the figure itself is
    undefined. {"weighted_mean_mf1": BootstrapCI | None, "grader_mf1": ...}."""
    pairs = pair_frame(labels)
    raters, codes = np.unique(pairs["rater"].to_numpy(dtype=str), return_inverse=True)
    truth, prediction = pairs["truth"].to_numpy(dtype=np.int64), pairs["prediction"].to_numpy(dtype=np.int64)
    mf1, n = _mf1_by_group(codes, truth, prediction, raters.size)
    included = (n > min_n) & ~np.isnan(mf1)

    def weighted(rows):
        mf1, n = _mf1_by_group(codes[rows], truth[rows], prediction[rows], raters.size)
        keep = included & ~np.isnan(mf1) & (n > 0)
        return float(np.sum(mf1[keep] * n[keep]) / np.sum(n[keep])) if keep.any() else None

    cases = labels["case"].to_numpy()
    out = {"weighted_mean_mf1": case_bootstrap_ci(cases[pairs["label"].to_numpy()], weighted, seed=seed)
           if included.any() else None, "grader_mf1": None}
    if grader is not None:
        decided = labels[labels["item"].isin(grader.index)]
        g_truth = decided["value"].to_numpy(dtype=np.int64)
        g_prediction = grader.reindex(decided["item"]).to_numpy(dtype=np.int64)
        zero = np.zeros(g_truth.size, dtype=np.int64)

        def grader_mf1(rows):
            mf1, _ = _mf1_by_group(zero[rows], g_truth[rows], g_prediction[rows], 1)
            return mf1[0]

        defined = g_truth.size and not np.isnan(grader_mf1(np.arange(g_truth.size)))
        out["grader_mf1"] = case_bootstrap_ci(decided["case"].to_numpy(), grader_mf1, seed=seed) if defined else None
    return out
