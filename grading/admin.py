"""Admin pages for judges, runs, judgments and adjudications. API keys are never stored:
a judge names the environment variable that holds its key.
"""
from django.contrib import admin

from .models import Adjudication, Judge, JudgeRun, Judgment


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "backend", "model", "condition", "samples", "temperature"]
    list_filter = ["project", "backend", "condition"]
    search_fields = ["name", "model"]


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "judge", "status", "done_calls", "total_calls", "invalid_count", "cache_hits", "cost_usd", "created_at"]
    list_filter = ["status", "judge__project"]
    list_select_related = ["judge"]
    readonly_fields = ["done_calls", "total_calls", "invalid_count", "cache_hits", "tokens_in", "tokens_out", "cost_usd"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["judge", "response", "criterion", "sample", "verdict", "option_label", "value", "valid", "latency_ms"]
    list_filter = ["judge__project", "judge", "valid", "condition"]
    search_fields = ["response__external_id", "criterion__external_id", "raw"]
    list_select_related = ["judge", "response", "criterion"]
    raw_id_fields = ["response", "criterion", "run"]
    readonly_fields = ["rubric_version", "raw", "tokens_in", "tokens_out", "latency_ms", "cost_usd"]


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ["response", "criterion", "verdict", "option_label", "provenance", "adjudicator", "updated_at"]
    list_filter = ["project", "provenance"]
    search_fields = ["response__external_id", "criterion__external_id", "note"]
    list_select_related = ["response", "criterion", "adjudicator"]
    raw_id_fields = ["response", "criterion"]
