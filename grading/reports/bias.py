"""Bias matrices of the judges of one condition (SPEC §3 "Consensus-deviation bias
matrix", "Human-LLM bias matrix"; the ``bias_matrix`` command of SPEC §5).

A judge's score for a target model is the mean decision value over the target's
model-authored responses and their criteria (met = 1, not met = 0, option values on
[0, 1]; cannot_assess and unresolved decisions have no value). Panels are ensembles,
not judges with a model of their own, and are left out.
"""
import pandas as pd

from grading import metrics
from grading.sources import Source

from ..models import Judge
from .inputs import ReportInputs, as_number
from .scores import decision_values, unit_values

CONDITIONS = (Judge.ATTRIBUTED, Judge.ANONYMIZED)


def scored_rows(*, inputs: ReportInputs, source) -> pd.DataFrame:
    """target (source model), score (decision value on [0, 1]) of each decision with a value."""
    own = inputs.for_source(source)
    rows = decision_values(inputs.decisions(source), own.criteria)
    responses = own.responses
    rows["target"] = rows["response"].map(responses["model"])
    rows["author_kind"] = rows["response"].map(responses["author_kind"])
    rows["score"] = unit_values(rows)
    rows = rows[(rows["author_kind"] == "model") & rows["score"].notna()]
    return rows[["target", "score"]]


def _matrix(frame: pd.DataFrame, judges: list[str], targets: list[str]) -> list[list]:
    frame = frame.reindex(index=judges, columns=targets)
    return [[as_number(v) for v in row] for row in frame.to_numpy(dtype=float)]


def bias_compute(*, inputs: ReportInputs, condition: str, reference=None) -> dict:
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r}; use attributed or anonymized")
    judges = list(
        Judge.objects.filter(project=inputs.project, condition=condition).exclude(backend="panel").order_by("name")
    )
    if not judges:
        raise LookupError(f"project {inputs.project.slug!r} has no {condition} judges")
    parts = []
    for judge in judges:
        source = Source(project=inputs.project, kind="judge", name=judge.name, obj=judge)
        parts.append(scored_rows(inputs=inputs, source=source).assign(judge=judge.name))
    df = pd.concat(parts, ignore_index=True)
    result = metrics.bias_matrix(df, judge_models={j.name: j.model or j.name for j in judges})
    names = [j.name for j in judges]
    targets = sorted(result.scores.columns.astype(str))
    out = {
        "judges": names,
        "targets": targets,
        "scores": _matrix(result.scores, names, targets),
        "bias": _matrix(result.bias, names, targets),
        "self_bias": {name: as_number(v) for name, v in result.self_bias.items()},
        "counts": [[int(v) for v in row] for row in result.counts.reindex(index=names, columns=targets).fillna(0).to_numpy()],
        "judge_models": {j.name: j.model or j.name for j in judges},
    }
    if reference is not None:
        human = scored_rows(inputs=inputs, source=reference)
        hum = metrics.human_llm_bias(df, human)
        out["human_bias"] = _matrix(hum.matrix, names, targets)
        out["mean_human_bias"] = as_number(hum.overall_mean)
        out["reference"] = reference.spec
    return out


def bias_attenuation(*, attributed: dict, anonymized: dict) -> dict:
    """Self-bias attenuation 1 − |anonymized| / |attributed| per judge model present in both."""
    by_model_att = {attributed["judge_models"][j]: v for j, v in attributed["self_bias"].items()}
    by_model_anon = {anonymized["judge_models"][j]: v for j, v in anonymized["self_bias"].items()}
    return {
        model: as_number(metrics.self_bias_attenuation(attributed=v, anonymized=by_model_anon[model]))
        for model, v in by_model_att.items()
        if model in by_model_anon
    }
