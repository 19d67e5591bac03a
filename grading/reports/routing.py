"""Routed labelling (issue 28, point 2): how far a cohort's labels, drawn by the cohort's routing design
(``grading.routing``) or, without one, taken as a uniform random sample, pin a model figure down with a
judge's help (``metrics.active_mean``: inverse-probability weighted, judge-assisted), and how many
labelled responses a target interval width needs under uniform sampling and under routing by the judges'
uncertainty (``metrics.budget_for_width``, predicted from the labels in hand).

The per-response figures are the prediction-powered report's (``ppi.response_figures``): rubric
accuracy, Pass@k, the CACS@k term or the weighted score, cannot assess counted as not met (zero).
"""
import numpy as np
import pandas as pd
from rest_framework import serializers

from grading import metrics
from grading.metrics.active import UNIFORM_SHARE
from grading.models import Judge
from grading.selectors.routing import response_uncertainties, routing_design_for, routing_draw_frame
from grading.sources import project_sources, source_parse

from . import charts
from .glossary import worded_table
from .inputs import ReportInputs, as_number, interval_text
from .ppi import FIGURES, paired_figures
from .registry import NumberField, Page, Params, Report, ReportUnavailable, SourceField, choice, register

CURVE_POINTS = 12  # budgets on the width-against-labels chart


def _estimate(values: np.ndarray, judge: np.ndarray, probabilities: np.ndarray, lam=None) -> dict:
    try:
        found = metrics.active_mean(values, judge, probabilities, lam=lam)
    except metrics.MetricError as exc:
        return {"error": str(exc), "n_labelled": int((~np.isnan(values)).sum()), "n": int(values.size)}
    return {"estimate": as_number(found.estimate), "ci": [as_number(found.ci[0]), as_number(found.ci[1])],
            "width": as_number(found.width), "lam": as_number(found.lam), "n_labelled": found.n_labelled,
            "n": found.n}


def _design_state(*, inputs: ReportInputs, cohort, judged: pd.DataFrame, humans: pd.DataFrame) -> dict:
    """The population (responses the judge decided), each one's probability of being labelled and its
    uncertainty, and which are labelled: under the cohort's routing design, or as a uniform sample."""
    design = routing_design_for(cohort=cohort.obj)
    if design is not None:
        draws = routing_draw_frame(design=design)
        population = judged.index.intersection(draws.index).sort_values()
        chosen = population[draws.loc[population, "chosen"].to_numpy(dtype=bool)]
        labelled = chosen.intersection(humans.index)
        return {"mode": "routed", "population": population, "labelled": labelled,
                "probabilities": draws.loc[population, "probability"].to_numpy(dtype=float),
                "uncertainty": draws.loc[population, "uncertainty"].to_numpy(dtype=float),
                "uniform_share": design.uniform_share,
                "design": {"budget": design.budget, "rounds": design.rounds, "judges": design.judges,
                           "uniform_share": design.uniform_share, "seed": design.seed,
                           "chosen": int(len(chosen)), "labelled": int(len(labelled)),
                           "pending": int(len(chosen) - len(labelled)),
                           "outside": int(len(judged.index.difference(draws.index)))}}
    population = judged.index.sort_values()
    labelled = population.intersection(humans.index)
    share = len(labelled) / len(population) if len(population) else 0.0
    judges = list(Judge.objects.filter(project=inputs.project).order_by("name"))
    n_criteria = inputs.n_binary_criteria_by_case.reindex(inputs.responses.loc[population, "case_id"].to_numpy()).fillna(0)
    n_criteria.index = population
    uncertainty = response_uncertainties(project=inputs.project, judges=judges, n_criteria=n_criteria)
    fallback = float(uncertainty.mean()) if len(uncertainty) else 0.0
    return {"mode": "uniform", "population": population, "labelled": labelled,
            "probabilities": np.full(len(population), share),
            "uncertainty": uncertainty.reindex(population).fillna(fallback).to_numpy(dtype=float),
            "uniform_share": UNIFORM_SHARE, "design": None}


def routing_compute(*, inputs: ReportInputs, cohort, judge, metric: str = "rubric_accuracy", k: int | None = None,
                    target_width: float | None = None) -> dict:
    words, unit, _ = FIGURES[metric]
    k_used, humans, judged = paired_figures(inputs=inputs, human=cohort, judge=judge, metric=metric, k=k)
    state = _design_state(inputs=inputs, cohort=cohort, judged=judged, humans=humans)
    population, labelled = state["population"], state["labelled"]
    out = {"metric": metric, "metric_words": words, "unit": unit, "k": k_used, "cohort": cohort.spec,
           "judge": judge.spec, "mode": state["mode"], "design": state["design"], "n_responses": int(len(population)),
           "n_labelled": int(len(labelled)), "models": {}, "overall": None, "plan": None}
    if len(labelled) < 2 or not state["probabilities"].min() > 0:
        out["reason"] = (f"{len(labelled)} of the responses {cohort.spec} was to label {'is' if len(labelled) == 1 else 'are'} "
                         "labelled; an estimate needs at least 2")
        return out
    values = np.full(len(population), np.nan)
    positions = population.get_indexer(labelled)
    values[positions] = humans.loc[labelled, "value"].to_numpy(dtype=float)
    judge_values = judged.loc[population, "value"].to_numpy(dtype=float)
    pi = state["probabilities"]
    models = judged.loc[population, "model"].to_numpy()
    for model in sorted(set(models)):
        mine = models == model
        out["models"][str(model)] = _estimate(values[mine], judge_values[mine], pi[mine])
    out["overall"] = overall = _estimate(values, judge_values, pi)
    if "error" not in overall:
        out["plan"] = _plan(values=values, judge=judge_values, probabilities=pi, uncertainty=state["uncertainty"],
                            uniform_share=state["uniform_share"], lam=overall["lam"], current=overall["width"],
                            target=target_width, drawn=state["design"]["chosen"] if state["design"] else len(labelled))
    return out


def _plan(*, values, judge, probabilities, uncertainty, uniform_share: float, lam: float, current: float,
          target: float | None, drawn: int) -> dict:
    """Responses to label for the target width (default: the width in hand) under each design, and
    the predicted width of each design over a range of budgets (the chart). The predictions are
    anchored to the width in hand: scaled by the ratio of that width to the one predicted for the
    design that drew the labels, so that the plan and the estimate above agree where they meet."""
    n = judge.size
    uniform, routed = metrics.uniform_design(n), metrics.routed_design(uncertainty, uniform_share=uniform_share)
    target = current if target is None else target
    predicted_now = metrics.design_width(values, judge, probabilities, probabilities, lam=lam)
    anchor = current / predicted_now if predicted_now > 0 else 1.0

    def needed(design) -> int | None:
        return metrics.budget_for_width(target / anchor, values, judge, probabilities, design, lam=lam)

    def width(design, budget: int) -> float:
        return anchor * metrics.design_width(values, judge, probabilities, design(budget), lam=lam)

    by_uniform, by_routing = needed(uniform), needed(routed)
    budgets = sorted({int(b) for b in np.unique(np.linspace(max(2, n // 10), n, CURVE_POINTS).round())})
    curve = [[b, as_number(width(uniform, b)), as_number(width(routed, b))] for b in budgets]
    return {
        "target_width": as_number(target), "current_width": as_number(current), "drawn": int(drawn),
        "uniform_budget": by_uniform, "routed_budget": by_routing,
        "still_needed_uniform": None if by_uniform is None else max(0, by_uniform - drawn),
        "still_needed_routed": None if by_routing is None else max(0, by_routing - drawn),
        "saved": None if by_uniform is None or by_routing is None else by_uniform - by_routing,
        "curve": curve,
    }


OUTPUT_KEYS = ("metric", "unit", "k", "cohort", "judge", "mode", "design", "n_responses", "n_labelled", "models",
               "overall", "plan")


class RoutingParams(Params):
    cohort = SourceField(kinds=("cohort",), help_text="the cohort whose labels are routed: cohort:NAME")
    judge = SourceField(kinds=("judge",), help_text="the judge whose figure the estimate starts from: judge:NAME")
    metric = choice(list(FIGURES), what="metric", required=False, default="rubric_accuracy",
                    help_text="the per-response figure: rubric_accuracy, pass_rate, cacs (percent) or score (0-1)")
    k = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0,
                                 help_text="coverage threshold of pass_rate and cacs (default: the project's coverage k)")
    target_width = NumberField(required=False, allow_null=True, default=None, min_value=0.0, exclusive_minimum=True,
                               help_text="the 95% interval width wanted over all models, in the metric's unit "
                                         "(default: the width the labels in hand give)")


# --- the page -------------------------------------------------------------------------------

class RoutingPageParams(Params):
    cohort = SourceField(spec=True, kinds=("cohort",), required=False, allow_null=True, default=None,
                         help_text="the cohort (default: the project's first)")
    judge = SourceField(spec=True, kinds=("judge",), required=False, allow_null=True, default=None,
                        help_text="the judge (default: the project's first)")
    metric = choice(list(FIGURES), what="metric", required=False, default="rubric_accuracy")
    k = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)
    target_width = NumberField(required=False, allow_null=True, default=None, min_value=0.0, exclusive_minimum=True,
                               help_text="the interval width wanted (default: the width in hand)")


def routing_page(*, project, cohort: str | None = None, judge: str | None = None, metric: str = "rubric_accuracy",
                 k: int | None = None, target_width: float | None = None) -> dict:
    sources = project_sources(project=project)
    cohorts = [s.spec for s in sources["cohorts"]]
    judges = [s.spec for s in sources["judges"]]
    if not judges:
        return {"empty": "no_judge", "tables": {}}
    if not cohorts:
        return {"empty": "no_cohort", "tables": {}}
    cohort, judge = cohort or cohorts[0], judge or judges[0]
    try:
        result = ROUTING.run(project=project, cohort=source_parse(text=cohort, project=project),
                             judge=source_parse(text=judge, project=project), metric=metric, k=k,
                             target_width=target_width)
    except ReportUnavailable as exc:
        return {"empty": "unavailable", "reason": str(exc).splitlines()[0], "cohort": cohort, "judge": judge, "tables": {}}
    digits = 1 if result["unit"] == "percent" else 3
    rows = []
    for name, entry in [*result["models"].items(), *([("all models", result["overall"])] if result["overall"] else [])]:
        if "error" in entry:
            rows.append([name, None, None, None, entry["n_labelled"], entry["n"]])
            continue
        rows.append([name, entry["estimate"], interval_text(entry["ci"]), entry["width"], entry["n_labelled"], entry["n"]])
    tables = {"estimates": worded_table(["model", "routed_estimate", "routed_ci", "ci_width", "n_labelled", "n_responses"],
                                        rows)}
    plan = result["plan"]
    if plan:
        tables["widths"] = worded_table(["labelled_budget", "uniform_width", "routed_width"], plan["curve"])
    uniform_fewer = -plan["saved"] if plan and plan["saved"] is not None and plan["saved"] < 0 else None
    return {**result, "digits": digits, "tables": tables, "cohort_id": _cohort_id(project, result["cohort"]),
            "uniform_fewer": uniform_fewer}


def _cohort_id(project, spec: str) -> int | None:
    source = source_parse(text=spec, project=project)
    return source.obj.pk if source.kind == "cohort" else None


def routing_charts(result: dict, project) -> dict:
    """The predicted 95% interval width against the number of labelled responses, uniform vs routed, with
    the target width."""
    plan = result.get("plan") if not result.get("empty") else None
    if not plan:
        return {}
    percent = result["unit"] == "percent"
    budgets = [row[0] for row in plan["curve"]]
    return {"widths": charts.line_chart(
        title=f"Predicted 95% interval width of {result['metric_words']} over all models against responses labelled",
        series=[("uniform sampling", budgets, [row[1] for row in plan["curve"]]),
                ("routed", budgets, [row[2] for row in plan["curve"]])],
        x_title="responses labelled", y_title=f"interval width ({'percentage points' if percent else '0-1'})",
        digits=2 if percent else 4, reference=("target", plan["target_width"]),
    )}


ROUTING = register(Report(
    key="routing", title="Routed labelling",
    help="How narrow a cohort's labels with a judge's help make each model's interval, and how many responses a "
         "target width still needs when the labels are drawn uniformly or routed to the responses the judges are "
         "unsure about (inverse-probability weighted, so the estimate stays unbiased).",
    params=RoutingParams, compute=routing_compute, cannot_assess="zero", intervals=False,
    output=lambda result, params: {key: result[key] for key in OUTPUT_KEYS},
    page=Page(params=RoutingPageParams, build=routing_page, template="grading/reports/routing.html",
              charts=routing_charts, title="Routed labelling", position=97),
))
