"""Weighted scores of responses under one source (SPEC §3 "Weighted score"; the
``scores`` command of SPEC §5), and the per-decision values bias matrices average.

A decision's value is 1 / 0 for met / not met and the option value (or the ordinal
value) otherwise; cannot_assess, a not-applicable option and an unresolved tie have no
value and are handled by the cannot-assess strategy of ``metrics.score_responses``.
"""
import numpy as np
import pandas as pd
from rest_framework import serializers

from annotation.models import Response
from grading import metrics
from grading.sources import project_sources, source_parse

from . import charts
from .inputs import ReportInputs, as_number, interval_pair, interval_text
from .registry import Flag, NumberField, Page, Params, Report, SourceField, StrategyField, choice, register


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


UNITS = ("words", "characters")


def penalty_parse(text: str | None, unit: str = "words") -> tuple[metrics.LengthPenalty, str] | None:
    """``FREE,CAP,PENALTY[,EXPONENT]`` (Autorubric's length penalty: nothing up to FREE words or
    characters, growing to PENALTY at CAP and beyond, with EXPONENT 1 by default) and its unit;
    None for no penalty. A ValueError names what is wrong."""
    if text is None or not str(text).strip():
        return None
    if unit not in UNITS:
        raise ValueError(f"unknown length unit {unit!r}; use words or characters")
    parts = [p.strip() for p in str(text).split(",")]
    try:
        if len(parts) not in (3, 4):
            raise ValueError
        free, cap, penalty = int(parts[0]), int(parts[1]), float(parts[2])
        exponent = float(parts[3]) if len(parts) == 4 else 1.0
    except ValueError:
        raise ValueError(f"--length-penalty is FREE,CAP,PENALTY[,EXPONENT] (e.g. 300,800,0.2), not {text!r}") from None
    try:
        return metrics.LengthPenalty(free_words=free, cap_words=cap, penalty_at_cap=penalty, exponent=exponent), unit
    except metrics.MetricError as exc:
        raise ValueError(f"--length-penalty {text!r}: {exc}") from None


def response_scores(*, inputs: ReportInputs, source, strategy: str = "skip", penalty=None) -> pd.DataFrame:
    """Weighted score per response (index response_id) with model, length_chars, n_scored;
    ``penalty``: (``LengthPenalty``, unit) from ``penalty_parse``, subtracted from each score."""
    rows = decision_values(inputs.decisions(source), inputs.criteria)
    if rows.empty:
        return pd.DataFrame(columns=["score", "n_scored", "n_cannot_assess", "model", "length_chars", "external_id"])
    counts = None
    if penalty is not None:
        ids = rows["response"].unique()
        if penalty[1] == "characters":
            counts = inputs.responses.loc[ids, "length_chars"].astype(float)
        else:
            texts = dict(Response.objects.filter(pk__in=list(ids)).values_list("pk", "text"))
            counts = pd.Series({pk: float(metrics.word_count(texts.get(pk, ""))) for pk in ids})
    scores = metrics.score_responses(rows, strategy=strategy, length_penalty=penalty[0] if penalty else None, words=counts)
    responses = inputs.responses.loc[scores.index]
    scores["model"] = responses["model"].to_numpy()
    scores["author_kind"] = responses["author_kind"].to_numpy()
    scores["length_chars"] = responses["length_chars"].to_numpy()
    scores["external_id"] = responses["external_id"].to_numpy()
    return scores


def scores_compute(*, inputs: ReportInputs, source, strategy: str = "skip", ci: bool = False, penalty=None) -> dict:
    """The ``scores`` result: score (or null) per response external id, mean per model (with a
    bootstrap 95% interval resampling cases, ``ci``), after the length penalty when one is given."""
    strategy = metrics.parse_strategy(strategy)
    scores = response_scores(inputs=inputs, source=source, strategy=strategy, penalty=penalty)
    by_model = {}
    for model, rows in scores.groupby("model", sort=True):
        defined = rows["score"].dropna()
        by_model[str(model)] = {"mean_score": as_number(defined.mean()) if len(defined) else None, "n": int(len(defined))}
        if ci:
            cases = inputs.responses.loc[defined.index, "case_id"].to_numpy()
            interval = metrics.case_bootstrap_mean_ci(defined.to_numpy(), cases) if len(defined) else None
            by_model[str(model)]["mean_score_ci"] = interval_pair(interval)
    out = {
        "responses": {str(ext): as_number(s) for ext, s in zip(scores["external_id"], scores["score"])},
        "by_model": by_model,
        "strategy": strategy.value,
    }
    if penalty is not None:
        rule, unit = penalty
        out["length_penalty"] = {"free": rule.free_words, "cap": rule.cap_words, "penalty_at_cap": rule.penalty_at_cap,
                                 "exponent": rule.exponent, "unit": unit}
    return out


def scores_page(*, project, source: str | None = None, strategy: str = "skip", length_penalty: str | None = None,
                length_unit: str = "words", ci: bool = False) -> dict:
    """The scores page: each model's mean weighted score and each response's score under a source,
    with the cannot-assess strategy and, when given, the length penalty."""
    sources = project_sources(project=project)
    choices = [s.spec for s in sources["cohorts"] + sources["judges"]] + ["gold"]
    source = source or choices[0]
    result = SCORES.run(project=project, source=source_parse(text=source, project=project), strategy=strategy,
                        penalty=penalty_parse(length_penalty, length_unit), ci=ci)
    inputs = ReportInputs(project)
    by_external = inputs.responses.reset_index().set_index("external_id")
    rows = [[ext, str(by_external.at[ext, "model"]) if ext in by_external.index else "",
             int(by_external.at[ext, "length_chars"]) if ext in by_external.index else None, score]
            for ext, score in sorted(result["responses"].items())]
    return {"sources": choices, "source": source, "strategy": result["strategy"], "length_penalty": result.get("length_penalty"),
            "tables": {
                "by_model": {"columns": ["model", "mean_score", "n", *(["mean_score 95% CI"] if ci else [])],
                             "rows": [[m, f["mean_score"], f["n"], *([interval_text(f.get("mean_score_ci"))] if ci else [])]
                                      for m, f in result["by_model"].items()]},
                "responses": {"columns": ["response", "model", "characters", "score"], "rows": rows},
            }}


def scores_charts(result: dict, project) -> dict:
    """Each model's mean weighted score under the page's source, with its n responses."""
    rows = result["tables"]["by_model"]["rows"]
    if not rows:
        return {}
    return {"by_model": charts.bar_chart(
        title=f"Mean weighted score per model, {result['source']} (n = {sum(r[2] for r in rows):,} responses)",
        labels=[r[0] for r in rows], series=[("mean score", [r[1] for r in rows])], n=[r[2] for r in rows],
        value_title="mean weighted score (0 to 1)", label_title="model")}


# --- the declaration ------------------------------------------------------------------------

def _penalty_checked(attrs: dict) -> None:
    try:
        penalty_parse(attrs.get("length_penalty"), attrs.get("length_unit") or "words")
    except ValueError as exc:
        raise serializers.ValidationError({"length_penalty": str(exc)}) from exc


PENALTY_NUMBERS = ("penalty_free", "penalty_span", "penalty_at_cap", "penalty_exponent")


class ScoresParams(Params):
    """The length penalty is the command's text (``--length-penalty FREE,CAP,PENALTY[,EXPONENT]``)
    or its numbers, the API's form: ``penalty_free``, ``penalty_span`` (the cap is FREE + SPAN, so
    it always exceeds FREE), ``penalty_at_cap`` and ``penalty_exponent``, which become that text."""
    source = SourceField()
    cannot_assess = StrategyField(source="strategy", default="skip", help_text="skip | zero | partial | fail (default skip)")
    length_penalty = serializers.CharField(
        required=False, allow_null=True, default=None, style={"metavar": "FREE,CAP,PENALTY[,EXPONENT]"},
        help_text="Autorubric's length penalty: 0 up to FREE, PENALTY at CAP and beyond (exponent 1)")
    length_unit = choice(UNITS, what="length unit", default="words")
    penalty_free = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0, max_value=10**9,
                                            help_text="the length penalty's free length: no penalty up to it")
    penalty_span = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=10**9,
                                            help_text="the length over the free length at which the penalty reaches "
                                                      "its cap (the cap is FREE + SPAN)")
    penalty_at_cap = NumberField(required=False, allow_null=True, default=None, min_value=0, max_value=10**6,
                                 help_text="the penalty at the cap and beyond")
    penalty_exponent = NumberField(required=False, allow_null=True, default=None, min_value=0, max_value=10**6,
                                   exclusive_minimum=True, help_text="the penalty's growth exponent (default 1)")
    # The text can name a cap not above its free length, which no schema states: the API takes the numbers.
    command_only = ("length_penalty",)
    together = {"penalty": (PENALTY_NUMBERS[:3], PENALTY_NUMBERS[3:])}  # the length penalty by its numbers

    def validate(self, attrs):  # the penalty rule, parsed once
        self.together_check(attrs)
        free, span, at_cap, exponent = (attrs.pop(name, None) for name in PENALTY_NUMBERS)
        if free is not None:
            if attrs.get("length_penalty"):
                raise serializers.ValidationError({"length_penalty": "give the length penalty as its text or as its "
                                                                     "numbers (penalty_free...), not both"})
            attrs["length_penalty"] = f"{free},{free + span},{at_cap!r}" + (f",{exponent!r}" if exponent is not None else "")
        _penalty_checked(attrs)
        return {**{k: v for k, v in attrs.items() if k not in ("length_penalty", "length_unit")},
                "penalty": penalty_parse(attrs.get("length_penalty"), attrs["length_unit"])}


PENALTY_PARTS = ("penalty_free", "penalty_cap", "penalty_at_cap", "penalty_exponent")


class ScoresPageParams(Params):
    """The page's parameters: the penalty as the command's text, or (the page's form) as its four
    numbers, which become that text, so both name one computation."""
    source = SourceField(spec=True, required=False, allow_null=True, default=None)
    strategy = StrategyField(default="skip")
    length_penalty = serializers.CharField(required=False, allow_null=True, allow_blank=True, default=None)
    length_unit = choice(UNITS, what="length unit", default="words")
    penalty_free = serializers.IntegerField(required=False, allow_null=True, min_value=0, write_only=True)
    penalty_cap = serializers.IntegerField(required=False, allow_null=True, min_value=1, write_only=True)
    penalty_at_cap = serializers.FloatField(required=False, allow_null=True, min_value=0, write_only=True)
    penalty_exponent = serializers.FloatField(required=False, allow_null=True, min_value=0, write_only=True)
    ci = Flag()

    def to_internal_value(self, data):
        # an empty number box is no number (the form sends every box, filled or not)
        if any(data.get(name) == "" for name in PENALTY_PARTS):
            data = data.copy()
            for name in PENALTY_PARTS:
                if data.get(name) == "":
                    del data[name]
        return super().to_internal_value(data)

    def validate(self, attrs):
        parts = [attrs.pop(name, None) for name in PENALTY_PARTS]
        if any(p is not None for p in parts):
            free, cap, at_cap, exponent = parts
            missing = [words for value, words in ((free, "free length"), (cap, "cap"), (at_cap, "penalty at the cap"))
                       if value is None]
            if missing:
                raise serializers.ValidationError({"length_penalty": "the length penalty needs " + " and ".join(missing)})
            attrs["length_penalty"] = f"{free},{cap},{at_cap:g}" + (f",{exponent:g}" if exponent is not None else "")
        attrs["length_penalty"] = (attrs.get("length_penalty") or "").strip() or None
        _penalty_checked(attrs)
        return attrs


def scores_output(result: dict, params: dict) -> dict:
    return {key: result[key] for key in ("responses", "by_model", "length_penalty") if key in result}


SCORES = register(Report(
    key="scores", title="Scores",
    help="Weighted rubric score per response under one source.",
    params=ScoresParams, compute=scores_compute, output=scores_output, inputs_from="source",
    page=Page(params=ScoresPageParams, build=scores_page, template="grading/reports/scores.html",
              charts=scores_charts, position=80),
))
