"""Weighted scores of responses under one source (SPEC §3 "Weighted score"; the
``scores`` command of SPEC §5), and the per-decision values bias matrices average.

A decision's value is 1 / 0 for met / not met and the option value (or the ordinal
value) otherwise; cannot_assess, a not-applicable option and an unresolved tie have no
value and are handled by the cannot-assess strategy of ``metrics.score_responses``.
"""
import numpy as np
import pandas as pd

from grading import metrics

from .inputs import ReportInputs, as_number


def decision_values(frame: pd.DataFrame, criteria: pd.DataFrame) -> pd.DataFrame:
    """Scoring rows of a decision frame: response, weight, value (NaN = no value),
    min_value, max_value, not_applicable."""
    kind = frame["criterion_id"].map(criteria["kind"])
    binary = kind == "binary"
    value = metrics.numeric_values(kind=kind, verdict=frame["verdict"], value=frame["value"])
    na_labels = frame["criterion_id"].map(criteria["na_labels"])
    not_applicable = np.array([o is not None and o in labels for o, labels in zip(frame["option"], na_labels)], dtype=bool)
    return pd.DataFrame(
        {
            "response": frame["response_id"].to_numpy(),
            "criterion_id": frame["criterion_id"].to_numpy(),
            "weight": frame["criterion_id"].map(criteria["weight"]).astype(float).to_numpy(),
            "value": np.where(not_applicable, np.nan, value),
            "min_value": np.where(binary, 0.0, frame["criterion_id"].map(criteria["min_value"])).astype(float),
            "max_value": np.where(binary, 1.0, frame["criterion_id"].map(criteria["max_value"])).astype(float),
            "not_applicable": not_applicable,
        }
    )


def unit_values(rows: pd.DataFrame) -> np.ndarray:
    """Decision values on [0, 1] (``metrics.unit_scale``, the one rescaling rule)."""
    return metrics.unit_scale(rows["value"].to_numpy(), rows["min_value"].to_numpy(), rows["max_value"].to_numpy())


def response_scores(*, inputs: ReportInputs, source, strategy: str = "skip") -> pd.DataFrame:
    """Weighted score per response (index response_id) with model, length_chars, n_scored."""
    rows = decision_values(inputs.decisions(source), inputs.criteria)
    if rows.empty:
        return pd.DataFrame(columns=["score", "n_scored", "n_cannot_assess", "model", "length_chars", "external_id"])
    scores = metrics.score_responses(rows, strategy=strategy)
    responses = inputs.responses.loc[scores.index]
    scores["model"] = responses["model"].to_numpy()
    scores["author_kind"] = responses["author_kind"].to_numpy()
    scores["length_chars"] = responses["length_chars"].to_numpy()
    scores["external_id"] = responses["external_id"].to_numpy()
    return scores


def scores_compute(*, inputs: ReportInputs, source, strategy: str = "skip", ci: bool = False) -> dict:
    """The ``scores`` result: score (or null) per response external id, mean per model (with a
    bootstrap 95% interval resampling cases, ``ci``)."""
    strategy = metrics.parse_strategy(strategy)
    scores = response_scores(inputs=inputs, source=source, strategy=strategy)
    by_model = {}
    for model, rows in scores.groupby("model", sort=True):
        defined = rows["score"].dropna()
        by_model[str(model)] = {"mean_score": as_number(defined.mean()) if len(defined) else None, "n": int(len(defined))}
        if ci:
            cases = inputs.responses.loc[defined.index, "case_id"].to_numpy()
            interval = metrics.case_bootstrap_mean_ci(defined.to_numpy(), cases) if len(defined) else None
            by_model[str(model)]["mean_score_ci"] = [as_number(interval.low), as_number(interval.high)] if interval else None
    return {
        "responses": {str(ext): as_number(s) for ext, s in zip(scores["external_id"], scores["score"])},
        "by_model": by_model,
        "strategy": strategy.value,
    }
