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

A report by criterion has thousands of groups of a few pairs each, where a library call costs
far more in argument checking than in arithmetic: the groups are found in one grouping pass
(``_group_rows``), each row's ranks and rescaled values are derived once (``_OrdinalPairs``), and
the binary figures are computed once per distinct confusion table (``_BinaryFigures``) — always
by the same functions, so every figure is what a call on the group itself gives.
"""
from functools import cached_property

import numpy as np
import pandas as pd

from grading import metrics
from grading.sources import project_sources, source_parse

from . import charts
from .agreement import aligned_decisions, binary_pairs
from .inputs import ReportInputs, as_number, interval_pair, interval_text, report_table
from .registry import Flag, Page, Params, Report, SourceField, choice, register

BY = ("criterion", "tag", "model")
MIN_FOR_STATS = 2


def _binary(a: np.ndarray, b: np.ndarray) -> dict:
    from sklearn.metrics import precision_recall_fscore_support  # lazy: scikit-learn loads on first use, not at start-up

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


class _BinaryFigures:
    """``_binary`` of any group of the report's binary pairs, computed once per confusion table.

    Every binary figure (accuracy, precision / recall / F1 of each class, MF1, kappa) is a
    function of the four counts tp, fp, fn, tn alone: scikit-learn reduces both arrays to their
    confusion matrix before any arithmetic, and the accuracy is an exact count over n. A report
    by criterion has thousands of groups of about ten pairs each, and so only a few hundred
    distinct tables; each scikit-learn call costs a millisecond of argument checking whatever
    the size, which made that loop the page's cost. The counts serve only as the memo key —
    the figures still come from ``_binary`` on the group's own pairs, the first time its table
    occurs. Pairs other than 0/1 (which ``_binary`` refuses) are never memoized."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a, self.b = a, b
        binary = bool(np.isin(a, (0, 1)).all() and np.isin(b, (0, 1)).all())
        self.cells = (2 * a.astype(np.intp) + b.astype(np.intp)) if binary else None
        self.memo: dict[tuple, dict] = {}

    def __call__(self, rows: np.ndarray) -> dict:
        a, b = self.a[rows], self.b[rows]
        if self.cells is None:
            return _binary(a, b)
        key = tuple(np.bincount(self.cells[rows], minlength=4).tolist())
        if key not in self.memo:
            self.memo[key] = _binary(a, b)
        return dict(self.memo[key])


class _OrdinalPairs:
    """The per-row inputs of the ordinal figures, derived once for the whole report so that a
    group only takes its rows: the values of A and B, each value's option rank, its criterion's
    number of options and scale (lowest and highest option value), and the values rescaled to
    [0, 1]. All are row-wise, so a group's slice equals what deriving them on the group gives.
    Ranks and scales are read only when the pooled rows have figures (else no group has), and
    the rescaled values only when a group mixes scales (then the pooled rows mix them too), so
    a criterion's options are never read where they were not before."""

    def __init__(self, rows: pd.DataFrame, criteria: pd.DataFrame):
        self.value_a, self.value_b = rows["value_a"].to_numpy(float), rows["value_b"].to_numpy(float)
        self.lo, self.hi = rows["_lo"].to_numpy(float), rows["_hi"].to_numpy(float)
        if len(rows) >= MIN_FOR_STATS:
            grids = rows["criterion_id"].map(criteria["option_values"])
            self.rank_a = np.array([int(np.argmin(np.abs(np.asarray(g) - v))) for g, v in zip(grids, rows["value_a"])])
            self.rank_b = np.array([int(np.argmin(np.abs(np.asarray(g) - v))) for g, v in zip(grids, rows["value_b"])])
            self.n_options = np.array([len(g) for g in grids], dtype=np.int64)
            self.scales = [(min(g), max(g)) for g in grids]

    @cached_property
    def unit(self) -> tuple[np.ndarray, np.ndarray]:
        return (metrics.unit_scale(self.value_a, self.lo, self.hi), metrics.unit_scale(self.value_b, self.lo, self.hi))

    def values(self, rows: np.ndarray, scale: str) -> tuple[np.ndarray, np.ndarray]:
        """A's and B's values of ``rows`` in ``scale`` (native or unit)."""
        va, vb = (self.value_a, self.value_b) if scale == "native" else self.unit
        return va[rows], vb[rows]


def _ordinal(pairs: _OrdinalPairs, rows: np.ndarray) -> dict:
    from scipy import stats  # lazy: SciPy loads on first use, not at start-up
    from sklearn.metrics import cohen_kappa_score  # lazy: scikit-learn loads on first use, not at start-up

    out = {"n_ordinal": int(len(rows))}
    keys = ("qwk", "linear_wk", "spearman", "pearson", "mean_difference", "emd", "ks_statistic", "ks_pvalue")
    if len(rows) < MIN_FOR_STATS:
        return {**out, **dict.fromkeys(keys), "scale": None}
    rank_a, rank_b = pairs.rank_a[rows], pairs.rank_b[rows]
    labels = list(range(int(pairs.n_options[rows].max())))
    scale = "native" if len({pairs.scales[i] for i in rows}) == 1 else "unit"
    va, vb = pairs.values(rows, scale)

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
    """The group key(s) of each row: a list per row (a criterion has several tags). Derived once
    per criterion, then looked up per row (an unknown criterion is still a KeyError)."""
    if by == "criterion":
        names = {c: [str(x)] for c, x in criteria["criterion_external_id"].items()}
        return frame["criterion_id"].map(names.__getitem__)
    if by == "tag":
        tags = {c: list(t) or ["(untagged)"] for c, t in criteria["tags"].items()}
        return frame["criterion_id"].map(tags.__getitem__)
    return frame["model"].map(lambda m: [str(m)])


def _group_rows(keys: pd.Series) -> dict[str, np.ndarray]:
    """The row positions of each group key, in the frame's order (a row with several keys is in
    each of their groups): one grouping pass instead of filtering the frame once per group."""
    exploded = pd.Series(keys.to_numpy(), dtype=object).explode().dropna()
    positions = exploded.index.to_numpy()
    return {key: positions[at] for key, at in exploded.groupby(exploded.to_numpy(), sort=False).indices.items()}


def _interval(values: np.ndarray, cases: np.ndarray) -> list | None:
    interval = metrics.case_bootstrap_mean_ci(values, cases) if len(values) else None
    return interval_pair(interval)


def reliability_report_compute(*, inputs: ReportInputs, a, b, by: str | None = None, ci: bool = False) -> dict:
    """With ``ci``, bootstrap 95% intervals resampling cases of the group's two means: accuracy
    (the mean of agreement) and the mean difference B − A (in the group's scale)."""
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
    binary = _BinaryFigures(pairs["a"].to_numpy(), pairs["b"].to_numpy())
    ordered = _OrdinalPairs(ordinal, criteria)
    if ci:
        agree = (pairs["a"].to_numpy() == pairs["b"].to_numpy()).astype(float)
        binary_cases = pairs["response_id"].map(cases).to_numpy()
        ordinal_cases = ordinal["response_id"].map(cases).to_numpy()

    def group(binary_rows: np.ndarray, ordinal_rows: np.ndarray) -> dict:
        figures = {**binary(binary_rows), **_ordinal(ordered, ordinal_rows)}
        if not ci:
            return figures
        difference = None
        if len(ordinal_rows) >= MIN_FOR_STATS and figures.get("scale"):
            va, vb = ordered.values(ordinal_rows, figures["scale"])
            difference = _interval(vb - va, ordinal_cases[ordinal_rows])
        return {**figures, "accuracy_ci": _interval(agree[binary_rows], binary_cases[binary_rows]),
                "mean_difference_ci": difference}

    pooled = group(np.arange(len(pairs)), np.arange(len(ordinal)))
    out = {"a": a.spec, "b": b.spec, "by": by, "pooled": pooled, "groups": {}}
    if by is not None:
        binary_groups = _group_rows(_group_keys(pairs, by, criteria))
        ordinal_groups = _group_rows(_group_keys(ordinal, by, criteria))
        none = np.array([], dtype=np.intp)
        for key in sorted(set(binary_groups) | set(ordinal_groups)):
            out["groups"][key] = group(binary_groups.get(key, none), ordinal_groups.get(key, none))
    return out


COLUMNS = ("n", "accuracy", "precision_met", "recall_met", "f1_met", "precision_not_met", "recall_not_met", "f1_not_met",
           "mf1", "cohen_kappa", "n_ordinal", "qwk", "linear_wk", "spearman", "pearson", "mean_difference", "emd",
           "ks_statistic", "ks_pvalue", "scale")


# --- the page -------------------------------------------------------------------------------

# The figures that carry a bootstrap interval when asked (``reliability_report_compute``).
INTERVALS = ("accuracy", "mean_difference")


def reliability_page(*, project, a: str | None = None, b: str | None = None, by: str = "criterion",
                     ci: bool = False) -> dict:
    """The reliability page: two sources (default: the first two cohorts, else a cohort and the
    first judge), pooled and per group, as one table; with ``ci``, the 95% intervals of accuracy and
    of the mean difference B − A each in a column beside its figure."""
    sources = project_sources(project=project)
    ordered = [s.spec for s in sources["cohorts"] + sources["judges"]]
    choices = [*ordered, "gold"]
    a = a or (ordered[0] if ordered else None)
    b = b or next((s for s in ordered if s != a), None)
    page = {"sources": choices, "a": a, "b": b, "by": by, "groupings": list(BY), "ci": ci}
    if a is None or b is None:
        return {**page, "tables": {}}
    result = RELIABILITY_REPORT.run(project=project, a=source_parse(text=a, project=project),
                                    b=source_parse(text=b, project=project), by=by, ci=ci)
    columns = []  # (header, key of the group's figures, whether the figure is an interval)
    for name in COLUMNS:
        columns.append((name, name, False))
        if ci and name in INTERVALS:
            columns.append((f"{name} 95% CI", f"{name}_ci", True))

    def row(key: str, figures: dict) -> list:
        return [key, *[interval_text(figures.get(k)) if interval else figures.get(k) for _, k, interval in columns]]

    rows = [row("(pooled)", result["pooled"]), *[row(key, group) for key, group in result["groups"].items()]]
    return {**page, "pooled": result["pooled"],
            "tables": {"reliability": report_table([by, *[header for header, _, _ in columns]], rows)}}


def reliability_charts(result: dict, project) -> dict:
    """B against A, pooled and per group: MF1 and Cohen's kappa of the binary criteria, quadratic
    weighted kappa and Spearman's rho of the ordinal ones (each chart only when there are pairs)."""
    table = result["tables"].get("reliability")
    if not table:
        return {}
    at = {name: i for i, name in enumerate(table["columns"])}
    out = {}
    for name, count, figures, words in (
            ("binary", "n", (("MF1", "mf1"), ("Cohen's kappa", "cohen_kappa")), "binary criteria"),
            ("ordinal", "n_ordinal", (("QWK", "qwk"), ("Spearman's rho", "spearman")), "ordinal criteria")):
        rows = [r for r in table["rows"] if r[at[count]]]
        if not rows:
            continue
        series = [(label, [r[at[key]] for r in rows]) for label, key in figures]
        negative = any(v is not None and v < 0 for _, values in series for v in values)
        out[name] = charts.bar_chart(
            title=f"{result['b']} against {result['a']} per {result['by']}, {words} "
                  f"(n = {rows[0][at[count]]:,} pairs pooled)",
            labels=[str(r[0]) for r in rows], n=[r[at[count]] for r in rows], series=series,
            min_value=-1.0 if negative else 0.0, value_title=f"agreement ({', '.join(label for label, _ in figures)})",
            label_title=result["by"])
    return out


# --- the declaration ------------------------------------------------------------------------

class ReliabilityReportParams(Params):
    a = SourceField(help_text="reference source, e.g. cohort:NAME")
    b = SourceField(help_text="compared source, e.g. judge:NAME")
    by = choice(BY, what="grouping", required=False, allow_null=True, default=None)


class ReliabilityPageParams(Params):
    a = SourceField(spec=True, required=False, allow_null=True, default=None)
    b = SourceField(spec=True, required=False, allow_null=True, default=None)
    by = choice(BY, what="grouping", default="criterion")
    ci = Flag()


RELIABILITY_REPORT = register(Report(
    key="reliability_report", title="Reliability",
    help="Agreement of two sources per criterion, tag or model: binary and ordinal figures (scikit-learn, scipy).",
    params=ReliabilityReportParams, compute=reliability_report_compute, cannot_assess="zero",
    output=lambda result, params: {key: result[key] for key in (
        "a", "b", "by", "pooled", "groups", "n_excluded_cases", "n_draft_labels")},
    page=Page(key="reliability", params=ReliabilityPageParams, build=reliability_page,
              template="grading/reports/reliability.html", charts=reliability_charts, position=70),
))
