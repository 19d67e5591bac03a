"""The HealthBench score of each model under one source (the ``healthbench_score`` command of
SPEC §5), as openai simple-evals computes it (``grading.metrics.healthbench``).

An example is one response the source decided (HealthBench's graded completion). Its rubric items
are the binary criteria of the rubric its case is judged against, points = the criterion's weight,
tags = the criterion's tags; an item counts as met when the source's decision is met, so an item
the source left undecided, cannot-assess or unresolved counts as not met (simple-evals grades every
item). Ordinal and nominal criteria have no place in the score and are left out. Example tags are
the case's ``example_tags`` metadata (the HealthBench importer keeps them there).
"""
from collections import defaultdict

from annotation.vocabulary import MET
from grading import metrics, selectors

from .inputs import ReportInputs, as_number
from .registry import Params, Report, SourceField, register


class HealthBenchParams(Params):
    source = SourceField()


def healthbench_examples(*, inputs: ReportInputs, source) -> dict[str, list]:
    """The examples (``metrics.HealthBenchExample``) of each model, models and examples in order."""
    decisions = inputs.decisions(source)
    decided = set(decisions["response_id"])
    met = set(zip(decisions.loc[decisions["verdict"] == MET, "response_id"],
                  decisions.loc[decisions["verdict"] == MET, "criterion_id"]))
    criteria = inputs.criteria
    binary = criteria[criteria["kind"] == "binary"].sort_values(["rubric_version_id", "criterion_position"])
    items: dict = defaultdict(list)  # rubric version -> [(criterion id, points, tags)]
    for pk, version, weight, tags in zip(binary.index, binary["rubric_version_id"], binary["weight"], binary["tags"]):
        items[version].append((pk, float(weight), tuple(tags or ())))
    example_tags = selectors.case_metadata_lists(project=inputs.project, key="example_tags")
    responses = inputs.responses
    responses = responses[responses.index.isin(decided)].sort_values(["model", "position"])
    examples: dict[str, list] = defaultdict(list)
    for pk, model, case_id, version in zip(responses.index, responses["model"], responses["case_id"],
                                           responses["rubric_version_id"]):
        rubric = items.get(version, [])
        examples[str(model)].append(metrics.HealthBenchExample(
            points=tuple(points for _, points, _ in rubric),
            met=tuple((pk, criterion) in met for criterion, _, _ in rubric),
            item_tags=tuple(tags for _, _, tags in rubric),
            example_tags=tuple(example_tags.get(case_id, ())),
        ))
    return dict(sorted(examples.items()))


def healthbench_compute(*, inputs: ReportInputs, source) -> dict:
    models = {}
    for model, examples in healthbench_examples(inputs=inputs, source=source).items():
        score = metrics.healthbench_score(examples)
        models[model] = {
            "overall": as_number(score.overall),
            "bootstrap_std": as_number(score.bootstrap_std),
            "n_examples": score.n_examples,
            "by_example_tag": {tag: as_number(x) for tag, x in score.by_example_tag.items()},
            "by_rubric_tag": {tag: as_number(x) for tag, x in score.by_rubric_tag.items()},
        }
    return {"source": source.spec, "models": models}


def healthbench_output(result: dict, params: dict) -> dict:
    return {key: result[key] for key in ("source", "models", "n_excluded_cases", "n_draft_labels") if key in result}


HEALTHBENCH_SCORE = register(Report(
    key="healthbench_score", title="HealthBench score",
    help="HealthBench score per model under one source: Σ points met / Σ positive points per example, "
         "the clipped mean over examples with its bootstrap std (1,000 resamples, seeded), by example tag "
         "and by rubric tag (openai simple-evals).",
    params=HealthBenchParams, compute=healthbench_compute, output=healthbench_output, inputs_from="source",
    intervals=False,
))
