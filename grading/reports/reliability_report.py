"""The reliability report of any two sources (issue 14, point 1; Autorubric's reliability
report): per group (criterion, tag or model) and pooled.

Binary criteria, over the pairs the agreement report counts (``agreement.binary_pairs`` under
the cannot-assess strategy ``zero``, unresolved decisions as disagreements): n, accuracy,
precision / recall / F1 of each class, MF1 and Cohen's kappa (``metrics.binary_agreement``, the
one MF1 rule; precision and recall by scikit-learn). Ordinal criteria, over the pairs where both
sources gave a value (not-applicable options left out): QWK and linear weighted kappa on the
option ranks (scikit-learn), Spearman and Pearson correlation, the mean difference B − A, Earth
Mover's distance and the two-sample Kolmogorov–Smirnov test of the value distributions (scipy).
Values are in the rubric's own points when the group's ordinal criteria share one scale, else
rescaled to [0, 1] (``scale`` says which).
"""
import numpy as np
import pandas as pd

from grading import metrics

from .agreement import aligned_decisions, binary_pairs
from .inputs import ReportInputs, as_number

BY = ("criterion", "tag", "model")
MIN_FOR_STATS = 2


def _binary(a: np.ndarray, b: np.ndarray) -> dict:
    from sklearn.metrics import precision_recall_fscore_support

    out = {"n": int(len(a))}
    if not len(a):
        return {**out, **dict.fromkeys(("accuracy", "precision_met", "recall_met", "f1_met", "precision_not_met",
                                        "recall_not_met", "f1_not_met", "mf1", "cohen_kappa"))}
    agreement = metrics.binary_agreement(a, b)
    precision, recall, f1, _ = precision_recall_fscore_support(a, b, labels=[1, 0], zero_division=0)
    return {**out, "accuracy": as_number(float(np.mean(a == b))),
            "precision_met": as_number(precision[0]), "recall_met": as_number(recall[0]), "f1_met": as_number(f1[0]),
            "precision_not_met": as_number(precision[1]), "recall_not_met": as_number(recall[1]),
            "f1_not_met": as_number(f1[1]), "mf1": as_number(agreement.mf1), "cohen_kappa": as_number(agreement.cohen_kappa)}


def _ordinal(rows: pd.DataFrame, criteria: pd.DataFrame) -> dict:
    from scipy import stats
    from sklearn.metrics import cohen_kappa_score

    out = {"n_ordinal": int(len(rows))}
    keys = ("qwk", "linear_wk", "spearman", "pearson", "mean_difference", "emd", "ks_statistic", "ks_pvalue")
    if len(rows) < MIN_FOR_STATS:
        return {**out, **dict.fromkeys(keys), "scale": None}
    grids = rows["criterion_id"].map(criteria["option_values"])
    rank_a = np.array([int(np.argmin(np.abs(np.asarray(g) - v))) for g, v in zip(grids, rows["value_a"])])
    rank_b = np.array([int(np.argmin(np.abs(np.asarray(g) - v))) for g, v in zip(grids, rows["value_b"])])
    labels = list(range(max(len(g) for g in grids)))
    scales = {(min(g), max(g)) for g in grids}
    if len(scales) == 1:
        scale, va, vb = "native", rows["value_a"].to_numpy(float), rows["value_b"].to_numpy(float)
    else:
        lo, hi = rows["criterion_id"].map(criteria["min_value"]), rows["criterion_id"].map(criteria["max_value"])
        scale = "unit"
        va = metrics.unit_scale(rows["value_a"].to_numpy(float), lo.to_numpy(float), hi.to_numpy(float))
        vb = metrics.unit_scale(rows["value_b"].to_numpy(float), lo.to_numpy(float), hi.to_numpy(float))

    def kappa(weights):
        if len(set(rank_a) | set(rank_b)) < 2:
            return None
        return as_number(cohen_kappa_score(rank_a, rank_b, weights=weights, labels=labels))

    def correlation(function):
        if np.std(va) == 0 or np.std(vb) == 0:
            return None
        return as_number(function(va, vb)[0])

    ks = stats.ks_2samp(va, vb)
    return {**out, "qwk": kappa("quadratic"), "linear_wk": kappa("linear"), "spearman": correlation(stats.spearmanr),
            "pearson": correlation(stats.pearsonr), "mean_difference": as_number(float(np.mean(vb - va))),
            "emd": as_number(stats.wasserstein_distance(va, vb)), "ks_statistic": as_number(ks.statistic),
            "ks_pvalue": as_number(ks.pvalue), "scale": scale}


def _ordinal_rows(merged: pd.DataFrame, criteria: pd.DataFrame) -> pd.DataFrame:
    rows = merged[(merged["kind"] == "ordinal") & merged["value_a"].notna() & merged["value_b"].notna()]
    if len(rows):
        na = criteria["na_labels"]
        keep = [(oa is None or oa not in na[c]) and (ob is None or ob not in na[c])
                for oa, ob, c in zip(rows["option_a"], rows["option_b"], rows["criterion_id"])]
        rows = rows[keep]
    return rows


def _group_keys(frame: pd.DataFrame, by: str, criteria: pd.DataFrame) -> pd.Series:
    """The group key(s) of each row: a list per row (a criterion has several tags)."""
    if by == "criterion":
        return frame["criterion_id"].map(lambda c: [str(criteria.at[c, "criterion_external_id"])])
    if by == "tag":
        return frame["criterion_id"].map(lambda c: list(criteria.at[c, "tags"]) or ["(untagged)"])
    return frame["model"].map(lambda m: [str(m)])


def _intervals(binary: pd.DataFrame, ordered: pd.DataFrame, group: dict, cases: pd.Series) -> dict:
    """Bootstrap 95% intervals resampling cases of the group's two means: accuracy (the mean of
    agreement) and the mean difference B − A (in the group's scale)."""
    out = {}
    agree = (binary["a"].to_numpy() == binary["b"].to_numpy()).astype(float)
    interval = metrics.case_bootstrap_mean_ci(agree, binary["response_id"].map(cases).to_numpy()) if len(binary) else None
    out["accuracy_ci"] = [as_number(interval.low), as_number(interval.high)] if interval else None
    interval = None
    if len(ordered) >= MIN_FOR_STATS and group.get("scale"):
        if group["scale"] == "native":
            diff = ordered["value_b"].to_numpy(float) - ordered["value_a"].to_numpy(float)
        else:
            lo, hi = ordered["_lo"].to_numpy(float), ordered["_hi"].to_numpy(float)
            diff = metrics.unit_scale(ordered["value_b"].to_numpy(float), lo, hi) - metrics.unit_scale(
                ordered["value_a"].to_numpy(float), lo, hi)
        interval = metrics.case_bootstrap_mean_ci(diff, ordered["response_id"].map(cases).to_numpy())
    out["mean_difference_ci"] = [as_number(interval.low), as_number(interval.high)] if interval else None
    return out


def reliability_report_compute(*, inputs: ReportInputs, a, b, by: str | None = None, ci: bool = False) -> dict:
    if by is not None and by not in BY:
        raise ValueError(f"unknown grouping {by!r}; use criterion, tag or model")
    own = inputs.for_source(a)
    criteria = own.criteria
    merged, _, _ = aligned_decisions(inputs=inputs, a=a, b=b)
    pairs, _ = binary_pairs(merged, strategy=metrics.parse_strategy("zero"))
    ordinal = _ordinal_rows(merged, criteria)
    ordinal = ordinal.assign(_lo=ordinal["criterion_id"].map(criteria["min_value"]),
                             _hi=ordinal["criterion_id"].map(criteria["max_value"]))
    cases = own.responses["case_id"]

    def group(binary: pd.DataFrame, ordered: pd.DataFrame) -> dict:
        figures = {**_binary(binary["a"].to_numpy(), binary["b"].to_numpy()), **_ordinal(ordered, criteria)}
        return {**figures, **_intervals(binary, ordered, figures, cases)} if ci else figures

    out = {"a": a.spec, "b": b.spec, "by": by, "pooled": group(pairs, ordinal), "groups": {}}
    if by is not None:
        keyed_pairs = pairs.assign(_keys=_group_keys(pairs, by, criteria)).explode("_keys")
        keyed_ordinal = ordinal.assign(_keys=_group_keys(ordinal, by, criteria)).explode("_keys")
        for key in sorted(set(keyed_pairs["_keys"].dropna()) | set(keyed_ordinal["_keys"].dropna())):
            out["groups"][key] = group(keyed_pairs[keyed_pairs["_keys"] == key], keyed_ordinal[keyed_ordinal["_keys"] == key])
    return out


COLUMNS = ("n", "accuracy", "precision_met", "recall_met", "f1_met", "precision_not_met", "recall_not_met", "f1_not_met",
           "mf1", "cohen_kappa", "n_ordinal", "qwk", "linear_wk", "spearman", "pearson", "mean_difference", "emd",
           "ks_statistic", "ks_pvalue", "scale")


def reliability_page(*, project, a: str | None = None, b: str | None = None, by: str = "criterion") -> dict:
    """The reliability page: two sources (default: the first two cohorts, else a cohort and the
    first judge), pooled and per group, as one table."""
    from grading.sources import project_sources

    from . import services

    sources = project_sources(project=project)
    choices = [s.spec for s in sources["cohorts"] + sources["judges"]] + ["gold"]
    ordered = [s.spec for s in sources["cohorts"] + sources["judges"]]
    a = a or (ordered[0] if ordered else None)
    b = b or next((s for s in ordered if s != a), None)
    if a is None or b is None:
        return {"sources": choices, "a": a, "b": b, "by": by, "groupings": list(BY), "tables": {}}
    result = services.reliability_ab_report(project=project, a=a, b=b, by=by)
    rows = [["(pooled)", *[result["pooled"].get(c) for c in COLUMNS]]]
    rows += [[key, *[group.get(c) for c in COLUMNS]] for key, group in result["groups"].items()]
    return {"sources": choices, "a": a, "b": b, "by": by, "groupings": list(BY), "pooled": result["pooled"],
            "tables": {"reliability": {"columns": [by, *COLUMNS], "rows": [
                [v if isinstance(v, str) or v is None else as_number(v) for v in row] for row in rows]}}}
