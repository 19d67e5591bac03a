"""Coverage of the rubric by one source (SPEC §3 "Coverage", "Threshold calibration",
"Threshold sensitivity"; the ``coverage`` and ``calibrate_k`` commands of SPEC §5).

s_i counts the binary criteria the source marks met for response i; N_i is the number
of binary criteria of the response's case (from the rubric, so a criterion the source
left undecided, unresolved or cannot-assess counts as not met). Coverage is reported
for model-authored responses; the human-authored (physician) answers calibrate k.
"""
import re

import numpy as np
import pandas as pd
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import Project
from annotation.vocabulary import MET
from grading import metrics, selectors
from grading.sources import project_sources, source_parse

from . import charts
from .glossary import worded_table
from .inputs import ReportInputs, as_number, interval_pair, interval_text, report_table
from .registry import Flag, Page, Params, Report, ReportUnavailable, SourceField, register

STRATA = ("difficulty", "register", "task_themes", "specialties")
STRATUM_WORDS = {"difficulty": "difficulty", "register": "register", "task_themes": "theme", "specialties": "specialty"}
GROUP_WORDS = {"task_themes": "capability family", "specialties": "macro-category"}
GROUP_PLURALS = {"task_themes": "capability families", "specialties": "macro-categories"}
ORDER = {"difficulty": ["low", "medium", "high"]}  # strata with an order of their own (else by name)


def strata_grouped(values: pd.Series, groups: dict[str, list[str]]) -> pd.Series:
    """Each response's strata (a list, or one value) as the names of their groups (the project's
    ``stratum_groups``): each group once, in the groups' order; a value in no group stays itself."""
    owner = {member: group for group, members in groups.items() for member in members}
    order = {group: i for i, group in enumerate(groups)}

    def regroup(value):
        items = value if isinstance(value, (list, tuple)) else ([] if value is None or value != value else [value])
        named = dict.fromkeys(owner.get(v, v) for v in items)
        return sorted(named, key=lambda g: (order.get(g, len(order)), str(g)))

    return values.map(regroup)


def response_hits_frame(*, inputs: ReportInputs, source, author_kind: str = "model") -> pd.DataFrame:
    """One row per response the source decided: model, hits, n_criteria and the strata."""
    responses = inputs.responses
    counted = selectors.judge_hits(judge=source.obj) if source.kind == "judge" and not source.foreign else None
    if counted is not None:
        hits = counted.set_index("response_id")["hits"]
        ids = pd.Index(counted["response_id"])
    else:
        frame = inputs.decisions(source)
        kinds = frame["criterion_id"].map(inputs.criteria["kind"])
        decided = frame.loc[kinds == "binary"]
        hits = (decided["verdict"] == MET).groupby(decided["response_id"]).sum()
        ids = pd.Index(frame["response_id"].unique())
    ids = ids[ids.isin(responses.index)]  # not the responses of cases excluded by quality control
    ids = ids[responses.loc[ids, "author_kind"].to_numpy() == author_kind]
    out = pd.DataFrame(index=ids)
    out.index.name = "response_id"
    out["model"] = responses.loc[ids, "model"].to_numpy()
    case_ids = responses.loc[ids, "case_id"].to_numpy()
    out["hits"] = hits.reindex(ids).fillna(0).astype(int).to_numpy()
    out["n_criteria"] = inputs.n_binary_criteria_by_case.reindex(case_ids).fillna(0).astype(int).to_numpy()
    for axis in STRATA:
        out[axis] = inputs.cases[axis].reindex(case_ids).to_numpy()
    return out[out["n_criteria"] > 0].reset_index()


def calibrate_k_compute(*, inputs: ReportInputs, source, ci: bool = False) -> dict:
    """k = round(mean s_i) over the human-authored responses as decided by ``source`` (with a
    bootstrap interval of the mean resampling cases, ``ci``)."""
    human = response_hits_frame(inputs=inputs, source=source, author_kind="human")
    if human.empty:
        raise ReportUnavailable(f"no human-authored responses decided by {source.spec} in project {inputs.project.slug!r}")
    result = metrics.calibrate_k(human["hits"].to_numpy())
    out = {"k": result.k, "mean_hits": result.mean_hits, "n_responses": result.n}
    if ci:
        cases = inputs.responses.loc[human["response_id"], "case_id"].to_numpy()
        interval = metrics.case_bootstrap_mean_ci(human["hits"].to_numpy(dtype=float), cases)
        out["mean_hits_ci"] = interval_pair(interval)
    return out


ACCURACY_BIN_POINTS = 5  # width of the bins of the case-level accuracy histograms, in percentage points


def case_accuracy(df: pd.DataFrame, *, k: int, cases) -> dict:
    """Per model, the distribution over cases of its case-level rubric accuracy (percent): on each case,
    the rubric accuracy of the model's responses to it (``metrics.coverage_by_stratum`` with the case
    as the stratum), as counts in bins of ``ACCURACY_BIN_POINTS`` points from 0 to 100 (the last bin
    holds 100) with the mean, the quartiles and the extremes. ``k_accuracy``: the rubric accuracy that
    k met criteria make, 100·k / N for the median N of the cases' binary criteria, with the range of
    100·k / N_i over the cases (each at most 100)."""
    cases = pd.Series(np.asarray(cases), index=df.index)
    per_case = metrics.coverage_by_stratum(df.assign(case=cases), k=k, stratum="case")
    values: dict[str, list[float]] = {}
    for (_case, model), cov in per_case.items():
        values.setdefault(str(model), []).append(cov.rubric_accuracy_pct)
    edges = np.linspace(0.0, 100.0, 100 // ACCURACY_BIN_POINTS + 1)
    by_model = {}
    for model, accuracies in sorted(values.items()):
        v = np.asarray(accuracies, dtype=float)
        q1, median, q3 = np.percentile(v, [25, 50, 75])
        by_model[model] = {"n_cases": int(v.size), "counts": np.histogram(v, bins=edges)[0].tolist(),
                           "mean": as_number(v.mean()), "min": as_number(v.min()), "q1": as_number(q1),
                           "median": as_number(median), "q3": as_number(q3), "max": as_number(v.max())}
    n_by_case = df["n_criteria"].groupby(cases).first().to_numpy(dtype=float)
    at = (lambda n: min(100.0, 100.0 * k / n)) if len(n_by_case) else None
    return {
        "edges": edges.tolist(), "by_model": by_model,
        "k_accuracy": None if at is None else {
            "median_n_criteria": as_number(np.median(n_by_case)), "pct": as_number(at(float(np.median(n_by_case)))),
            "min_n_criteria": int(n_by_case.min()), "max_n_criteria": int(n_by_case.max()),
            "low_pct": as_number(at(float(n_by_case.max()))), "high_pct": as_number(at(float(n_by_case.min())))},
    }


def _figures(cov) -> dict:
    return {
        "rubric_accuracy": as_number(cov.rubric_accuracy_pct),
        "pass_at_k": as_number(cov.pass_at_k_pct),
        "cacs": as_number(cov.cacs_at_k_pct),
        "n_responses": cov.n_responses,
    }


class NoCoverageK(ReportUnavailable):
    """No threshold k given, none stored on the project and no human-authored answers to calibrate one."""


class NothingDecided(ReportUnavailable):
    """The source decided no binary criterion of a model-authored response (nothing labelled or judged yet)."""


def coverage_k(*, inputs: ReportInputs, source, k: int | None) -> tuple[int, str]:
    """The k to use and where it came from: the argument, the project, or calibration."""
    if k is not None:
        if k < 0:
            raise ValueError(f"--k must be a non-negative integer, got {k}")
        return int(k), "argument"
    if inputs.project.coverage_k is not None:
        return int(inputs.project.coverage_k), "project"
    try:
        return calibrate_k_compute(inputs=inputs, source=source)["k"], "calibrated"
    except ValueError:
        raise NoCoverageK(
            f"project {inputs.project.slug!r} has no coverage k and no human-authored responses to calibrate it; pass --k"
        ) from None


SENSITIVITY_KS = (7, 8, 12, 15)  # ClinConsensus' alternatives to CACS@k (issue 14)


def sensitivity_parse(text: str | None) -> tuple[int, ...]:
    """``--sensitivity 7,8,12,15``: the alternative thresholds k' (whole numbers ≥ 0)."""
    if text is None or not str(text).strip():
        return SENSITIVITY_KS
    try:
        values = tuple(sorted({int(part) for part in str(text).split(",") if part.strip()}))
    except ValueError:
        raise ValueError(f"--sensitivity takes whole numbers separated by commas, not {text!r}") from None
    if not values or min(values) < 0:
        raise ValueError(f"--sensitivity takes whole numbers 0 or more, not {text!r}")
    return values


def _intervals(df: pd.DataFrame, k: int, cases, seed: int = 0) -> dict:
    """Bootstrap 95% intervals (resampling cases, ``metrics.case_bootstrap_mean_ci``) of the three
    coverage means, whose per-response terms are s_i / N_i, [s_i ≥ k] and the CACS@k term (percent)."""
    hits, n = df["hits"].to_numpy(dtype=float), df["n_criteria"].to_numpy(dtype=float)
    terms = {"rubric_accuracy": 100.0 * hits / n, "pass_at_k": 100.0 * (hits >= k),
             "cacs": 100.0 * np.maximum(0.0, hits - k + 1) / np.maximum(1.0, n - k + 1)}
    out = {}
    for name, values in terms.items():
        ci = metrics.case_bootstrap_mean_ci(values, cases, seed=seed)
        out[f"{name}_ci"] = interval_pair(ci)
    return out


def coverage_compute(*, inputs: ReportInputs, source, k: int | None = None, sensitivity=SENSITIVITY_KS,
                     ci: bool = False) -> dict:
    """The ``coverage`` result (SPEC §5 keys) plus ``k_source`` and ``sensitivity``: the model
    ranking under CACS@k' for each k' of ``sensitivity``, rubric accuracy and Pass@k, each
    against CACS@k (Spearman ρ, Kendall τ, top-3 / top-5 overlap)."""
    df = response_hits_frame(inputs=inputs, source=source)
    if df.empty:  # said first: labels or a judge's run are what such a project lacks, whatever its k
        raise NothingDecided(f"{source.spec} decided no binary criterion of a model-authored response")
    k, k_source = coverage_k(inputs=inputs, source=source, k=k)
    overall = metrics.coverage(df, k=k)
    by_model = metrics.coverage_by_model(df, k=k)
    by_stratum: dict = {}
    for axis in STRATA:
        cells = metrics.coverage_by_stratum(df, k=k, stratum=axis)
        table: dict = {}
        for (value, model), cov in cells.items():
            table.setdefault(str(value), {})[str(model)] = _figures(cov)
        by_stratum[axis] = table
    by_group: dict = {}  # the strata the project groups (``stratum_groups``), by group
    for axis, groups in (inputs.project.stratum_groups or {}).items():
        if axis in STRATA and groups:
            grouped = df.assign(**{axis: strata_grouped(df[axis], groups)})
            table = {}
            for (value, model), cov in metrics.coverage_by_stratum(grouped, k=k, stratum=axis).items():
                table.setdefault(str(value), {})[str(model)] = _figures(cov)
            by_group[axis] = table
    response_cases = inputs.responses.loc[df["response_id"], "case_id"].to_numpy()
    ks = sorted({kk for kk in sensitivity if kk != k})
    alternatives = metrics.threshold_sensitivity(df, k=k, ks=ks)
    overall_figures = _figures(overall)
    by_model_figures = {str(m): _figures(c) for m, c in by_model.items()}
    if ci:  # intervals on request (issue 14): resampling cases, seeded
        overall_figures.update(_intervals(df, k, response_cases))
        for model, figures in by_model_figures.items():
            mine = (df["model"].astype(str) == model).to_numpy()
            figures.update(_intervals(df[mine], k, response_cases[mine]))
    return {
        "k": k,
        "overall": overall_figures,
        "by_model": by_model_figures,
        "by_stratum": by_stratum,
        "by_group": by_group,
        "case_accuracy": case_accuracy(df, k=k, cases=response_cases),
        "k_source": k_source,
        "sensitivity": [
            {
                "name": alt.name, "n_models": alt.comparison.n_models,
                "spearman_rho": as_number(alt.comparison.spearman_rho), "kendall_tau": as_number(alt.comparison.kendall_tau),
                "top3_overlap": as_number(alt.comparison.top3_overlap), "top5_overlap": as_number(alt.comparison.top5_overlap),
            }
            for alt in alternatives.alternatives
        ],
    }


# --- the page -------------------------------------------------------------------------------

CI_COLUMNS = ["rubric_accuracy 95% CI", "pass_at_k 95% CI", "cacs 95% CI"]


def coverage_page(*, project: Project, source: str | None = None, k: int | None = None, sensitivity: str | None = None,
                  ci: bool = False) -> dict:
    inputs = ReportInputs(project)
    sources = project_sources(project=project)
    candidates = [s.spec for s in sources["cohorts"] + sources["judges"]]
    if not candidates:
        return {"empty": "no_source", "tables": {}}
    if not inputs.n_binary_criteria_by_case.any():
        return {"empty": "no_binary", "tables": {}}
    source = source or candidates[0]
    try:
        main = COVERAGE.run(project=project, source=source_parse(text=source, project=project), k=k, inputs=inputs,
                            sensitivity=sensitivity_parse(sensitivity), ci=ci)
    except NothingDecided:
        return {"empty": "nothing_decided", "source": source, "tables": {}}
    except NoCoverageK:
        return {"empty": "no_k", "source": source, "tables": {}}
    k = main["k"]
    ranking = {}
    for spec in candidates:
        try:
            ranking[spec] = COVERAGE.run(project=project, source=source_parse(text=spec, project=project), k=k,
                                         sensitivity=SENSITIVITY_KS, inputs=inputs)["by_model"]
        except ValueError:
            continue
    models = sorted(main["by_model"])
    tables = {
        "by_model": report_table(
            ["model", "n_responses", "rubric_accuracy", "pass_at_k", "cacs", *(CI_COLUMNS if ci else [])],
            [[m, v["n_responses"], v["rubric_accuracy"], v["pass_at_k"], v["cacs"],
              *([interval_text(v.get(f"{c}_ci")) for c in ("rubric_accuracy", "pass_at_k", "cacs")] if ci else [])]
             for m, v in main["by_model"].items()]),
        "sensitivity": report_table(
            ["alternative", "n_models", "spearman_rho", "kendall_tau", "top3_overlap", "top5_overlap"],
            [[s["name"], s["n_models"], s["spearman_rho"], s["kendall_tau"], s["top3_overlap"], s["top5_overlap"]]
             for s in main["sensitivity"]]),
        "cacs_by_source": report_table(["model", *ranking],
                                       [[m, *[ranking[s].get(m, {}).get("cacs") for s in ranking]] for m in models]),
    }
    for axis, values in main["by_stratum"].items():
        tables[f"stratum_{axis}"] = report_table(
            [axis, "model", "n_responses", "rubric_accuracy", "pass_at_k", "cacs"],
            [[value, m, f["n_responses"], f["rubric_accuracy"], f["pass_at_k"], f["cacs"]]
             for value, per_model in sorted(values.items()) for m, f in sorted(per_model.items())],
        )
    deviations = {}
    for axis in STRATA:
        cells, grouped = (main.get("by_group") or {}).get(axis), True
        if cells is None:
            cells, grouped = main["by_stratum"][axis], False
        deviations[axis] = stratum_deviations(cells, main["by_model"], axis=axis, grouped=grouped)
        tables[f"deviation_{axis}"] = worded_table(
            ["stratum", "model", "n_responses", "cacs", "model_cacs", "cacs_deviation"],
            [[c["stratum"], c["model"], c["n"], c["cacs"], c["model_cacs"], c["deviation"]] for c in deviations[axis]["cells"]],
            words={"stratum": deviations[axis]["words"].capitalize(), "cacs": f"CACS@{k} in the stratum (%)",
                   "model_cacs": f"Model's overall CACS@{k} (%)"})
    distribution = main.get("case_accuracy") or {"by_model": {}, "edges": [], "k_accuracy": None}
    tables["case_accuracy"] = worded_table(
        ["model", "n_cases", "mean", "minimum", "lower_quartile", "median", "upper_quartile", "maximum"],
        [[m, d["n_cases"], d["mean"], d["min"], d["q1"], d["median"], d["q3"], d["max"]]
         for m, d in distribution["by_model"].items()],
        words={"mean": "Mean case accuracy (%)"})
    return {"source": source, "sources": candidates, "k": k, "k_source": main["k_source"], "overall": main["overall"],
            "by_model": main["by_model"], "deviations": deviations, "case_accuracy": distribution, "tables": tables}


def stratum_deviations(cells: dict, by_model: dict, *, axis: str, grouped: bool) -> dict:
    """The heatmap data of one stratum axis: per (stratum, model) cell its CACS@k, the model's overall
    CACS@k and their difference in points (``metrics.deviation_from_overall``), with n responses."""
    flat = {(value, model): f["cacs"] for value, per_model in cells.items() for model, f in per_model.items()}
    deviation = metrics.deviation_from_overall(flat, {m: f["cacs"] for m, f in by_model.items()})
    known = ORDER.get(axis, [])
    values = sorted(cells, key=lambda v: (known.index(v) if v in known else len(known), v))
    return {
        "words": GROUP_WORDS[axis] if grouped else STRATUM_WORDS[axis], "grouped": grouped, "values": values,
        "groups_words": GROUP_PLURALS.get(axis, ""),
        "cells": [{"stratum": value, "model": model, "n": f["n_responses"], "cacs": f["cacs"],
                   "model_cacs": by_model.get(model, {}).get("cacs"), "deviation": deviation[(value, model)]}
                  for value in values for model, f in sorted(cells[value].items())],
    }


def coverage_charts(result: dict, project: Project) -> dict:
    if not result.get("by_model"):
        return {}
    models = list(result["by_model"])
    n = sum(v["n_responses"] for v in result["by_model"].values())
    return {**deviation_charts(result), **case_accuracy_charts(result), "by_model": charts.bar_chart(
        title=f"Rubric accuracy vs CACS@{result['k']} per model, {result['source']} (n = {n:,} responses)",
        labels=models, max_value=100.0, digits=1,
        series=[("rubric accuracy %", [result["by_model"][m]["rubric_accuracy"] for m in models]),
                (f"CACS@{result['k']} %", [result["by_model"][m]["cacs"] for m in models])],
        value_title="percent", label_title="model", n=[result["by_model"][m]["n_responses"] for m in models],
    )}


def case_accuracy_charts(result: dict) -> dict:
    """Per model a histogram over cases of its case-level rubric accuracy, with a dashed rule at the
    accuracy k met criteria make on a case of the median size (shaded: its range over the cases)."""
    distribution = result.get("case_accuracy") or {}
    by_model, at_k, k = distribution.get("by_model") or {}, distribution.get("k_accuracy"), result["k"]
    if not by_model:
        return {}
    models = list(by_model)
    reference = band = None
    if at_k is not None:
        size = f"{at_k['median_n_criteria']:g}" if at_k["min_n_criteria"] == at_k["max_n_criteria"] else \
            f"a median {at_k['median_n_criteria']:g}"
        reference = (f"k = {k} of {size} criteria ({at_k['pct']:.1f} %)", at_k["pct"])
        band = (at_k["low_pct"], at_k["high_pct"])
    n = sum(d["n_cases"] for d in by_model.values())
    return {"case_accuracy": charts.histograms(
        title=f"Case-level rubric accuracy per model, {result['source']} (n = {n:,} model-cases)",
        groups=models, counts=[by_model[m]["counts"] for m in models], edges=distribution["edges"],
        n=[by_model[m]["n_cases"] for m in models], value_title="case-level rubric accuracy (%)",
        count_title="cases", group_title="model", series="cases per bin", reference=reference, band=band)}


def deviation_charts(result: dict) -> dict:
    """Per stratum axis a heatmap of models × strata: each cell the model's CACS@k in the stratum minus
    its overall CACS@k (points; blue above, red below), n responses in the tooltip."""
    out, k = {}, result["k"]
    models = list(result["by_model"])
    for axis, data in (result.get("deviations") or {}).items():
        if not data["cells"]:
            continue
        at = {(c["model"], c["stratum"]): c for c in data["cells"]}
        rows = [m for m in models if any((m, v) in at for v in data["values"])]
        labels = [f"{m} ({result['by_model'][m]['cacs']:.1f} %)" if result["by_model"][m]["cacs"] is not None else m
                  for m in rows]
        n = sum(c["n"] for c in data["cells"])
        out[f"deviation_{axis}"] = charts.heatmap(
            title=f"CACS@{k} per {data['words']} minus the model's overall CACS@{k}, {result['source']} "
                  f"(n = {n:,} response-strata)",
            rows=labels, columns=data["values"], digits=1,
            matrix=[[(at.get((m, v)) or {}).get("deviation") for v in data["values"]] for m in rows],
            counts=[[(at.get((m, v)) or {}).get("n") for v in data["values"]] for m in rows],
            value_title=f"points vs overall CACS@{k}",
            row_title="model (overall CACS)", column_title=data["words"])
    return out


# --- the declarations -----------------------------------------------------------------------

SENSITIVITY_PATTERN = r"^\s*[0-9]+\s*(,\s*[0-9]+\s*)*$"


@extend_schema_field({"type": "string", "pattern": SENSITIVITY_PATTERN})
class SensitivityField(serializers.CharField):
    """``7,8,12,15``: the alternative thresholds k' (whole numbers ≥ 0), parsed; the pattern, which
    the API's schema states, is the form taken."""

    def to_internal_value(self, data):
        text = super().to_internal_value(data)
        if not re.fullmatch(SENSITIVITY_PATTERN, text):
            raise serializers.ValidationError(f"--sensitivity takes whole numbers 0 or more separated by commas, not {text!r}")
        try:
            return sensitivity_parse(text)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class SensitivityTextField(SensitivityField):
    """The same, as its canonical text (one cache entry per list)."""

    def to_internal_value(self, data):
        return ",".join(map(str, super().to_internal_value(data))) if str(data).strip() else None


class CoverageParams(Params):
    source = SourceField()
    k = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0,
                                 help_text="threshold (default: the project's coverage k)")
    sensitivity = SensitivityField(required=False, allow_null=True, default=SENSITIVITY_KS,
                                   help_text="alternative thresholds k' compared with CACS@k, with rubric accuracy and "
                                             "Pass@k (default 7,8,12,15)")


class CoveragePageParams(Params):
    source = SourceField(spec=True, required=False, allow_null=True, default=None)
    k = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None,
                                 error_messages={"min_value": "k must be a non-negative integer",
                                                 "invalid": "k must be a non-negative integer"})
    sensitivity = SensitivityTextField(required=False, allow_null=True, default=None)
    ci = Flag()


KEYS = ("k", "overall", "by_model", "by_stratum", "sensitivity", "n_excluded_cases", "n_draft_labels")

COVERAGE = register(Report(
    key="coverage", title="Coverage",
    help="Coverage of the rubric by one source: rubric accuracy, Pass@k and CACS@k.",
    params=CoverageParams, compute=coverage_compute, inputs_from="source", cannot_assess="zero",
    output=lambda result, params: {key: result[key] for key in KEYS},
    page=Page(params=CoveragePageParams, build=coverage_page, template="grading/reports/coverage.html",
              charts=coverage_charts, position=20),
))


class CalibrateKParams(Params):
    source = SourceField()


CALIBRATE_K = register(Report(
    key="calibrate_k", title="Coverage threshold k",
    help="Calibrate the coverage threshold k from human-authored responses.",
    params=CalibrateKParams, compute=calibrate_k_compute, inputs_from="source", cannot_assess="zero",
))
