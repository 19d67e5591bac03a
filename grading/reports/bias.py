"""Bias and score matrices of the judges of one condition (SPEC §3 "Consensus-deviation bias
matrix", "Human-LLM bias matrix"; the ``bias_matrix`` command of SPEC §5; issue 13, point 1).

A judge's score S[i][j] for a target model is the mean decision value over the target's
model-authored responses and the chosen criteria, **in the rubric's own scale** by default
(``scale="native"``: option values as written, e.g. points on 0–10; met 1 / not met 0) or on
[0, 1] (``scale="unit"``, ``metrics.unit_scale``). Criteria of different scales are pooled only on
[0, 1]: in the native scale, ``criterion="all"`` pools the criteria of the scale most of them
share and names the others in ``warnings``; ``criterion=ID`` takes one criterion. Every cell also
carries its Monte Carlo μ ± σ over the judge's samples (``metrics.monte_carlo_cells``) and its n.

The human reference of the human–LLM matrix is, for a cohort, the mean of its experts' own
values per item (``human="mean"``, the panel mean of the multi-evaluator paper; the annotators'
labels, not the checker's) or the cohort decision (``human="decision"``); any other source
gives its decisions. The expert panel's table gives, per target and criterion, the mean of the
experts' means and their sd across experts. With fewer than three judges on a target the
consensus deviation of two judges is a mirror image: ``warnings`` says so.

Panels are ensembles, not judges with a model of their own, and are left out.
"""
import numpy as np
import pandas as pd
from django.contrib.auth import get_user_model
from rest_framework import serializers

from annotation.models import Project
from grading import metrics
from grading.selectors import judge_sample_outputs, judgment_rows
from grading.sources import Source, project_sources, source_parse

from ..judges.backends import backend_names
from ..models import Judge
from . import charts
from .bias_items import item_coverage, judged_items, on_items, shared_items_of, within
from .inputs import ReportInputs, as_number, interval_pair, interval_text, report_table
from .registry import Flag, Page, Params, Report, ReportUnavailable, SourceField, choice, register
from .scores import decision_values, unit_values

CONDITIONS = (Judge.ATTRIBUTED, Judge.ANONYMIZED)
SCALES = ("native", "unit")
HUMAN_REFERENCES = ("mean", "decision")
ALL = "all"
PER_CRITERION_MAX = 40  # project-wide criteria broken down one by one (a case-specific rubric is pooled only)


def scored_rows(*, inputs: ReportInputs, frame: pd.DataFrame, scale: str) -> pd.DataFrame:
    """response, criterion_id, target (source model) and score of each model-authored row with a
    value, with the frame's ``sample`` and ``rater`` when it has them; ``frame`` is a decision
    frame (or judge outputs, or labels). Only these columns: at full scale the rows are millions."""
    rows = decision_values(frame, inputs.criteria)
    responses = inputs.responses
    score = np.asarray(unit_values(rows) if scale == "unit" else rows["value"].to_numpy(), dtype=float)
    at = responses.index.get_indexer(rows["response"].to_numpy())  # -1: not a response reports count
    kept = (at >= 0) & (responses["author_kind"].to_numpy(dtype=object)[at] == "model") & ~np.isnan(score)
    out = pd.DataFrame({"response": rows["response"].to_numpy()[kept], "criterion_id": rows["criterion_id"].to_numpy()[kept],
                        "target": responses["model"].to_numpy(dtype=object)[at[kept]], "score": score[kept]})
    for column in ("sample", "rater"):
        if column in frame.columns:
            out[column] = frame[column].to_numpy()[kept]
    return out


def _matrix(frame: pd.DataFrame, judges: list[str], targets: list[str]) -> list[list]:
    frame = frame.reindex(index=judges, columns=targets)
    return [[as_number(v) for v in row] for row in frame.to_numpy(dtype=float)]


class _Selection:
    """The criteria one result pools: one criterion, or those sharing the most common scale."""

    def __init__(self, *, inputs: ReportInputs, criterion: str, scale: str, present: pd.Index):
        criteria = inputs.criteria
        by_external = pd.Series(criteria.index, index=criteria["criterion_external_id"])
        self.warnings: list[str] = []
        if criterion != ALL:
            if criterion not in by_external.index:
                raise LookupError(f"project {inputs.project.slug!r} has no criterion {criterion!r}")
            self.ids = {int(by_external[criterion])}
        else:
            self.ids = set(int(c) for c in present)
        chosen = criteria.loc[sorted(self.ids)] if self.ids else criteria.iloc[:0]
        ranges = list(zip(chosen["min_value"].where(chosen["kind"] != "binary", 0.0),
                          chosen["max_value"].where(chosen["kind"] != "binary", 1.0)))
        self.range = [0.0, 1.0]
        if scale == "native" and ranges:
            counts = pd.Series(ranges).value_counts(sort=False)
            best = max(counts.index, key=lambda r: (counts[r], r[1] - r[0]))  # most criteria; ties: the wider scale (points)
            left_out = [ext for ext, r in zip(chosen["criterion_external_id"], ranges) if r != best]
            if left_out:
                self.warnings.append(
                    f"criteria on other scales than {_points(best)} are not pooled in the native scale "
                    f"({len(left_out)}: {', '.join(sorted(map(str, left_out))[:5])}{' …' if len(left_out) > 5 else ''}); "
                    "choose one with --criterion, or --scale unit to pool every criterion on [0, 1]")
            self.ids = {int(c) for c, r in zip(chosen.index, ranges) if r == best}
            self.range = [float(best[0]), float(best[1])]


def _points(scale: tuple) -> str:
    return f"{scale[0]:g}–{scale[1]:g}"


def _cells(judge_rows: pd.DataFrame, sample_rows: pd.DataFrame, names: list[str], judge_models: dict) -> dict:
    """S, n, bias, self-bias, μ, σ and the judges per target, from pooled rows of the selection."""
    result = metrics.bias_matrix(judge_rows, judge_models=judge_models)
    mu, sd, _ = metrics.monte_carlo_cells(sample_rows) if len(sample_rows) else (pd.DataFrame(),) * 3
    targets = sorted(set(result.scores.columns.astype(str)) | set(mu.columns.astype(str)))
    scored = result.scores.reindex(index=names, columns=targets).notna() | mu.reindex(index=names, columns=targets).notna()
    n_judges = scored.sum(axis=0)
    return {
        "targets": targets,
        "scores": _matrix(result.scores, names, targets),
        "bias": _matrix(result.bias, names, targets),
        "self_bias": {name: as_number(v) for name, v in result.self_bias.items()},
        "counts": [[int(v) for v in row] for row in result.counts.reindex(index=names, columns=targets).fillna(0).to_numpy()],
        "mu": _matrix(mu, names, targets),
        "sd": _matrix(sd, names, targets),
        "n_judges": {t: int(n_judges[t]) for t in targets},
    }


def _few_judges(n_judges: dict) -> list[str]:
    few = sorted(t for t, n in n_judges.items() if n < 3)
    if not few:
        return []
    return [f"fewer than three judges score {', '.join(few)} (judges: {', '.join(str(n_judges[t]) for t in few)}): "
            "with two judges the consensus deviation is a mirror image (Bias[1][j] = −Bias[2][j]), so self-bias there "
            "says nothing about either judge"]


def _human(inputs: ReportInputs, reference, *, human: str, scale: str, ids: set) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The reference's rows (target, criterion_id, score) per item and, for a cohort, its experts' rows."""
    experts = None
    if reference.kind == "cohort":
        experts = scored_rows(inputs=inputs, frame=inputs.expert_rows(reference.obj), scale=scale)
        experts = experts[experts["criterion_id"].isin(ids)]
    if human == "mean" and experts is not None:
        items = experts.groupby(["response", "criterion_id", "target"], sort=False, observed=True)["score"].mean()
        return items.reset_index(), experts
    rows = scored_rows(inputs=inputs, frame=inputs.decisions(reference), scale=scale)
    return rows[rows["criterion_id"].isin(ids)], experts


def _project_wide(criteria: pd.DataFrame, ids: set) -> list[int]:
    """The criteria among ``ids`` that belong to no case (the project's own), in id order: one
    look-up of the whole column (a full-scale study has 75,000 case criteria, and a scalar read
    each took seconds)."""
    chosen = sorted(ids)
    no_case = criteria.loc[chosen, "case_id"].isna().to_numpy()
    return [c for c, project_own in zip(chosen, no_case) if project_own]


def _panel(experts: pd.DataFrame, criteria: pd.DataFrame, project_wide: list[int], usernames: dict) -> dict:
    """Per target and criterion (and over the selection): the mean of the experts' means and their
    sd across experts (ddof = 1), with the number of experts. ``project_wide``: the selection's
    criteria of no case (``_project_wide``), one column each."""
    project_wide = project_wide[:PER_CRITERION_MAX]
    columns = [(ALL, experts)] + [(str(criteria.at[c, "criterion_external_id"]), experts[experts["criterion_id"] == c])
                                  for c in project_wide]
    targets = sorted(experts["target"].astype(str).unique())
    out = {"targets": targets, "criteria": [name for name, _ in columns], "mean": [], "sd": [], "n_experts": []}
    for target in targets:
        means, sds, ns = [], [], []
        for _, rows in columns:
            per_expert = rows[rows["target"] == target].groupby("rater", sort=True)["score"].mean()
            means.append(as_number(per_expert.mean()) if len(per_expert) else None)
            sds.append(as_number(per_expert.std(ddof=1)) if len(per_expert) > 1 else None)
            ns.append(int(len(per_expert)))
        out["mean"].append(means)
        out["sd"].append(sds)
        out["n_experts"].append(ns)
    out["experts"] = sorted(usernames.get(r, str(r)) for r in experts["rater"].unique())
    return out


def _score_intervals(rows: pd.DataFrame, inputs: ReportInputs, names: list[str], targets: list[str]) -> list[list]:
    """Per cell, a bootstrap 95% interval of S (the mean over the target's items) resampling cases."""
    cases = rows["response"].map(inputs.responses["case_id"])
    out = []
    for judge in names:
        row = []
        for target in targets:
            mine = ((rows["judge"] == judge) & (rows["target"] == target)).to_numpy()
            interval = metrics.case_bootstrap_mean_ci(rows["score"].to_numpy(dtype=float)[mine], cases.to_numpy()[mine]) \
                if mine.any() else None
            row.append(interval_pair(interval))
        out.append(row)
    return out


def bias_compute(*, inputs: ReportInputs, condition: str, reference=None, scale: str = "native", criterion: str = ALL,
                 human: str = "mean", shared_items: bool = False, ci: bool = False) -> dict:
    """``shared_items``: only the (response, criterion) items every judge of the matrix scored, so
    every cell of a target averages the same responses. A judge without a scored item on the chosen
    criteria is left out of the matrix (``left_out_judges`` gives the reason), not a row of nulls."""
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r}; use attributed or anonymized")
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; use native or unit")
    if human not in HUMAN_REFERENCES:
        raise ValueError(f"unknown human reference {human!r}; use mean or decision")
    panels = backend_names(votes_over_members=True)
    judges = list(Judge.objects.filter(project=inputs.project, condition=condition).exclude(backend__in=panels).order_by("name"))
    if not judges:
        raise ReportUnavailable(f"project {inputs.project.slug!r} has no {condition} judges")
    names = [j.name for j in judges]
    decided, sampled = [], []
    for judge in judges:
        source = Source(project=inputs.project, kind="judge", name=judge.name, obj=judge)
        rows = judgment_rows(judge=judge, criteria=inputs.criteria)  # read once, for its decisions and its samples
        decided.append(scored_rows(inputs=inputs, frame=inputs.decisions(source, outputs=rows), scale=scale)
                       .assign(judge=judge.name))
        outputs = judge_sample_outputs(judge=judge, responses=inputs.responses, criteria=inputs.criteria, rows=rows)
        del rows
        split = inputs.fewshot_cases(source)
        if split:  # μ and σ leave out the few-shot split as S does (``ReportInputs.decisions``)
            outputs = outputs[~outputs["response_id"].map(inputs.responses["case_id"]).isin(split)]
        sampled.append(scored_rows(inputs=inputs, frame=outputs, scale=scale).assign(judge=judge.name))
    decided_rows, sample_rows = pd.concat(decided, ignore_index=True), pd.concat(sampled, ignore_index=True)
    del decided, sampled  # the parts' rows are in the whole now (millions at full scale)
    present = pd.Index(pd.concat([decided_rows["criterion_id"], sample_rows["criterion_id"]]).unique())
    selection = _Selection(inputs=inputs, criterion=criterion, scale=scale, present=present)
    if not selection.ids:
        raise ReportUnavailable(f"no {condition} judge has scored a model-authored response on the chosen criteria")
    ids = selection.ids
    chosen, chosen_samples = within(decided_rows, ids), within(sample_rows, ids)
    scored_any = set(decided_rows["judge"].unique()) | set(sample_rows["judge"].unique())  # not row by row: millions
    left_out = {name: ("has no judgments of model-authored responses" if name not in scored_any
                       else "scored none of the chosen criteria")
                for name in names if not ((chosen["judge"] == name).any() or (chosen_samples["judge"] == name).any())}
    names = [name for name in names if name not in left_out]
    judge_models = {j.name: j.model or j.name for j in judges if j.name in names}
    items = judged_items([chosen, chosen_samples], names)
    coverage, item_warnings = item_coverage(items, shared_items=shared_items)
    if shared_items and not coverage["same_items"]:
        shared = shared_items_of(items)
        if not len(shared):
            raise ReportUnavailable(f"no item is scored by every {condition} judge ({', '.join(names)}): there are no shared "
                              "items to compare them on")
        chosen, chosen_samples = on_items(chosen, shared), on_items(chosen_samples, shared)
    cells = _cells(chosen, chosen_samples, names, judge_models)
    out = {
        "judges": names,
        **cells,
        "judge_models": judge_models,
        "samples": {name: int(chosen_samples.loc[chosen_samples["judge"] == name, "sample"].nunique()) for name in names},
        "scale": scale,
        "range": selection.range,
        "criterion": criterion,
        "n_criteria": len(ids),
        "item_coverage": coverage,
        "left_out_judges": left_out,
        "warnings": selection.warnings + item_warnings + _few_judges(cells["n_judges"]) + [
            f"{name} is left out: it {reason}" for name, reason in left_out.items()],
    }
    if ci:  # intervals on request (issue 14): each mean score S, resampling cases
        out["scores_ci"] = _score_intervals(chosen, inputs, names, out["targets"])
    criteria = inputs.criteria
    project_wide = _project_wide(criteria, ids)
    if criterion == ALL and 1 < len(ids) and project_wide:
        out["per_criterion"] = {
            str(criteria.at[c, "criterion_external_id"]): _cells(chosen[chosen["criterion_id"] == c],
                                                               chosen_samples[chosen_samples["criterion_id"] == c], names,
                                                               judge_models)
            for c in project_wide[:PER_CRITERION_MAX]
        }
    if reference is not None:
        human_rows, experts = _human(inputs.for_source(reference), reference, human=human, scale=scale, ids=ids)
        if shared_items and not coverage["same_items"]:  # the human reference on the same items as the judges
            shared = shared_items_of(items)
            human_rows = on_items(human_rows, shared)
            experts = on_items(experts, shared) if experts is not None else None
        targets = out["targets"]
        human_means = human_rows.groupby("target", sort=True)["score"].mean()
        scores = pd.DataFrame(out["scores"], index=names, columns=targets, dtype=float)
        hum = scores - human_means.reindex(targets).to_numpy(dtype=float)
        defined = hum.to_numpy(dtype=float)
        defined = defined[~np.isnan(defined)]
        out["human_bias"] = _matrix(hum, names, targets)
        out["mean_human_bias"] = as_number(defined.mean()) if defined.size else None
        out["human_scores"] = {t: as_number(human_means.get(t)) for t in targets}
        out["human"] = human if experts is not None else "decision"
        out["reference"] = reference.spec
        if experts is not None and len(experts):
            usernames = dict(get_user_model().objects.filter(pk__in=experts["rater"].unique()).values_list("pk", "username"))
            out["panel"] = _panel(experts, criteria, project_wide, usernames)
        undefined = [t for t in targets if out["human_scores"][t] is None]
        if undefined:
            out["warnings"].append(
                f"{reference.spec} gives no human score for {', '.join(undefined)}"
                + (" (its decisions are ties or unresolved there: --human mean uses the experts' own values)"
                   if out["human"] == "decision" and reference.kind == "cohort" else ""))
    return out


PAIRING_RULE = ("each attributed judge is paired with each anonymized judge of the same model: a model with two judges "
                "in a condition has a row for each pairing, each naming its judges")


def bias_attenuation(*, attributed: dict, anonymized: dict) -> list[dict]:
    """Self-bias attenuation 1 − |anonymized| / |attributed| of every pairing of an attributed
    judge with an anonymized judge of the same model (``PAIRING_RULE``): never one judge picked
    silently where a model has two."""
    rows = []
    for judge_a, value_a in attributed["self_bias"].items():
        model = attributed["judge_models"][judge_a]
        for judge_b, value_b in anonymized["self_bias"].items():
            if anonymized["judge_models"][judge_b] != model:
                continue
            rows.append({"judge_model": model, "attributed_judge": judge_a, "anonymized_judge": judge_b,
                         "attributed": as_number(value_a), "anonymized": as_number(value_b),
                         "attenuation": as_number(metrics.self_bias_attenuation(attributed=value_a, anonymized=value_b))})
    return sorted(rows, key=lambda r: (r["judge_model"], r["attributed_judge"], r["anonymized_judge"]))


# --- the page -------------------------------------------------------------------------------

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
            tables[f"{condition}_{name}"] = report_table(["judge", *targets],
                                                         [[j, *row] for j, row in zip(judges, result[name])])
    intervals = result.get("scores_ci")  # with ci (issue 14): each S beside its interval, resampling cases
    if intervals is not None:
        tables[f"{condition}_scores"] = report_table(
            ["judge", *[column for t in targets for column in (t, f"{t} 95% CI")]],
            [[j, *[v for s, pair in zip(scores, pairs) for v in (s, interval_text(pair))]]
             for j, scores, pairs in zip(judges, result["scores"], intervals)])
    tables[f"{condition}_cells"] = report_table(
        ["judge", *[f"{t} (μ ± σ)" for t in targets]],
        [[j, *[_pm(m, d) for m, d in zip(mus, sds)]] for j, mus, sds in zip(judges, result["mu"], result["sd"])])
    per_criterion = result.get("per_criterion") or {}
    if per_criterion:
        tables[f"{condition}_per_criterion"] = report_table(
            ["criterion", "judge", "target", "score", "mu", "sd", "bias", "n"],
            [[criterion, j, t, cells["scores"][i][k], cells["mu"][i][k], cells["sd"][i][k], cells["bias"][i][k],
              cells["counts"][i][k]]
             for criterion, cells in per_criterion.items() for i, j in enumerate(judges)
             for k, t in enumerate(cells["targets"])])
    panel = result.get("panel")
    if panel:
        tables[f"{condition}_panel"] = report_table(
            ["target", *[f"{c} (mean ± sd)" for c in panel["criteria"]], "experts"],
            [[t, *[_pm(m, d) for m, d in zip(means, sds)], max(ns) if ns else 0]
             for t, means, sds, ns in zip(panel["targets"], panel["mean"], panel["sd"], panel["n_experts"])])
    return tables


def bias_page(*, project: Project, reference: str | None = None, scale: str = "native", criterion: str = "all",
              human: str = "mean", shared_items: bool = False, ci: bool = False) -> dict:
    inputs = ReportInputs(project)
    cohorts = project_sources(project=project)["cohorts"]
    reference = reference or (cohorts[0].spec if cohorts else None)
    ref = source_parse(text=reference, project=project) if reference else None
    conditions, tables = {}, {}
    for condition in ("attributed", "anonymized"):
        try:
            result = BIAS_MATRIX.run(project=project, condition=condition, reference=ref, inputs=inputs,
                                     scale=scale, criterion=criterion, human=human, shared_items=shared_items, ci=ci)
        except ReportUnavailable:
            continue  # no judges of this condition, or none scored: the other condition's tables only
        conditions[condition] = result
        tables.update(_bias_tables(condition, result))
    attenuation = []
    if len(conditions) == 2:
        attenuation = bias_attenuation(attributed=conditions["attributed"], anonymized=conditions["anonymized"])
        columns = ["judge_model", "attributed_judge", "anonymized_judge", "attributed", "anonymized", "attenuation"]
        tables["attenuation"] = report_table(columns, [[row[c] for c in columns] for row in attenuation])
    criteria = inputs.criteria
    project_wide = criteria[criteria["case_id"].isna()].sort_values("criterion_position")
    return {"reference": reference, "conditions": conditions, "attenuation": attenuation, "pairing_rule": PAIRING_RULE,
            "tables": tables, "scale": scale, "criterion": criterion, "human": human, "shared_items": shared_items, "ci": ci,
            "criteria": [str(c) for c in project_wide["criterion_external_id"].tolist()[:100]]}


def bias_charts(result: dict, project: Project) -> dict:
    out = {}
    for condition, data in result["conditions"].items():
        models = data["judge_models"]
        highlight = {(i, data["targets"].index(models[j])) for i, j in enumerate(data["judges"]) if models[j] in data["targets"]}
        n = sum(map(sum, data["counts"]))
        unit = "points" if data["scale"] == "native" else "on [0, 1]"
        out[condition] = charts.heatmap(
            title=f"Consensus-deviation bias ± Monte Carlo σ, {condition}, {unit} (n = {n:,} decisions)",
            rows=data["judges"], columns=data["targets"], matrix=data["bias"], spread=data["sd"], highlight=highlight,
            counts=data["counts"], value_title=f"bias ({unit})", row_title="judge", column_title="graded model",
        )
        out[f"{condition}_scores"] = charts.heatmap(
            title=f"Cross-evaluation scores S (colour) with μ ± σ over samples (text), {condition}, {unit} "
                  f"(n = {n:,} decisions)", rows=data["judges"], columns=data["targets"],
            matrix=data["scores"], centre=data["mu"], spread=data["sd"], highlight=highlight, diverging=False,
            counts=data["counts"], domain=tuple(data["range"]), value_title=f"mean score S ({unit})",
            centre_title="μ ± σ over samples", row_title="judge", column_title="graded model",
        )
        if "human_bias" in data:
            out[f"{condition}_human"] = charts.heatmap(
                title=f"Human–LLM bias vs {data['reference']} ({data['human']}), {condition}, {unit} (n = {n:,} decisions)",
                rows=data["judges"], columns=data["targets"], matrix=data["human_bias"], highlight=highlight,
                counts=data["counts"], value_title=f"judge − human ({unit})", row_title="judge", column_title="graded model",
            )
    return out


# --- the declaration ------------------------------------------------------------------------

class BiasParams(Params):
    condition = choice(CONDITIONS, what="condition")
    reference = SourceField(required=False, allow_null=True, default=None,
                            help_text="human source for the human-LLM matrix, e.g. cohort:NAME")
    criterion = serializers.CharField(default=ALL, help_text="a criterion id, or all (default): the criteria sharing "
                                                             "one scale, pooled")
    scale = choice(SCALES, what="scale", default="native",
                   help_text="native (default): the rubric's own points; unit: every criterion rescaled to [0, 1]")
    human = choice(HUMAN_REFERENCES, what="human reference", default="mean",
                   help_text="a cohort reference's human score: the mean of its experts' values (default) or its decision")
    shared_items = Flag(help_text="only the items every judge of the matrix scored, so every cell of a target averages "
                                  "the same responses")

    def validate(self, attrs):
        reference = attrs.get("reference")
        if reference is not None and reference.project.pk != self.context["project"].pk:
            raise serializers.ValidationError({"reference": "the bias reference must be a source of the same project"})
        return attrs


class BiasPageParams(Params):
    reference = SourceField(spec=True, required=False, allow_null=True, default=None)
    scale = choice(SCALES, what="scale", default="native")
    criterion = serializers.CharField(default=ALL, allow_blank=True)
    human = choice(HUMAN_REFERENCES, what="human reference", default="mean")
    shared_items = Flag()
    ci = Flag()

    def validate(self, attrs):
        return {**attrs, "criterion": attrs["criterion"].strip() or ALL}


KEYS = ("judges", "targets", "scores", "bias", "self_bias", "n_excluded_cases", "n_draft_labels",
        "scale", "range", "criterion", "n_criteria", "counts", "mu", "sd", "samples", "n_judges", "item_coverage",
        "left_out_judges", "warnings")
REFERENCE_KEYS = ("human_bias", "mean_human_bias", "human_scores", "human", "reference")


def bias_output(result: dict, params: dict) -> dict:
    keys = KEYS + (REFERENCE_KEYS if params.get("reference") else ()) + tuple(
        k for k in ("per_criterion", "panel", "scores_ci") if k in result)
    return {key: result[key] for key in keys}


BIAS_MATRIX = register(Report(
    key="bias_matrix", title="Bias",
    help="Consensus-deviation and human-LLM bias matrices of the judges of one condition.",
    params=BiasParams, compute=bias_compute, output=bias_output, cannot_assess="skip",
    page=Page(key="bias", params=BiasPageParams, build=bias_page, template="grading/reports/bias.html",
              charts=bias_charts, position=40),
))
