"""Admin pages for the annotation models, built for researchers: search by external id and
text, filters by project, cohort, kind and status, and label history read-only inline.
"""
from django.contrib import admin, messages
from django.core.exceptions import ValidationError

from .models import (
    Assignment, Case, Cohort, CohortMembership, Criterion, ImportBatch, Label, LabelHistory, Project, Response,
    RubricVersion,
)


class ReadOnlyMixin:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "blind", "overlap", "coverage_k", "created_at"]
    search_fields = ["slug", "name"]
    list_filter = ["blind"]


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "difficulty", "register", "position"]
    list_filter = ["project", "difficulty", "register"]
    search_fields = ["external_id", "prompt"]
    list_select_related = ["project"]


@admin.register(RubricVersion)
class RubricVersionAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["content_hash", "project", "case", "is_current", "created_at"]
    list_filter = ["project", "is_current"]
    search_fields = ["content_hash", "case__external_id"]
    list_select_related = ["project", "case"]


@admin.register(Criterion)
class CriterionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "case", "kind", "weight", "min_evidence"]
    list_filter = ["project", "kind"]
    search_fields = ["external_id", "text"]
    list_select_related = ["project", "case"]
    readonly_fields = ["rubric_version"]


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "case", "model", "author_kind"]
    list_filter = ["project", "author_kind", "model"]
    search_fields = ["external_id", "text", "case__external_id"]
    list_select_related = ["project", "case"]


class MembershipInline(admin.TabularInline):
    model = CohortMembership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Cohort)
class CohortAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "position"]
    list_filter = ["project"]
    search_fields = ["name"]
    inlines = [MembershipInline]
    actions = ["assign_round_robin"]

    @admin.action(description="Assign every response to the selected cohorts' annotators (balanced, project overlap)")
    def assign_round_robin(self, request, queryset):
        from .assignments import assignments_create

        for cohort in queryset.select_related("project"):
            try:
                created = assignments_create(cohort=cohort)
                self.message_user(request, f"{cohort}: {len(created)} assignments created.")
            except ValidationError as exc:
                self.message_user(request, f"{cohort}: {'; '.join(exc.messages)}", level=messages.ERROR)


@admin.register(CohortMembership)
class CohortMembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "cohort", "role", "project"]
    list_filter = ["project", "cohort", "role"]
    search_fields = ["user__username"]
    list_select_related = ["user", "cohort__project", "project"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["response", "annotator", "cohort", "status", "active_seconds", "submitted_at"]
    list_filter = ["project", "cohort", "status"]
    search_fields = ["response__external_id", "annotator__username"]
    list_select_related = ["response", "annotator", "cohort__project"]
    raw_id_fields = ["response"]
    actions = ["reopen"]

    def get_readonly_fields(self, request, obj=None):
        # Who labels what changes only through assignment services (overlap, no item twice,
        # reassignment rules); the change form must not bypass them.
        if obj is not None:
            return ["project", "cohort", "response", "annotator", "status", "active_seconds", "submitted_at", "checked_at", "checked_by"]
        return []

    @admin.action(description="Reopen the selected submitted or checked assignments")
    def reopen(self, request, queryset):
        from .assignments import assignment_reopen

        done = 0
        for assignment in queryset:
            try:
                assignment_reopen(assignment=assignment, by=request.user)
                done += 1
            except ValidationError:
                pass
        self.message_user(request, f"{done} assignments reopened.")


class LabelHistoryInline(ReadOnlyMixin, admin.TabularInline):
    model = LabelHistory
    extra = 0
    fields = ["changed_at", "changed_by", "action", "old", "new", "note"]
    readonly_fields = fields


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    list_display = ["response", "criterion", "cohort", "annotator", "role", "verdict", "option_label", "value", "revision"]
    list_filter = ["project", "cohort", "role", "verdict"]
    search_fields = ["response__external_id", "criterion__external_id", "annotator__username"]
    list_select_related = ["response", "criterion", "cohort__project", "annotator"]
    raw_id_fields = ["response", "criterion", "assignment"]
    readonly_fields = ["rubric_version", "import_batch", "revision", "created_at", "updated_at"]
    inlines = [LabelHistoryInline]

    def save_model(self, request, obj, form, change):
        # Edits from the admin go through the service so that they are kept in the history.
        from .services import label_save

        label_save(
            response=obj.response, criterion=obj.criterion, cohort=obj.cohort, annotator=obj.annotator,
            changed_by=request.user, role=obj.role, verdict=obj.verdict, option_label=obj.option_label,
            value=obj.value if obj.option_label is None else None, rationale=obj.rationale, evidence=obj.evidence,
            assignment=obj.assignment, action="admin",
        )


@admin.register(LabelHistory)
class LabelHistoryAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["label", "action", "changed_by", "changed_at"]
    list_filter = ["action"]
    search_fields = ["label__response__external_id", "changed_by__username"]
    list_select_related = ["label__response", "label__criterion", "label__annotator", "changed_by"]


@admin.register(ImportBatch)
class ImportBatchAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["project", "bundle_sha256", "imported_by", "created_at", "counts"]
    list_filter = ["project"]
