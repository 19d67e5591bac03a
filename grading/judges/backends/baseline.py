"""The offline baseline judge (``Judge.backend`` "baseline"): deterministic lexical coverage of a
criterion's key terms (``grading.judges.baseline``), run locally with no model, no network, no
pool and no cache; a floor to compare LLM judges against.
"""
import time

from django import forms

from ..baseline import baseline_judge
from .base import Badge, JudgeBackend, register
from .chat import min_evidence_field


@register
class BaselineBackend(JudgeBackend):
    name = "baseline"
    label = "offline baseline"
    position = 10
    executes_calls = page_form = configurable = True
    column_kind = "baseline"
    settings_keys = ("min_evidence", "threshold", "variant", "variant_of")

    def settings_fields(self) -> dict:
        return {
            "min_evidence": min_evidence_field(),
            "threshold": forms.FloatField(required=False, min_value=0, max_value=1, initial=0.5,
                                          help_text="Baseline only: the share of the criterion's key terms the "
                                                    "response must cover to meet it."),
        }

    def settings_initial(self, settings) -> dict:
        return {"min_evidence": settings.min_evidence, "threshold": settings.threshold}

    def settings_write(self, data: dict, settings: dict) -> None:
        for key in ("min_evidence", "threshold"):
            if data.get(key) is not None:
                settings[key] = data[key]

    def execute(self, *, context, calls) -> None:
        for call in calls:
            if context.stopping:
                break
            started = time.perf_counter()
            item = call.item
            outcome = baseline_judge(criterion_text=item.criterion_text, response_text=item.response_text,
                                     kind=item.kind, options=item.options, threshold=context.settings.threshold)
            context.record(call, outcome, raw=outcome.explanation, latency_ms=(time.perf_counter() - started) * 1000)
            context.flush_maybe()

    def badge(self, judge) -> Badge:
        return Badge("baseline", "baseline", "Deterministic lexical coverage of the criterion's key terms; not an LLM",
                     in_runs=True)

    def subtitle(self, judge) -> str:
        return "offline baseline (lexical)"
