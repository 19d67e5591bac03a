"""ClinConsensus' diagnostics on the command line (issue 14, point 3): cross-grader robustness of
any two sources (judges included) and the verbosity check with the partial correlation.

Cross-grader robustness (SPEC §3): per-model criterion-positive rates of the two sources over
their paired binary decisions (``agreement.binary_pairs``), compared by Spearman ρ, Kendall τ,
the mean absolute difference in percentage points and top-3 / top-5 overlap
(``metrics.cross_grader_robustness``).

Verbosity: per model-authored response, its length in characters against its rubric accuracy
s_i / N_i and its CACS@k contribution max(0, s_i − k + 1) / (N_i − k + 1) (both percent; the
coverage rule, ``coverage.response_hits_frame``): pooled Pearson and Spearman, and the partial
correlation controlling for model and case (``metrics.partial_correlation``: the residuals of
length and score on model and case indicators).
"""
import numpy as np
import pandas as pd
from rest_framework import serializers

from grading import metrics
from grading.sources import project_sources, source_parse

from . import charts
from .agreement import aligned_decisions, binary_pairs
from .coverage import coverage_k, response_hits_frame
from .glossary import worded_table
from .inputs import ReportInputs, as_number, interval_pair, interval_text
from .registry import Flag, Page, Params, Report, ReportUnavailable, SourceField, register


def _cross_grader_intervals(pairs, out: dict) -> None:
    """Bootstrap 95% intervals resampling cases: each model's two rates (means of its 0/1
    decisions), the mean absolute difference and the two rank correlations."""
    for name, figures in metrics.cross_grader_intervals(pairs).items():
        out[f"{name}_ci"] = interval_pair(figures)
    for model, rows in pairs.groupby(pairs["model"].astype(str), sort=True):
        for side in ("a", "b"):
            out["rates"][model][f"{side}_pct_ci"] = interval_pair(
                metrics.case_bootstrap_mean_ci(100.0 * rows[side].to_numpy(dtype=float), rows["case"].to_numpy()))


def cross_grader_compute(*, inputs: ReportInputs, a, b, ci: bool = False) -> dict:
    """With ``ci``, bootstrap 95% intervals resampling cases (``_cross_grader_intervals``)."""
    merged, _, _ = aligned_decisions(inputs=inputs, a=a, b=b)
    pairs, _ = binary_pairs(merged, strategy=metrics.parse_strategy("zero"))
    if pairs.empty:
        raise ReportUnavailable(f"{a.spec} and {b.spec} share no binary decision")
    result = metrics.cross_grader_robustness(pairs, model="model", a="a", b="b")
    rates = result.rates
    out = {
        "a": a.spec, "b": b.spec, "n_models": result.n_models, "spearman_rho": as_number(result.spearman_rho),
        "kendall_tau": as_number(result.kendall_tau), "mean_abs_diff_pp": as_number(result.mean_abs_diff_pp),
        "top3_overlap": as_number(result.top3_overlap), "top5_overlap": as_number(result.top5_overlap),
        "rates": {str(m): {"a_pct": as_number(row["rate_a_pct"]), "b_pct": as_number(row["rate_b_pct"]),
                           "n_a": int(row["n_a"]), "n_b": int(row["n_b"])} for m, row in rates.iterrows()},
    }
    if ci:
        _cross_grader_intervals(pairs, out)
    return out


def _correlations(length: np.ndarray, score: np.ndarray, covariates, ci: bool) -> dict:
    """With ``ci``, bootstrap 95% intervals of the pooled Pearson and Spearman resampling cases
    (the partial correlation, a regression on model and case indicators per resample, has none)."""
    check = metrics.length_score_correlation(length, score)
    out = {"pearson": as_number(check.pearson_r), "spearman": as_number(check.spearman_rho),
           "partial": as_number(metrics.partial_correlation(length, score, covariates))}
    if ci:
        def pooled(rows):
            again = metrics.length_score_correlation(length[rows], score[rows])
            return again.pearson_r, again.spearman_rho

        intervals = metrics.case_bootstrap_ci(covariates["case"].to_numpy(), pooled) or [None, None]
        out["pearson_ci"], out["spearman_ci"] = (interval_pair(i) for i in intervals)
    return out


def verbosity_rows(*, inputs: ReportInputs, source, k: int) -> pd.DataFrame:
    """One row per model-authored response the source decided: response_id, model, case, length
    (characters) and its coverage terms in percent (``metrics.coverage_terms``): rubric_accuracy, cacs."""
    rows = response_hits_frame(inputs=inputs, source=source)
    rows["length"] = inputs.responses.loc[rows["response_id"], "length_chars"].to_numpy(dtype=float)
    rows["case"] = inputs.responses.loc[rows["response_id"], "case_id"].to_numpy()
    if len(rows):
        terms = metrics.coverage_terms(rows, k=k)
        rows["rubric_accuracy"] = 100.0 * terms["accuracy"].to_numpy()
        rows["cacs"] = 100.0 * terms["cacs"].to_numpy()
    else:
        rows["rubric_accuracy"] = rows["cacs"] = pd.Series(dtype=float)
    return rows


def verbosity_compute(*, inputs: ReportInputs, source, k: int | None = None, ci: bool = False) -> dict:
    k, k_source = coverage_k(inputs=inputs, source=source, k=k)
    rows = verbosity_rows(inputs=inputs, source=source, k=k)
    if len(rows) < 3:
        raise ReportUnavailable(f"{source.spec} decided the binary criteria of {len(rows)} model-authored responses: too few")
    covariates = rows[["model", "case"]]
    length = rows["length"].to_numpy()
    return {"source": source.spec, "k": k, "k_source": k_source, "n": int(len(rows)),
            "cacs": _correlations(length, rows["cacs"].to_numpy(), covariates, ci),
            "rubric_accuracy": _correlations(length, rows["rubric_accuracy"].to_numpy(), covariates, ci)}


# --- the pages ------------------------------------------------------------------------------

def _default_pair(project) -> tuple[str | None, str | None]:
    """The sources a page compares when none is chosen: the first cohort (else the first judge, else
    gold) against the first judge (else the next cohort, else gold)."""
    sources = project_sources(project=project)
    cohorts, judges = [s.spec for s in sources["cohorts"]], [s.spec for s in sources["judges"]]
    first = (cohorts + judges + ["gold"])[0]
    other = next((s for s in judges + cohorts[1:] + ["gold"] if s != first), None)
    return (first, other) if cohorts or judges else (None, None)


def cross_grader_page(*, project, a: str | None = None, b: str | None = None, ci: bool = False) -> dict:
    """The page: each model's criterion-positive rate under A and B, and how alike the two rank the models."""
    first, other = _default_pair(project)
    a, b = a or first, b or other
    if a is None or b is None:
        return {"empty": "no_source", "tables": {}}
    try:
        result = CROSS_GRADER.run(project=project, a=source_parse(text=a, project=project),
                                  b=source_parse(text=b, project=project), ci=ci)
    except ValueError as exc:
        return {"empty": "no_pairs", "reason": str(exc), "a": a, "b": b, "tables": {}}
    rates = result["rates"]
    rate_ci = ["a_pct 95% CI", "b_pct 95% CI"] if ci else []
    figures = ["n_models", "spearman_rho", "kendall_tau", "mean_abs_diff_pp", "top3_overlap", "top5_overlap"]
    with_ci = {"spearman_rho", "kendall_tau", "mean_abs_diff_pp"}
    summary_columns = [c for name in figures for c in ([name, f"{name} 95% CI"] if ci and name in with_ci else [name])]
    summary = [interval_text(result.get(c[: -len(" 95% CI")] + "_ci")) if c.endswith("95% CI") else result[c]
               for c in summary_columns]
    return {
        "a": a, "b": b, "ci": ci, "rates": rates, "figures": {name: result[name] for name in figures},
        "tables": {
            "summary": worded_table(summary_columns, [summary]),
            "rates": worded_table(
                ["model", "a_pct", "b_pct", "n_pairs_model", *rate_ci],
                [[model, r["a_pct"], r["b_pct"], r["n_a"], *([interval_text(r.get("a_pct_ci")), interval_text(r.get("b_pct_ci"))]
                                                            if ci else [])] for model, r in rates.items()],
                words={"a_pct": f"Positive rate under {a} (%)", "b_pct": f"Positive rate under {b} (%)"}),
        },
    }


def cross_grader_charts(result: dict, project) -> dict:
    rates = result.get("rates") or {}
    if not rates:
        return {}
    models = list(rates)
    f = result["figures"]
    rho = "–" if f["spearman_rho"] is None else f"{f['spearman_rho']:.2f}"
    return {"rates": charts.bar_chart(
        title=f"Criterion-positive rate per model under {result['a']} and {result['b']} (Spearman's ρ {rho}, "
              f"n = {sum(r['n_a'] for r in rates.values()):,} paired decisions)",
        labels=models, series=[(result["a"], [rates[m]["a_pct"] for m in models]),
                               (result["b"], [rates[m]["b_pct"] for m in models])],
        n=[rates[m]["n_a"] for m in models], max_value=100.0, digits=1,
        value_title="criteria marked met (% of paired binary decisions)", label_title="model")}


class CrossGraderPageParams(Params):
    a = SourceField(spec=True, required=False, allow_null=True, default=None)
    b = SourceField(spec=True, required=False, allow_null=True, default=None)
    ci = Flag()


SCORES_SHOWN = {"rubric_accuracy": "rubric accuracy", "cacs": "CACS@k"}


def verbosity_page(*, project, source: str | None = None, k: int | None = None, ci: bool = False) -> dict:
    """The page: length against each response's rubric accuracy and CACS@k contribution, and the
    pooled and partial correlations."""
    source = source or _default_pair(project)[0]
    if source is None:
        return {"empty": "no_source", "tables": {}}
    parsed = source_parse(text=source, project=project)
    inputs = ReportInputs(project)
    try:
        result = VERBOSITY.run(project=project, source=parsed, k=k, ci=ci, inputs=inputs)
    except ValueError as exc:
        return {"empty": "too_few", "reason": str(exc), "source": source, "tables": {}}
    rows = verbosity_rows(inputs=inputs, source=parsed, k=result["k"])
    external = rows["response_id"].map(inputs.responses["external_id"])
    points = [{"response": str(r), "model": str(m), "length": float(x), "rubric_accuracy": float(acc), "cacs": float(c)}
              for r, m, x, acc, c in zip(external, rows["model"], rows["length"], rows["rubric_accuracy"], rows["cacs"])]
    ci_columns = ["pearson 95% CI", "spearman 95% CI"] if ci else []
    return {
        "source": source, "k": result["k"], "k_source": result["k_source"], "n": result["n"], "ci": ci, "points": points,
        "correlations": {name: result[name] for name in SCORES_SHOWN},
        "tables": {
            "correlations": worded_table(
                ["score", "pearson", "spearman", "partial", "n", *ci_columns],
                [[words.replace("@k", f"@{result['k']}"), result[name]["pearson"], result[name]["spearman"],
                  result[name]["partial"], result["n"],
                  *([interval_text(result[name].get("pearson_ci")), interval_text(result[name].get("spearman_ci"))] if ci else [])]
                 for name, words in SCORES_SHOWN.items()]),
            "responses": worded_table(
                ["response", "model", "length_chars", "rubric_accuracy", "cacs"],
                [[p["response"], p["model"], p["length"], p["rubric_accuracy"], p["cacs"]] for p in points],
                words={"response": "Response", "cacs": f"CACS@{result['k']} (%)"}),
        },
    }


def verbosity_charts(result: dict, project) -> dict:
    points = result.get("points") or []
    if not points:
        return {}
    k, n = result["k"], len(points)
    out = {}
    for name, words in SCORES_SHOWN.items():
        words = words.replace("@k", f"@{k}")
        out[name] = charts.scatter(
            title=f"Length against {words} per response, {result['source']} (n = {n:,} responses)",
            points=[{"x": p["length"], "y": p[name], "group": p["model"], "label": p["response"]} for p in points],
            x_title="length (characters)", y_title=f"{words} (%)", y_domain=(0, 100))
    correlations = result["correlations"]
    labels = [w.replace("@k", f"@{k}") for w in SCORES_SHOWN.values()]
    out["correlations"] = charts.bar_chart(
        title=f"Correlation of length with each score, {result['source']} (n = {n:,} responses)",
        labels=labels, min_value=-1.0, max_value=1.0, n=[n] * len(labels),
        series=[(words, [correlations[name][key] for name in SCORES_SHOWN])
                for key, words in (("pearson", "Pearson's r"), ("spearman", "Spearman's ρ"),
                                   ("partial", "partial r (model and case held fixed)"))],
        value_title="correlation with length", label_title="score")
    return out


class VerbosityPageParams(Params):
    source = SourceField(spec=True, required=False, allow_null=True, default=None)
    k = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None,
                                 error_messages={"min_value": "k must be a non-negative integer",
                                                 "invalid": "k must be a non-negative integer"})
    ci = Flag()


# --- the declarations -----------------------------------------------------------------------

class CrossGraderParams(Params):
    a = SourceField()
    b = SourceField()


def cross_grader_output(result: dict, params: dict) -> dict:
    keys = ["a", "b", "n_models", "spearman_rho", "kendall_tau", "mean_abs_diff_pp", "top3_overlap", "top5_overlap",
            "rates", "n_excluded_cases", "n_draft_labels"]
    keys += ["mean_abs_diff_pp_ci", "spearman_rho_ci", "kendall_tau_ci"] if params.get("ci") else []
    return {key: result[key] for key in keys}


CROSS_GRADER = register(Report(
    key="cross_grader", title="Cross-grader robustness",
    help="Do two sources rank the models alike? Per-model positive rates compared.",
    params=CrossGraderParams, compute=cross_grader_compute, output=cross_grader_output, cannot_assess="zero",
    page=Page(key="cross-grader", params=CrossGraderPageParams, build=cross_grader_page,
              template="grading/reports/cross_grader.html", charts=cross_grader_charts, title="Cross-grader", position=92),
))


class VerbosityParams(Params):
    source = SourceField()
    k = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0,
                                 help_text="threshold (default: the project's coverage k)")


VERBOSITY = register(Report(
    key="verbosity", title="Verbosity",
    help="Length against CACS@k contribution and rubric accuracy: Pearson, Spearman, partial (model, case).",
    params=VerbosityParams, compute=verbosity_compute, inputs_from="source", cannot_assess="zero",
    output=lambda result, params: {key: result[key] for key in (
        "source", "k", "n", "cacs", "rubric_accuracy", "n_excluded_cases", "n_draft_labels")},
    page=Page(params=VerbosityPageParams, build=verbosity_page, template="grading/reports/verbosity.html",
              charts=verbosity_charts, position=93),
))
