"""Reads of the grading app: decisions of every source and the metadata reports join them
with, as DataFrames loaded in one or two queries each.

``decisions``: the decision frame of any source (``source_decisions``; ``cohort_frame``,
``judge_frame``, ``judges_frame``, ``gold_frame``), each computed by the rules of
``grading.metrics.decisions``; ``frames``: responses, cases and criteria; ``fingerprint``:
the cache key part that changes whenever a report's inputs change.

The names load on first use (PEP 562): the fingerprint, which every report page reads to find its
cache entry, needs no pandas, so reading it does not bring the decision frames into a web process.
"""
import importlib

_SOURCES = {  # public name: (module, its name there)
    "DECISION_COLUMNS": ("decisions", "COLUMNS"),
    "ITEM": ("decisions", "ITEM"),
    "cohort_frame": ("decisions", "cohort_frame"),
    "cohort_frames": ("decisions", "cohort_frames"),
    "decisions_by_criterion": ("decisions", "decisions_by_criterion"),
    "evidence_rows": ("decisions", "evidence_rows"),
    "expert_label_rows": ("decisions", "expert_label_rows"),
    "gold_decision_frame": ("decisions", "gold_decision_frame"),
    "gold_frame": ("decisions", "gold_frame"),
    "judge_frame": ("decisions", "judge_frame"),
    "judge_hits": ("decisions", "judge_hits"),
    "judge_sample_outputs": ("decisions", "judge_sample_outputs"),
    "judges_frame": ("decisions", "judges_frame"),
    "judgment_rows": ("decisions", "judgment_rows"),
    "label_rater_counts": ("decisions", "label_rater_counts"),
    "label_rows": ("decisions", "label_rows"),
    "panel_members": ("decisions", "panel_members"),
    "source_decision_records": ("decisions", "source_decision_records"),
    "source_decisions": ("decisions", "source_decisions"),
    "source_raters": ("decisions", "source_raters"),
    "CohortDisputes": ("disputes", "CohortDisputes"),
    "cohort_disputes": ("disputes", "cohort_disputes"),
    "LabelMark": ("fingerprint", "LabelMark"),
    "disputes_fingerprint": ("fingerprint", "disputes_fingerprint"),
    "label_mark": ("fingerprint", "label_mark"),
    "project_fingerprint": ("fingerprint", "project_fingerprint"),
    "responses_changed": ("fingerprint", "responses_changed"),
    "applicable_pairs": ("frames", "applicable_pairs"),
    "case_frame": ("frames", "case_frame"),
    "case_metadata_lists": ("frames", "case_metadata_lists"),
    "criterion_frame": ("frames", "criterion_frame"),
    "fetch_frame": ("frames", "fetch_frame"),
    "option_range": ("frames", "option_range"),
    "project_model_names": ("frames", "project_model_names"),
    "response_frame": ("frames", "response_frame"),
    "response_links": ("frames", "response_links"),
}
__all__ = sorted(_SOURCES)


def __getattr__(name: str):
    if name in _SOURCES:
        module, attribute = _SOURCES[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SOURCES))
