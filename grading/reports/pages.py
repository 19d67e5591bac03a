"""The five report pages' results (issue 3, point 5): each page function composes the
cached command-level reports of ``services`` with the judge analytics it adds, and
returns plain data — figures, chart series and ``tables`` (name → columns and rows,
which the views render and offer as CSV). They run in a Celery task (``tasks``) and
their results are cached like every report.
"""
import numpy as np
import pandas as pd

from annotation.models import Project
from grading import metrics
from grading.sources import project_sources

from . import services
from .agreement import aligned_decisions, binary_pairs, ordinal_summary
from .bias import bias_attenuation
from .inputs import ReportInputs, as_number, interval_pair, interval_text
from .panels import panel_summary
from .reliability_report import BY as RELIABILITY_BY
from .reliability_report import COLUMNS as RELIABILITY_COLUMNS
from .scores import response_scores, scores_page
from .stability import KINDS as STABILITY_KINDS
from .stability import by_kind as stability_by_kind
from .stability import sample_values as stability_values
from .subset import model_subset, subset_parse, subset_summary
from .traits import traits_page

# The report pages with their navigation labels (the pages' nav, the project page and the admin index).
PAGE_LABELS = {"agreement": "Agreement", "coverage": "Coverage", "judges": "Judges", "bias": "Bias",
               "calibration": "Calibration", "traits": "Traits", "reliability": "Reliability", "scores": "Scores"}
PAGES = tuple(PAGE_LABELS)
# The parameters a page has when its URL carries no query (the views produce exactly these).
DEFAULT_PARAMS = {
    "agreement": {"strategy": "zero"}, "coverage": {"source": None, "k": None, "sensitivity": None}, "judges": {"strategy": "zero"},
    "bias": {"reference": None, "scale": "native", "criterion": "all", "human": "mean"},
    "calibration": {"reference": None, "strategy": "skip"}, "traits": {"source": None, "reference": None},
    "reliability": {"a": None, "b": None, "by": "criterion"},
    "scores": {"source": None, "strategy": "skip", "length_penalty": None, "length_unit": "words"},
}
HISTOGRAM_BINS = 10


CI_COLUMNS = ["rubric_accuracy 95% CI", "pass_at_k 95% CI", "cacs 95% CI"]


def _table(columns: list[str], rows: list[list]) -> dict:
    return {"columns": columns, "rows": [[as_number(v) if not isinstance(v, str) else v for v in row] for row in rows]}


def _comparisons(project: Project, inputs: ReportInputs, strategy: str) -> list[dict]:
    """Cohort vs cohort, each judge vs each cohort, and each judge vs gold."""
    sources = project_sources(project=project)
    cohorts, judges = sources["cohorts"], sources["judges"]
    pairs = [(a, b, "human-human") for i, a in enumerate(cohorts) for b in cohorts[i + 1:]]
    pairs += [(c, j, "judge-cohort") for j in judges for c in cohorts]
    if cohorts:  # gold is derived from the cohorts (and adjudications)
        pairs += [(sources["gold"][0], j, "judge-gold") for j in judges]
    rows = []
    for a, b, kind in pairs:
        s = services.agreement_report(project=project, a=a.spec, b=b.spec, strategy=strategy, inputs=inputs)["summary"]
        rows.append({"a": a.spec, "b": b.spec, "kind": kind, **{k: s[k] for k in (
            "n_decisions", "mf1", "f1_met", "f1_not_met", "cohen_kappa", "krippendorff_alpha", "percent_agreement",
            "positive_rate_a", "positive_rate_b", "invalid_b", "matched_responses", "unmatched_responses")},
            "case_n": s["case_level"]["n"], "share_below": s["case_level"]["share_below_0_6"]})
    return rows


def _comparison_table(rows: list[dict]) -> dict:
    columns = ["a", "b", "kind", "n_decisions", "mf1", "f1_met", "f1_not_met", "cohen_kappa", "krippendorff_alpha",
               "percent_agreement", "positive_rate_a", "positive_rate_b", "invalid_b", "matched_responses",
               "unmatched_responses", "case_n", "share_below"]
    return _table(columns, [[r[c] for c in columns] for r in rows])


def agreement_page(*, project: Project, a: str | None = None, b: str | None = None, strategy: str = "zero") -> dict:
    inputs = ReportInputs(project)
    comparisons = _comparisons(project, inputs, strategy)
    human = [r for r in comparisons if r["kind"] == "human-human"]
    result = {"strategy": strategy, "comparisons": comparisons, "reference_mf1": human[0]["mf1"] if human else None,
              "tables": {"comparisons": _comparison_table(comparisons)}, "primary": None}
    if a is None or b is None:
        if not comparisons:
            return result
        a, b = comparisons[0]["a"], comparisons[0]["b"]
    primary = services.agreement_report(project=project, a=a, b=b, strategy=strategy, inputs=inputs)
    case_table = primary["case_table"]
    defined = [row for row in case_table["rows"] if row[-1] is not None]
    mf1 = np.array([row[-1] for row in defined], dtype=float)
    counts, edges = np.histogram(mf1, bins=HISTOGRAM_BINS, range=(0.0, 1.0))
    threshold = primary["threshold"]
    tail = sorted((row for row in case_table["rows"] if row[-1] is not None and row[-1] < threshold), key=lambda r: (r[-1], r[0], r[1]))
    by_model = primary["detail"]["by_model"]
    ci = metrics.case_bootstrap_mean_ci(mf1, [row[2] for row in defined]) if mf1.size else None  # resampling cases
    result.update(
        primary={k: primary[k] for k in ("a", "b", "strategy", "threshold", "summary", "detail")},
        histogram={"counts": counts.tolist(), "edges": edges.tolist(), "n": int(mf1.size),
                   "n_undefined": primary["summary"]["case_level"]["n_undefined"],
                   "mean_ci95": [ci.low, ci.high] if ci else None},
        tail=tail,
    )
    result["tables"].update(
        by_model=_table(["model", "n", "mf1", "cohen_kappa", "positive_rate_a", "positive_rate_b"],
                        [[m, v["n"], v["mf1"], v["cohen_kappa"], v["positive_rate_a"], v["positive_rate_b"]] for m, v in by_model.items()]),
        case_level=case_table,
        low_agreement=_table(case_table["columns"], tail),
    )
    return result


def coverage_page(*, project: Project, source: str | None = None, k: int | None = None, sensitivity: str | None = None,
                  ci: bool = False) -> dict:
    inputs = ReportInputs(project)
    sources = project_sources(project=project)
    candidates = [s.spec for s in sources["cohorts"] + sources["judges"]]
    if not candidates:
        raise ValueError(f"project {project.slug!r} has no cohorts or judges yet")
    source = source or candidates[0]
    main = services.coverage_report(project=project, source=source, k=k, inputs=inputs, sensitivity=sensitivity, ci=ci)
    k = main["k"]
    ranking = {}
    for spec in candidates:
        try:
            ranking[spec] = services.coverage_report(project=project, source=spec, k=k, inputs=inputs)["by_model"]
        except ValueError:
            continue
    models = sorted(main["by_model"])
    tables = {
        "by_model": _table(["model", "n_responses", "rubric_accuracy", "pass_at_k", "cacs", *(CI_COLUMNS if ci else [])],
                           [[m, v["n_responses"], v["rubric_accuracy"], v["pass_at_k"], v["cacs"],
                             *([interval_text(v.get(f"{c}_ci")) for c in ("rubric_accuracy", "pass_at_k", "cacs")] if ci else [])]
                            for m, v in main["by_model"].items()]),
        "sensitivity": _table(["alternative", "n_models", "spearman_rho", "kendall_tau", "top3_overlap", "top5_overlap"],
                              [[s["name"], s["n_models"], s["spearman_rho"], s["kendall_tau"], s["top3_overlap"], s["top5_overlap"]]
                               for s in main["sensitivity"]]),
        "cacs_by_source": _table(["model", *ranking], [[m, *[ranking[s].get(m, {}).get("cacs") for s in ranking]] for m in models]),
    }
    for axis, values in main["by_stratum"].items():
        tables[f"stratum_{axis}"] = _table(
            [axis, "model", "n_responses", "rubric_accuracy", "pass_at_k", "cacs"],
            [[value, m, f["n_responses"], f["rubric_accuracy"], f["pass_at_k"], f["cacs"]]
             for value, per_model in sorted(values.items()) for m, f in sorted(per_model.items())],
        )
    return {"source": source, "sources": candidates, "k": k, "k_source": main["k_source"], "overall": main["overall"],
            "by_model": main["by_model"], "tables": tables}


def _binary_values(frame: pd.DataFrame, criteria: pd.DataFrame) -> pd.Series:
    kind = frame["criterion_id"].map(criteria["kind"])
    verdict = frame["verdict"]
    return pd.Series(np.where(kind == "binary", (verdict == "met").astype(float), np.nan), index=frame.index)


def _variant_rows(judges: list, cohorts: list, comparisons: list[dict], inputs: ReportInputs) -> list[list]:
    """Rubric-perturbation robustness: each judge run on a rubric variant beside its original,
    MF1 (binary) and QWK (ordinal) against each cohort."""
    by_name = {j.name: j for j in judges}
    mf1 = {(r["a"], r["b"]): (r["mf1"], r["n_decisions"]) for r in comparisons}
    variants = [j for j in judges if (j.obj.settings or {}).get("variant_of") in by_name]
    rows = []
    for base in sorted({(j.obj.settings or {})["variant_of"] for j in variants}):
        family = [by_name[base]] + sorted((j for j in variants if j.obj.settings["variant_of"] == base), key=lambda j: j.name)
        for judge in family:
            for cohort in cohorts:
                merged, _, _ = aligned_decisions(inputs=inputs, a=cohort, b=judge)
                ordinal = ordinal_summary(merged, criteria=inputs.criteria)
                qwk, n_ordinal = ordinal["qwk"], ordinal["n"]
                value, n_binary = mf1.get((cohort.spec, judge.spec), (None, 0))
                rows.append([base, (judge.obj.settings or {}).get("variant") or "as written", judge.spec, cohort.spec,
                             value, n_binary, qwk, n_ordinal])
    return rows


def _fidelity_by_cohort(fidelity: list[dict], cohorts: list, judges: list) -> dict:
    """Judge fidelity as ClinConsensus reports it: each judge's MF1 against each cohort and their average."""
    mf1 = {(r["a"], r["b"]): r["mf1"] for r in fidelity if r["kind"] == "judge-cohort"}
    rows = []
    for judge in judges:
        values = [mf1.get((c.spec, judge.spec)) for c in cohorts]
        defined = [v for v in values if v is not None]
        rows.append([judge.spec, *values, sum(defined) / len(defined) if defined else None])
    return _table(["judge", *[f"mf1 vs {c.spec}" for c in cohorts], "mean over cohorts"], rows)


def _panel_rows(judges: list, inputs: ReportInputs, ci: bool) -> list[list]:
    """Each panel's mean member agreement (with ``ci``, its interval) and, per criterion, how its
    members voted."""
    rows = []
    for judge in judges:
        summary = panel_summary(inputs=inputs, source=judge, ci=ci)
        if summary is None:
            continue
        for criterion, votes in summary["votes_by_criterion"].items() or [("", {})]:
            rows.append([judge.spec, summary["vote"], ", ".join(summary["members"]), summary["mean_agreement"],
                         *([interval_text(summary["mean_agreement_ci"])] if ci else []),
                         summary["n_items"], criterion, "; ".join(f"{label} {n}" for label, n in votes.items())])
    return rows


def _ci_columns(columns: list[str], with_interval: set[str], ci: bool) -> list[str]:
    """``columns`` with, when ``ci``, a "NAME 95% CI" column after each of ``with_interval``."""
    return [c for name in columns for c in ([name, f"{name} 95% CI"] if ci and name in with_interval else [name])]


def judges_page(*, project: Project, strategy: str = "zero", ci: bool = False) -> dict:
    """With ``ci``, the means of the page carry bootstrap 95% intervals resampling cases: each
    source's positive rate, each judge's mean sd per criterion kind, each cross-grader comparison's
    mean absolute difference and each panel's mean agreement."""
    inputs = ReportInputs(project)
    sources = project_sources(project=project)
    cohorts, judges = sources["cohorts"], sources["judges"]
    comparisons = _comparisons(project, inputs, strategy)
    human = [r for r in comparisons if r["kind"] == "human-human"]
    fidelity = [r for r in comparisons if r["kind"] != "human-human"]
    positive = []
    for source in cohorts + judges:
        frame = inputs.annotated(source)
        binary = frame[frame["kind"] == "binary"]
        rate = (binary["verdict"] == "met").mean() if len(binary) else None
        interval = []
        if ci:
            met = (binary["verdict"] == "met").to_numpy(dtype=float)
            cases = binary["response_id"].map(inputs.responses["case_id"]).to_numpy()
            interval = [interval_text(interval_pair(metrics.case_bootstrap_mean_ci(met, cases) if len(binary) else None))]
        positive.append([source.spec, int(len(binary)), as_number(rate), *interval, int(frame["invalid"].sum())])
    stability, robustness = [], []
    for judge in judges:
        if judge.obj.backend != "panel":
            rows = stability_values(inputs=inputs, judge=judge.obj)
            if len(rows):
                kinds = stability_by_kind(rows, judge.name, cases=inputs.responses["case_id"] if ci else None)
                stability.append([judge.spec, judge.obj.samples, int(rows["sample"].nunique()),
                                  sum(k["n_items"] for k in kinds.values()), sum(k["n_items_with_sd"] for k in kinds.values()),
                                  *[v for kind in STABILITY_KINDS for v in (
                                      [kinds.get(kind, {}).get("mean_sd"), interval_text(kinds.get(kind, {}).get("mean_sd_ci"))]
                                      if ci else [kinds.get(kind, {}).get("mean_sd")])]])
        for cohort in cohorts:
            merged, _, _ = aligned_decisions(inputs=inputs, a=cohort, b=judge)
            pairs, _ = binary_pairs(merged, strategy=strategy)
            if pairs.empty:
                continue
            cg = metrics.cross_grader_robustness(pairs, model="model", a="a", b="b")
            interval = [interval_text(interval_pair(metrics.cross_grader_intervals(pairs)["mean_abs_diff_pp"]))] if ci else []
            robustness.append([cohort.spec, judge.spec, cg.n_models, as_number(cg.spearman_rho), as_number(cg.kendall_tau),
                               as_number(cg.mean_abs_diff_pp), *interval, as_number(cg.top3_overlap), as_number(cg.top5_overlap)])
    return {
        "strategy": strategy, "ci": ci,
        "reference_mf1": human[0]["mf1"] if human else None,
        "reference_label": f"{human[0]['a']} vs {human[0]['b']}" if human else None,
        "fidelity": fidelity,
        "tables": {
            "fidelity": _comparison_table(fidelity),
            "fidelity_by_cohort": _fidelity_by_cohort(fidelity, cohorts, judges),
            "positive_rates": _table(_ci_columns(["source", "n_binary", "positive_rate", "invalid"], {"positive_rate"}, ci),
                                     positive),
            "stability": _table(_ci_columns(["judge", "samples_configured", "samples_seen", "n_items", "n_items_with_sd",
                                             *[f"mean_sd_{kind}" for kind in STABILITY_KINDS]],
                                            {f"mean_sd_{kind}" for kind in STABILITY_KINDS}, ci), stability),
            "robustness": _table(_ci_columns(["cohort", "judge", "n_models", "spearman_rho", "kendall_tau", "mean_abs_diff_pp",
                                              "top3_overlap", "top5_overlap"], {"mean_abs_diff_pp"}, ci), robustness),
            "variants": _table(["judge", "rubric", "source", "cohort", "mf1", "n_binary", "qwk", "n_ordinal"],
                               _variant_rows(judges, cohorts, fidelity, inputs)),
            "panels": _table(_ci_columns(["panel", "vote", "members", "mean_agreement", "n_items", "criterion", "votes"],
                                         {"mean_agreement"}, ci), _panel_rows(judges, inputs, ci)),
        },
    }


def _pm(mu, sd, digits: int = 2) -> str:
    """A Monte Carlo cell as text: μ ± σ (σ left out with one sample), an en dash when undefined."""
    if mu is None:
        return "–"
    return f"{mu:.{digits}f}" + (f" ± {sd:.{digits}f}" if sd is not None else "")


def _bias_tables(condition: str, result: dict) -> dict:
    judges, targets = result["judges"], result["targets"]
    tables = {}
    for name in ("scores", "bias", "human_bias", "counts", "sd"):
        if name in result:
            tables[f"{condition}_{name}"] = _table(["judge", *targets], [[j, *row] for j, row in zip(judges, result[name])])
    intervals = result.get("scores_ci")  # with ci (issue 14): each S beside its interval, resampling cases
    if intervals is not None:
        tables[f"{condition}_scores"] = _table(
            ["judge", *[column for t in targets for column in (t, f"{t} 95% CI")]],
            [[j, *[v for s, pair in zip(scores, pairs) for v in (s, interval_text(pair))]]
             for j, scores, pairs in zip(judges, result["scores"], intervals)])
    tables[f"{condition}_cells"] = _table(
        ["judge", *[f"{t} (μ ± σ)" for t in targets]],
        [[j, *[_pm(m, d) for m, d in zip(mus, sds)]] for j, mus, sds in zip(judges, result["mu"], result["sd"])])
    per_criterion = result.get("per_criterion") or {}
    if per_criterion:
        tables[f"{condition}_per_criterion"] = _table(
            ["criterion", "judge", "target", "score", "mu", "sd", "bias", "n"],
            [[criterion, j, t, cells["scores"][i][k], cells["mu"][i][k], cells["sd"][i][k], cells["bias"][i][k],
              cells["counts"][i][k]]
             for criterion, cells in per_criterion.items() for i, j in enumerate(judges)
             for k, t in enumerate(cells["targets"])])
    panel = result.get("panel")
    if panel:
        tables[f"{condition}_panel"] = _table(
            ["target", *[f"{c} (mean ± sd)" for c in panel["criteria"]], "experts"],
            [[t, *[_pm(m, d) for m, d in zip(means, sds)], max(ns) if ns else 0]
             for t, means, sds, ns in zip(panel["targets"], panel["mean"], panel["sd"], panel["n_experts"])])
    return tables


def bias_page(*, project: Project, reference: str | None = None, scale: str = "native", criterion: str = "all",
              human: str = "mean", ci: bool = False) -> dict:
    inputs = ReportInputs(project)
    cohorts = project_sources(project=project)["cohorts"]
    reference = reference or (cohorts[0].spec if cohorts else None)
    conditions, tables = {}, {}
    for condition in ("attributed", "anonymized"):
        try:
            result = services.bias_report(project=project, condition=condition, reference=reference, inputs=inputs,
                                          scale=scale, criterion=criterion, human=human, ci=ci)
        except LookupError as exc:
            if "no criterion" in str(exc):
                raise
            continue
        conditions[condition] = result
        tables.update(_bias_tables(condition, result))
    attenuation = {}
    if len(conditions) == 2:
        attenuation = bias_attenuation(attributed=conditions["attributed"], anonymized=conditions["anonymized"])
        tables["attenuation"] = _table(["judge_model", "attributed", "anonymized", "attenuation"], [
            [m, *(next((v for j, v in conditions[c]["self_bias"].items() if conditions[c]["judge_models"][j] == m), None)
                  for c in ("attributed", "anonymized")), v] for m, v in attenuation.items()])
    criteria = inputs.criteria
    project_wide = criteria[criteria["case_id"].isna()].sort_values("criterion_position")
    return {"reference": reference, "conditions": conditions, "attenuation": attenuation, "tables": tables,
            "scale": scale, "criterion": criterion, "human": human, "ci": ci,
            "criteria": [str(c) for c in project_wide["criterion_external_id"].tolist()[:100]]}


def calibration_page(*, project: Project, reference: str | None = None, strategy: str = "skip") -> dict:
    inputs = ReportInputs(project)
    sources = project_sources(project=project)
    cohorts, judges = sources["cohorts"], sources["judges"]
    if not cohorts:
        return {"reference": None, "tables": {}, "calibration": []}
    ref = next((c for c in cohorts if c.spec == reference), cohorts[0])
    human = response_scores(inputs=inputs, source=ref, strategy=strategy)
    levels = np.round(np.linspace(0.0, 1.0, 11), 10)
    calibration, verbosity = [], []
    for judge in judges:
        scores = response_scores(inputs=inputs, source=judge, strategy=strategy)
        both = pd.DataFrame({"judge_score": scores["score"], "human_score": human["score"]}).dropna()
        both["item"] = both.index
        row = [judge.spec, ref.spec, len(both), None, None, None, None]
        if len(both) >= 4:
            try:
                rep = metrics.evaluate_calibration(both, levels=levels)
                row = [judge.spec, ref.spec, len(both), rep.n_calibration, rep.n_holdout, as_number(rep.qwk_before),
                       as_number(rep.qwk_after)]
            except metrics.MetricError:
                pass
        calibration.append(row)
    for source in cohorts + judges:
        scores = response_scores(inputs=inputs, source=source, strategy=strategy)
        if scores.empty:
            continue
        check = metrics.verbosity_check(scores, length="length_chars", score="score", model="model")
        for model, p in [("(pooled)", check.pooled), *sorted(check.per_model.items())]:
            verbosity.append([source.spec, str(model), p.n, as_number(p.pearson_r), as_number(p.pearson_p),
                              as_number(p.spearman_rho), as_number(p.spearman_p)])
    stored = [dict((j.obj.settings or {}).get("calibration") or {}, source=j.spec) for j in judges
              if j.obj.backend == "calibrated"]
    return {
        "reference": ref.spec, "strategy": strategy, "calibration": calibration, "stored": stored,
        "tables": {
            "stored": _table(["source", "from", "reference", "criterion", "n_calibration", "n_holdout", "qwk_before",
                              "qwk_after"],
                             [[c["source"], c.get("judge"), c.get("reference"), c.get("criterion") or "(traits)",
                               c.get("n_calibration"), c.get("n_holdout"), c.get("qwk_before"), c.get("qwk_after")]
                              for c in stored]),
            "calibration": _table(["judge", "reference", "n_items", "n_calibration", "n_holdout", "qwk_before", "qwk_after"], calibration),
            "verbosity": _table(["source", "model", "n", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"], verbosity),
        },
    }


# The figures of the reliability report that carry a bootstrap interval when asked (``reliability_report_compute``).
RELIABILITY_INTERVALS = ("accuracy", "mean_difference")


def reliability_page(*, project: Project, a: str | None = None, b: str | None = None, by: str = "criterion",
                     ci: bool = False) -> dict:
    """The reliability page: two sources (default: the first two cohorts, else a cohort and the
    first judge), pooled and per group, as one table; with ``ci``, the 95% intervals of accuracy and
    of the mean difference B − A each in a column beside its figure."""
    sources = project_sources(project=project)
    ordered = [s.spec for s in sources["cohorts"] + sources["judges"]]
    choices = [*ordered, "gold"]
    a = a or (ordered[0] if ordered else None)
    b = b or next((s for s in ordered if s != a), None)
    page = {"sources": choices, "a": a, "b": b, "by": by, "groupings": list(RELIABILITY_BY), "ci": ci}
    if a is None or b is None:
        return {**page, "tables": {}}
    result = services.reliability_ab_report(project=project, a=a, b=b, by=by, ci=ci)
    columns = []  # (header, key of the group's figures, whether the figure is an interval)
    for name in RELIABILITY_COLUMNS:
        columns.append((name, name, False))
        if ci and name in RELIABILITY_INTERVALS:
            columns.append((f"{name} 95% CI", f"{name}_ci", True))

    def row(key: str, figures: dict) -> list:
        return [key, *[interval_text(figures.get(k)) if interval else figures.get(k) for _, k, interval in columns]]

    rows = [row("(pooled)", result["pooled"]), *[row(key, group) for key, group in result["groups"].items()]]
    return {**page, "pooled": result["pooled"],
            "tables": {"reliability": _table([by, *[header for header, _, _ in columns]], rows)}}


PAGE_FUNCTIONS = {
    "agreement": agreement_page, "coverage": coverage_page, "judges": judges_page, "bias": bias_page,
    "calibration": calibration_page, "traits": traits_page, "reliability": reliability_page, "scores": scores_page,
}


def report_page_compute(*, project: Project, page: str, params: dict) -> dict:
    """One page's result, with how many cases quality control left out of it; under the page's
    model subset (``params["subset"]``, see ``subset``) when it has one, and saying so."""
    if page not in PAGE_FUNCTIONS:
        raise LookupError(f"unknown report page {page!r}")
    params = dict(params)
    wanted = params.pop("subset", None)
    subset = subset_parse(wanted["models"], wanted["exclude_models"]) if wanted else None
    with model_subset(subset):
        result = PAGE_FUNCTIONS[page](project=project, **params)
        inputs = ReportInputs(project)
        extra = {"n_excluded_cases": inputs.n_excluded_cases, "n_draft_labels": inputs.n_draft_labels}
        if subset is not None:
            extra["model_subset"] = subset_summary(subset, inputs.all_models)
    return {**result, **extra}
