"""Admin pages for judges, runs, judgments and adjudications. API keys are never stored:
a judge names the environment variable that holds its key.
"""
from django.contrib import admin

from annotation.admin import ProjectDataAdmin, ReadOnlyMixin

from .judges.forms import JudgeForm
from .judges.services import judge_delete, judge_save, prompt_template_save
from .models import Adjudication, AdjudicationHistory, DataJob, Judge, JudgeCacheEntry, JudgeRun, Judgment, PromptTemplate


@admin.register(Judge)
class JudgeAdmin(ProjectDataAdmin, admin.ModelAdmin):
    """Judges, with their settings JSON edited through named fields and checked by
    ``judge_validate`` (panels: members, vote and weights stay in the settings JSON)."""

    form = JudgeForm
    list_display = ["name", "project", "backend", "model", "condition", "samples", "temperature", "prompt_template"]
    list_select_related = ["project", "prompt_template"]  # a nullable key: the admin's default would not join it
    list_filter = ["project", "backend", "condition"]
    search_fields = ["name", "model"]
    fieldsets = [
        (None, {"fields": ["project", "name", "backend", "model", "base_url", "api_key_env", "condition"]}),
        ("Sampling and limits", {"fields": ["temperature", "samples", "concurrency", "max_retries", "timeout_seconds",
                                            "max_tokens", "reasoning_effort", "requests_per_minute",
                                            "tokens_per_minute", "json_mode", "price_in_per_mtok", "price_out_per_mtok"]}),
        ("Prompt", {"fields": ["prompt_template", "shuffle_options", "shuffle_seed", "min_evidence",
                               "few_shot_cohort", "few_shot_k", "few_shot_seed"]}),
        ("Panel", {"fields": ["panel_members", "panel_vote", "panel_weights"]}),
    ]

    # Saves and deletions go through the judge services: validated again and audited.
    def save_model(self, request, obj, form, change):
        judge_save(judge=obj, by=request.user)

    def delete_model(self, request, obj):
        judge_delete(judge=obj, by=request.user)

    def delete_queryset(self, request, queryset):
        for judge in queryset:
            self.delete_model(request, judge)


class SuperuserOnlyAdmin:
    """Shared across projects: superusers only (a project manager must not change another's)."""

    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_add_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


@admin.register(PromptTemplate)
class PromptTemplateAdmin(SuperuserOnlyAdmin, admin.ModelAdmin):
    """Versions are immutable: saving an edited template stores it as the next version."""

    list_display = ["name", "version", "created_at"]
    search_fields = ["name"]
    readonly_fields = ["version", "created_at"]

    def save_model(self, request, obj, form, change):
        saved = prompt_template_save(name=obj.name, system=obj.system, binary_user=obj.binary_user, option_user=obj.option_user,
                                     by=request.user)
        obj.pk, obj.version, obj.created_at = saved.pk, saved.version, saved.created_at


@admin.register(JudgeCacheEntry)
class JudgeCacheEntryAdmin(SuperuserOnlyAdmin, admin.ModelAdmin):
    list_display = ["key", "model", "tokens_in", "tokens_out", "created_at"]
    search_fields = ["key", "model"]
    readonly_fields = ["key", "model", "text", "tokens_in", "tokens_out", "created_at"]


class JudgeProjectAdmin(ProjectDataAdmin):
    project_path = "judge__project"

    def project_id_of(self, obj):
        return obj.judge.project_id


@admin.register(JudgeRun)
class JudgeRunAdmin(JudgeProjectAdmin, admin.ModelAdmin):
    list_display = ["pk", "judge", "status", "done_calls", "total_calls", "invalid_count", "cache_hits", "cost_usd", "created_at"]
    list_filter = ["status", "judge__project"]
    list_select_related = ["judge"]
    readonly_fields = ["done_calls", "total_calls", "invalid_count", "cache_hits", "tokens_in", "tokens_out", "cost_usd",
                       "calls_made", "retries", "failed_calls", "seconds"]


@admin.register(Judgment)
class JudgmentAdmin(JudgeProjectAdmin, admin.ModelAdmin):
    list_display = ["judge", "response", "criterion", "sample", "verdict", "option_label", "value", "valid", "latency_ms"]
    list_filter = ["judge__project", "judge", "valid", "condition"]
    search_fields = ["response__external_id", "criterion__external_id", "raw"]
    list_select_related = ["judge", "response", "criterion"]
    raw_id_fields = ["response", "criterion", "run"]
    readonly_fields = ["rubric_version", "raw", "tokens_in", "tokens_out", "latency_ms", "cost_usd"]


@admin.register(Adjudication)
class AdjudicationAdmin(ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["response", "criterion", "verdict", "option_label", "adjudicator", "updated_at"]
    list_filter = ["project"]
    search_fields = ["response__external_id", "criterion__external_id", "note"]
    list_select_related = ["response", "criterion", "adjudicator"]
    raw_id_fields = ["response", "criterion"]


@admin.register(AdjudicationHistory)
class AdjudicationHistoryAdmin(ReadOnlyMixin, ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["adjudication", "action", "changed_by", "changed_at"]
    list_filter = ["project", "action"]
    list_select_related = ["adjudication__response", "adjudication__criterion", "changed_by"]


@admin.register(DataJob)
class DataJobAdmin(ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["pk", "kind", "project", "user", "status", "progress_pct", "created_at", "finished_at"]
    list_select_related = ["project", "user"]  # nullable keys: the admin's default would not join them (a query a row)
    list_filter = ["kind", "status", "project"]
    readonly_fields = ["kind", "project", "user", "status", "progress_pct", "stage", "params", "result", "error", "file",
                       "created_at", "started_at", "finished_at"]

    def has_add_permission(self, request, obj=None):
        return False
