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
from rest_framework import serializers

from grading import metrics

from .agreement import aligned_decisions, binary_pairs
from .coverage import coverage_k, response_hits_frame
from .inputs import ReportInputs, as_number, interval_pair
from .registry import Params, Report, SourceField, register


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
        raise ValueError(f"{a.spec} and {b.spec} share no binary decision")
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


def verbosity_compute(*, inputs: ReportInputs, source, k: int | None = None, ci: bool = False) -> dict:
    k, k_source = coverage_k(inputs=inputs, source=source, k=k)
    rows = response_hits_frame(inputs=inputs, source=source)
    if len(rows) < 3:
        raise ValueError(f"{source.spec} decided the binary criteria of {len(rows)} model-authored responses: too few")
    rows["length"] = inputs.responses.loc[rows["response_id"], "length_chars"].to_numpy(dtype=float)
    rows["case"] = inputs.responses.loc[rows["response_id"], "case_id"].to_numpy()
    hits, n = rows["hits"].to_numpy(dtype=float), rows["n_criteria"].to_numpy(dtype=float)
    accuracy = 100.0 * hits / n
    cacs = 100.0 * np.maximum(0.0, hits - k + 1) / np.maximum(1.0, n - k + 1)
    covariates = rows[["model", "case"]]
    length = rows["length"].to_numpy()
    return {"source": source.spec, "k": k, "k_source": k_source, "n": int(len(rows)),
            "cacs": _correlations(length, cacs, covariates, ci),
            "rubric_accuracy": _correlations(length, accuracy, covariates, ci)}


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
    params=CrossGraderParams, compute=cross_grader_compute, output=cross_grader_output,
))


class VerbosityParams(Params):
    source = SourceField()
    k = serializers.IntegerField(required=False, allow_null=True, default=None,
                                 help_text="threshold (default: the project's coverage k)")


VERBOSITY = register(Report(
    key="verbosity", title="Verbosity",
    help="Length against CACS@k contribution and rubric accuracy: Pearson, Spearman, partial (model, case).",
    params=VerbosityParams, compute=verbosity_compute, inputs_from="source",
    output=lambda result, params: {key: result[key] for key in (
        "source", "k", "n", "cacs", "rubric_accuracy", "n_excluded_cases", "n_draft_labels")},
))
