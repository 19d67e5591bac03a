"""The HealthBench score of each model under one source (the ``healthbench_score`` command of
SPEC §5), as openai simple-evals computes it (``grading.metrics.healthbench``), and its page.

An example is one graded completion, as in simple-evals: for a judge, each grading the judge made of
a response (each sample: simple-evals grades every repeat of an example apart and averages the
scores, so two gradings of one completion are two examples, never a vote over them); for a panel,
a cohort or gold, each response the source decided (its decision). Its rubric items are the binary
criteria of the rubric its case is judged against, points = the criterion's weight, tags = the
criterion's tags; an item counts as met when the grading (or decision) is met, so an item left
undecided, invalid, cannot-assess or unresolved counts as not met (simple-evals grades every item).
Ordinal and nominal criteria have no place in the score and are left out. Example tags are the
case's ``example_tags`` metadata (the HealthBench importer keeps them there).

``ci`` adds bootstrap 95% intervals of the overall score and of every tag's (resampling cases,
``metrics.healthbench_intervals``). The page shows the overall score per model with its bootstrap std,
and the scores by example tag (themes) and by rubric tag (axes), each table with its CSV — on a
project that holds HealthBench examples; elsewhere it says how to import them.
"""
from collections import defaultdict

import pandas as pd

from annotation.models import Case
from annotation.vocabulary import MET
from grading import metrics, selectors
from grading.sources import project_sources, source_parse

from . import charts
from .inputs import ReportInputs, as_number, interval_pair, interval_text, report_table
from .registry import Flag, Page, Params, Report, SourceField, register

EXAMPLE_TAGS = "example_tags"  # the case metadata key the HealthBench importer writes


def _met_pairs(frame: pd.DataFrame, keys: list[str]) -> set:
    met = frame[frame["verdict"] == MET]
    return set(zip(*(met[k] for k in keys)))


def _graded(inputs: ReportInputs, source) -> tuple[list[tuple[int, int]], set]:
    """(response, sample) of every example of ``source`` and the (response, sample, criterion) it met.
    A plain judge's examples are its gradings, sample by sample; any other source's are its decided
    responses (sample 0)."""
    judge = source.obj if source.kind == "judge" else None
    if judge is None or judge.kind.votes_over_members:
        decisions = inputs.decisions(source)
        examples = [(int(r), 0) for r in dict.fromkeys(decisions["response_id"])]
        return examples, {(r, 0, c) for r, c in _met_pairs(decisions, ["response_id", "criterion_id"])}
    rows = selectors.judgment_rows(judge=judge, criteria=inputs.criteria)
    rows = rows[rows["response_id"].isin(inputs.responses.index)]
    few_shot = inputs.fewshot_cases(source)
    if few_shot:  # the judge's few-shot examples came from these cases: left out, as everywhere
        rows = rows[~rows["response_id"].map(inputs.responses["case_id"]).isin(few_shot)]
    examples = [(int(r), int(s)) for r, s in dict.fromkeys(zip(rows["response_id"], rows["sample"]))]
    return examples, _met_pairs(rows[rows["valid"].astype(bool)], ["response_id", "sample", "criterion_id"])


def healthbench_examples(*, inputs: ReportInputs, source) -> dict[str, list[tuple[int, "metrics.HealthBenchExample"]]]:
    """(case id, ``metrics.HealthBenchExample``) of each model's examples, models in name order,
    examples in response order then sample."""
    examples, met = _graded(inputs, source)
    criteria = inputs.criteria
    binary = criteria[criteria["kind"] == "binary"].sort_values(["rubric_version_id", "criterion_position"])
    items: dict = defaultdict(list)  # rubric version -> [(criterion id, points, tags)]
    for pk, version, weight, tags in zip(binary.index, binary["rubric_version_id"], binary["weight"], binary["tags"]):
        items[version].append((pk, float(weight), tuple(tags or ())))
    example_tags = selectors.case_metadata_lists(project=inputs.project, key=EXAMPLE_TAGS)
    responses = inputs.responses.sort_values(["model", "position"])
    about = {pk: (i, model, case_id, version) for i, (pk, model, case_id, version) in enumerate(zip(
        responses.index, responses["model"], responses["case_id"], responses["rubric_version_id"]))}
    out: dict[str, list] = defaultdict(list)
    for response_id, sample in sorted(examples, key=lambda e: (about[e[0]][0], e[1])):
        _, model, case_id, version = about[response_id]
        rubric = items.get(version, [])
        out[str(model)].append((int(case_id), metrics.HealthBenchExample(
            points=tuple(points for _, points, _ in rubric),
            met=tuple((response_id, sample, criterion) in met for criterion, _, _ in rubric),
            item_tags=tuple(tags for _, _, tags in rubric),
            example_tags=tuple(example_tags.get(case_id, ())),
        )))
    return dict(sorted(out.items()))


def healthbench_compute(*, inputs: ReportInputs, source, ci: bool = False) -> dict:
    models, counts = {}, {}
    for model, rows in healthbench_examples(inputs=inputs, source=source).items():
        examples = [example for _, example in rows]
        score = metrics.healthbench_score(examples)
        figures = {
            "overall": as_number(score.overall),
            "bootstrap_std": as_number(score.bootstrap_std),
            "n_examples": score.n_examples,
            "by_example_tag": {tag: as_number(x) for tag, x in score.by_example_tag.items()},
            "by_rubric_tag": {tag: as_number(x) for tag, x in score.by_rubric_tag.items()},
        }
        if ci:  # on request: the clipped means' bootstrap 95% intervals, resampling cases
            intervals = metrics.healthbench_intervals(examples, [case for case, _ in rows])
            figures["overall_ci"] = interval_pair(intervals["overall"])
            for group in ("by_example_tag", "by_rubric_tag"):
                figures[f"{group}_ci"] = {tag: interval_pair(x) for tag, x in intervals[group].items()}
        models[model] = figures
        counts[model] = metrics.healthbench_counts(examples)
    return {"source": source.spec, "models": models, "counts": counts}


def healthbench_output(result: dict, params: dict) -> dict:
    return {key: result[key] for key in ("source", "models", "n_excluded_cases", "n_draft_labels") if key in result}


# --- the page -------------------------------------------------------------------------------

def healthbench_present(*, project) -> bool:
    """Whether the project holds HealthBench examples (cases the HealthBench importer made)."""
    return Case.objects.filter(project=project, metadata__has_key=EXAMPLE_TAGS).exists()


def _tag_table(result: dict, group: str, ci: bool) -> dict:
    rows = []
    for model, figures in result["models"].items():
        n = result["counts"][model][group]
        intervals = figures.get(f"{group}_ci", {})
        for tag, score in figures[group].items():
            rows.append([tag, model, score, n.get(tag, 0), *([interval_text(intervals.get(tag))] if ci else [])])
    rows.sort(key=lambda row: (row[0], row[1]))
    return report_table(["tag", "model", "score", "n_examples", *(["score 95% CI"] if ci else [])], rows)


def healthbench_page(*, project, source: str | None = None, ci: bool = False) -> dict:
    """The page: the overall score per model, and by example tag and by rubric tag (tables with CSV)."""
    sources = project_sources(project=project)
    choices = [s.spec for s in sources["judges"] + sources["cohorts"]] + ["gold"]
    if not healthbench_present(project=project):
        return {"present": False, "sources": choices, "source": source, "tables": {}}
    source = source or choices[0]
    result = HEALTHBENCH_SCORE.run(project=project, source=source_parse(text=source, project=project), ci=ci)
    overall = [[model, f["overall"], f["bootstrap_std"], f["n_examples"],
                *([interval_text(f.get("overall_ci"))] if ci else [])] for model, f in result["models"].items()]
    return {"present": True, "sources": choices, "source": source, "models": result["models"], "counts": result["counts"],
            "ci": ci, "tables": {
        "overall": report_table(["model", "overall", "bootstrap_std", "n_examples", *(["overall 95% CI"] if ci else [])],
                                overall),
        "by_example_tag": _tag_table(result, "by_example_tag", ci),
        "by_rubric_tag": _tag_table(result, "by_rubric_tag", ci),
    }}


# The tag families HealthBench's figures are drawn by: themes are example tags, axes rubric item tags.
FAMILIES = (("theme", "by_example_tag", "theme:"), ("axis", "by_rubric_tag", "axis:"))


def healthbench_charts(result: dict, project) -> dict:
    """The overall score per model ± its bootstrap std, and per tag family (``theme:`` example tags,
    ``axis:`` rubric tags) bars per tag × model, with 95% intervals when the page shows them."""
    models = result.get("models") or {}
    if not models:
        return {}
    names = list(models)
    n = sum(f["n_examples"] for f in models.values())

    def spread(f):
        if f["overall"] is None or f["bootstrap_std"] is None:
            return None
        return (f["overall"] - f["bootstrap_std"], f["overall"] + f["bootstrap_std"])

    out = {"overall": charts.bar_chart(
        title=f"HealthBench score per model under {result['source']}, ± bootstrap std (n = {n:,} examples)",
        labels=names, series=[("overall", [models[m]["overall"] for m in names])], n=[models[m]["n_examples"] for m in names],
        whiskers=[[spread(models[m]) for m in names]], whisker_title="score ± bootstrap std",
        value_title="HealthBench score (clipped mean, 0–1)", label_title="model")}
    counts = result.get("counts") or {}
    for family, group, prefix in FAMILIES:
        tags = sorted({tag for f in models.values() for tag in f[group] if tag.startswith(prefix)})
        if not tags:
            continue
        intervals = result.get("ci")
        total = sum(counts.get(m, {}).get(group, {}).get(t, 0) for m in names for t in tags)
        out[family] = charts.bar_chart(
            title=f"HealthBench score per {family} and model under {result['source']}"
                  f"{', with 95% intervals' if intervals else ''} (n = {total:,} example-{family} pairs)",
            labels=[t.removeprefix(prefix) for t in tags], label_title=family,
            series=[(m, [models[m][group].get(t) for t in tags]) for m in names],
            series_n=[[counts.get(m, {}).get(group, {}).get(t, 0) for t in tags] for m in names],
            whiskers=[[(models[m].get(f"{group}_ci") or {}).get(t) for t in tags] for m in names] if intervals else None,
            whisker_title="95% interval", value_title="HealthBench score (clipped mean, 0–1)")
    return out


# --- the declaration ------------------------------------------------------------------------

class HealthBenchParams(Params):
    source = SourceField()


class HealthBenchPageParams(Params):
    source = SourceField(spec=True, required=False, allow_null=True, default=None)
    ci = Flag()


HEALTHBENCH_SCORE = register(Report(
    key="healthbench_score", title="HealthBench score",
    help="HealthBench score per model under one source: Σ points met / Σ positive points per example, "
         "the clipped mean over examples with its bootstrap std (1,000 resamples, seeded), by example tag "
         "and by rubric tag (openai simple-evals).",
    params=HealthBenchParams, compute=healthbench_compute, output=healthbench_output, inputs_from="source",
    cannot_assess="zero",
    page=Page(params=HealthBenchPageParams, build=healthbench_page, template="grading/reports/healthbench.html",
              charts=healthbench_charts, key="healthbench", title="HealthBench", position=90),
))
