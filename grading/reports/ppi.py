"""Prediction-powered estimates (issue 28, point 1): a per-response figure of the models (rubric
accuracy, Pass@k, the CACS@k term, the weighted score) estimated from a human source on the labelled
responses and a judge on every response (``metrics.ppi_mean``, PPI++ from ``ppi_py``), per model
and over all models, beside the humans' own estimate on the same labelled responses.

The per-response figures are the ones the coverage and scores reports average (their functions, not
copies): coverage's s_i / N_i, [s_i ≥ k] and CACS term (a criterion not decided met counts as not
met: cannot assess is zero), and the weighted score with cannot assess scored zero, so every figure
here treats cannot assess alike. Percentages as coverage gives them; the score as a fraction.

The labelled responses are those both sources decided. A prediction-powered interval is valid when
they are a random sample of the responses; ``label_fraction`` draws one (seeded) from them and
treats the rest as unlabelled, which is also how a manager sees what a smaller labelling budget
would have given.
"""
import numpy as np
import pandas as pd
from rest_framework import serializers

from grading import metrics
from grading.sources import project_sources, source_parse

from . import charts
from .coverage import coverage_k, response_hits_frame
from .glossary import worded_table
from .inputs import ReportInputs, as_number, interval_text
from .registry import NumberField, Page, Params, Report, ReportUnavailable, SourceField, choice, register
from .scores import response_scores

FIGURES = {  # metric -> (words, unit, needs k)
    "rubric_accuracy": ("rubric accuracy", "percent", False),
    "pass_rate": ("Pass@k", "percent", True),
    "cacs": ("CACS@k", "percent", True),
    "score": ("weighted score", "fraction", False),
}
TERMS = {"rubric_accuracy": "accuracy", "pass_rate": "passed", "cacs": "cacs"}
HUMAN_KINDS = ("cohort", "gold")


def response_figures(*, inputs: ReportInputs, source, metric: str, k: int | None) -> pd.DataFrame:
    """One row per model-authored response ``source`` decided (index response_id): model, value."""
    if metric == "score":
        scores = response_scores(inputs=inputs, source=source, strategy="zero")
        scores = scores[(scores["author_kind"] == "model") & scores["score"].notna()]
        return pd.DataFrame({"model": scores["model"].astype(str), "value": scores["score"].astype(float)})
    hits = response_hits_frame(inputs=inputs, source=source)
    if hits.empty:
        return pd.DataFrame({"model": pd.Series(dtype=str), "value": pd.Series(dtype=float)})
    terms = metrics.coverage_terms(hits, k=k if k is not None else 0)
    return pd.DataFrame({"model": hits["model"].astype(str).to_numpy(),
                         "value": 100.0 * terms[TERMS[metric]].to_numpy(dtype=float)},
                        index=pd.Index(hits["response_id"].to_numpy(), name="response_id"))


def labelled_split(human_ids: pd.Index, judge_ids: pd.Index, *, fraction: float, seed: int) -> tuple[pd.Index, pd.Index]:
    """(labelled, unlabelled) response ids: the responses both sources decided, or a uniform random
    ``fraction`` of them (seeded); unlabelled: every other response the judge decided."""
    both = judge_ids.intersection(human_ids).sort_values()
    if fraction < 1:
        size = int(round(fraction * len(both)))
        picked = np.random.default_rng(seed).choice(len(both), size=size, replace=False)
        both = both[np.sort(picked)]
    return both, judge_ids.difference(both).sort_values()


def _entry(estimate: metrics.PpiEstimate) -> dict:
    return {
        "estimate": as_number(estimate.estimate), "ci": [as_number(estimate.ci[0]), as_number(estimate.ci[1])],
        "human_only": {"estimate": as_number(estimate.human_only),
                       "ci": [as_number(estimate.human_only_ci[0]), as_number(estimate.human_only_ci[1])],
                       "n": estimate.n_labelled},
        "judge_only": as_number(estimate.judge_only),
        "n_labelled": estimate.n_labelled, "n_unlabelled": estimate.n_unlabelled,
        "effective_n": as_number(estimate.effective_n),
    }


def _estimate(human: pd.Series, judge: pd.Series, labelled: pd.Index, unlabelled: pd.Index) -> dict:
    try:
        return _entry(metrics.ppi_mean(human.loc[labelled].to_numpy(), judge.loc[labelled].to_numpy(),
                                       judge.loc[unlabelled].to_numpy()))
    except metrics.MetricError as exc:
        return {"error": str(exc), "n_labelled": int(len(labelled)), "n_unlabelled": int(len(unlabelled))}


def paired_figures(*, inputs: ReportInputs, human, judge, metric: str, k: int | None) -> tuple[int | None, pd.DataFrame, pd.DataFrame]:
    """(k in use, the human source's figures, the judge's) for a metric of ``FIGURES``; a project without
    binary criteria (for a figure that counts them) or a judge that decided nothing is unavailable."""
    words, _, needs_k = FIGURES[metric]
    if metric != "score" and not inputs.n_binary_criteria_by_case.any():
        raise ReportUnavailable(f"project {inputs.project.slug!r} has no binary criteria, which {words} counts; "
                                "use the metric score")
    k_used = coverage_k(inputs=inputs, source=human, k=k)[0] if needs_k else None
    humans = response_figures(inputs=inputs, source=human, metric=metric, k=k_used)
    judged = response_figures(inputs=inputs, source=judge, metric=metric, k=k_used)
    if judged.empty:
        raise ReportUnavailable(f"{judge.spec} decided no model-authored response of project {inputs.project.slug!r}")
    return k_used, humans, judged


def ppi_compute(*, inputs: ReportInputs, human, judge, metric: str = "rubric_accuracy", k: int | None = None,
                label_fraction: float = 1.0, seed: int = 0) -> dict:
    words, unit, _ = FIGURES[metric]
    k_used, humans, judged = paired_figures(inputs=inputs, human=human, judge=judge, metric=metric, k=k)
    if humans.empty:
        raise ReportUnavailable(f"{human.spec} decided no model-authored response of project {inputs.project.slug!r}")
    labelled, unlabelled = labelled_split(humans.index, judged.index, fraction=label_fraction, seed=seed)
    if len(labelled) < 2:
        raise ReportUnavailable(f"{human.spec} and {judge.spec} both decided {len(labelled)} response(s); "
                                "a prediction-powered estimate needs at least 2 labelled responses")
    models = {}
    for model in sorted(judged["model"].unique()):
        mine = judged.index[judged["model"] == model]
        models[model] = _estimate(humans["value"], judged["value"], labelled.intersection(mine),
                                  unlabelled.intersection(mine))
    return {
        "metric": metric, "metric_words": words, "unit": unit, "k": k_used,
        "human": human.spec, "judge": judge.spec, "label_fraction": label_fraction, "seed": seed,
        "models": models, "overall": _estimate(humans["value"], judged["value"], labelled, unlabelled),
        "n_human_without_judge": int(len(humans.index.difference(judged.index))),
    }


OUTPUT_KEYS = ("metric", "unit", "k", "human", "judge", "label_fraction", "seed", "models", "overall",
               "n_human_without_judge")


class PpiParams(Params):
    human = SourceField(kinds=HUMAN_KINDS, help_text="the human source: cohort:NAME or gold")
    judge = SourceField(kinds=("judge",), help_text="the judge: judge:NAME")
    metric = choice(list(FIGURES), what="metric", required=False, default="rubric_accuracy",
                    help_text="the per-response figure: rubric_accuracy, pass_rate, cacs (percent) or score (0-1)")
    k = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0,
                                 help_text="coverage threshold of pass_rate and cacs (default: the project's coverage k)")
    label_fraction = NumberField(required=False, default=1.0, min_value=0.0, max_value=1.0, exclusive_minimum=True,
                                 help_text="use a random fraction of the labelled responses as the labelled set "
                                           "(the rest counts as unlabelled): what a smaller labelling budget gives")
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**31 - 1,
                                    help_text="seed of the label_fraction draw")


# --- the page -------------------------------------------------------------------------------

class PpiPageParams(Params):
    human = SourceField(spec=True, kinds=HUMAN_KINDS, required=False, allow_null=True, default=None,
                        help_text="the human source (default: gold if the project has one, else its first cohort)")
    judge = SourceField(spec=True, kinds=("judge",), required=False, allow_null=True, default=None,
                        help_text="the judge (default: the project's first judge)")
    metric = choice(list(FIGURES), what="metric", required=False, default="rubric_accuracy")
    k = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)
    label_fraction = NumberField(required=False, allow_null=True, default=None, min_value=0.0, max_value=1.0,
                                 exclusive_minimum=True, help_text="the share of the labelled responses used as labelled "
                                                                   "(default 1: all)")
    seed = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0, max_value=2**31 - 1,
                                    help_text="seed of that draw (default 0)")


def ppi_page(*, project, human: str | None = None, judge: str | None = None, metric: str = "rubric_accuracy",
             k: int | None = None, label_fraction: float | None = None, seed: int | None = None) -> dict:
    label_fraction = 1.0 if label_fraction is None else label_fraction  # an empty box: the default
    seed = 0 if seed is None else seed
    sources = project_sources(project=project)
    humans = [s.spec for s in sources["gold"]] + [s.spec for s in sources["cohorts"]]
    judges = [s.spec for s in sources["judges"]]
    if not judges:
        return {"empty": "no_judge", "tables": {}}
    if not humans:
        return {"empty": "no_humans", "tables": {}}
    human, judge = human or humans[0], judge or judges[0]
    try:
        result = PPI.run(project=project, human=source_parse(text=human, project=project),
                         judge=source_parse(text=judge, project=project), metric=metric, k=k,
                         label_fraction=label_fraction, seed=seed)
    except ReportUnavailable as exc:  # a state of the project (nothing decided yet), explained on the page
        return {"empty": "unavailable", "reason": str(exc).splitlines()[0], "human": human, "judge": judge, "tables": {}}
    digits = 1 if result["unit"] == "percent" else 3
    rows = []
    for name, entry in [*result["models"].items(), ("all models", result["overall"])]:
        if "error" in entry:
            rows.append([name, None, None, None, None, None, entry["n_labelled"], entry["n_unlabelled"], None])
            continue
        rows.append([name, entry["estimate"], interval_text(entry["ci"]), entry["human_only"]["estimate"],
                     interval_text(entry["human_only"]["ci"]), entry["judge_only"], entry["n_labelled"],
                     entry["n_unlabelled"], entry["effective_n"]])
    return {
        **result, "digits": digits,
        "tables": {"estimates": worded_table(
            ["model", "ppi_estimate", "ppi_ci", "human_only", "human_only_ci", "judge_only", "n_labelled",
             "n_unlabelled", "effective_n"], rows)},
    }


def ppi_charts(result: dict, project) -> dict:
    """Per model the humans-alone and the prediction-powered estimates with their 95% intervals, and
    the judge's own mean."""
    if result.get("empty") or not result.get("models"):
        return {}
    entries = {m: e for m, e in [*result["models"].items(), ("all models", result["overall"])] if "error" not in e}
    if not entries:
        return {}
    labels = list(entries)
    percent = result["unit"] == "percent"
    words = result["metric_words"].replace("@k", f"@{result['k']}") if result["k"] is not None else result["metric_words"]
    return {"estimates": charts.bar_chart(
        title=f"{words.capitalize()} per model: {result['human']} alone vs with {result['judge']} "
              f"(PPI++), 95% intervals",
        labels=labels, max_value=100.0 if percent else 1.0, digits=1 if percent else 3,
        series=[(f"{result['human']} alone", [entries[m]["human_only"]["estimate"] for m in labels]),
                ("prediction-powered", [entries[m]["estimate"] for m in labels]),
                (f"{result['judge']} alone (biased)", [entries[m]["judge_only"] for m in labels])],
        whiskers=[[entries[m]["human_only"]["ci"] for m in labels], [entries[m]["ci"] for m in labels],
                  [None for _ in labels]],
        whisker_title="95% interval", value_title=f"{words} ({'%' if percent else '0-1'})", label_title="model",
        series_n=[[entries[m]["n_labelled"] for m in labels],
                  [entries[m]["n_labelled"] + entries[m]["n_unlabelled"] for m in labels],
                  [entries[m]["n_labelled"] + entries[m]["n_unlabelled"] for m in labels]],
    )}


PPI = register(Report(
    key="ppi_estimate", title="Prediction-powered estimates",
    help="A model figure from human labels on some responses and a judge on all of them (PPI++): the estimate, "
         "its 95% interval, the humans-alone estimate and interval, the judge-alone mean and the human labels "
         "the judge is worth.",
    params=PpiParams, compute=ppi_compute, cannot_assess="zero", intervals=False,
    output=lambda result, params: {key: result[key] for key in OUTPUT_KEYS},
    page=Page(params=PpiPageParams, build=ppi_page, template="grading/reports/ppi.html", charts=ppi_charts,
              title="PPI estimates", position=96),
))
