"""Admin pages for the annotation models, built for researchers: search by external id and
text, filters by project, cohort, kind and status, and label history read-only inline.

Criteria are read-only here: a rubric changes only by freezing a new version (the "New
version" form of a rubric version, or an import), so a stored hash always matches its
criteria and old labels keep the version they were made against. Every admin class that
edits a project's data stamps the project (``ProjectDataAdmin``), so its cached reports go
stale and other projects' do not.
"""
import json

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import ValidationError
from django.db.models import BooleanField, ExpressionWrapper
from django.http import Http404
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from .access import project_check, projects_for, user_may
from .assignments import assignment_reopen, assignments_create
from .models import (
    Assignment,
    AuditEvent,
    Case,
    CaseQuality,
    Cohort,
    CohortMembership,
    Criterion,
    ImportBatch,
    Label,
    LabelHistory,
    Project,
    ProjectRole,
    Response,
    RubricVersion,
)
from .projects import ROLE_NONE, project_role_set, stratum_groups_clean
from .rubrics import case_rubric_versions_sync, rubric_version_new
from .selectors.final import label_check_q, label_draft_q, label_final_q
from .services import label_save, labels_delete, project_data_touch


class ProjectDataAdmin:
    """Admin classes of a project's data. Access follows the project roles (``annotation.access``):
    superusers see everything; any other staff user sees and edits only the objects of the
    projects they manage, whatever their Django model permissions, and nothing else. Every object
    added, changed or deleted stamps its project (the report cache of that project, and only that
    one, goes stale). ``project_path`` is the lookup from the model to its project."""

    project_path = "project"

    def project_id_of(self, obj):
        return getattr(obj, "project_id", None)

    def _managed(self, request):
        return projects_for(user=request.user, action="manage")

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.project_path}__in": self._managed(request)})

    def _may(self, request, obj) -> bool:
        if obj is None:
            return self._managed(request).exists()
        return user_may(project=self.project_id_of(obj), user=request.user, action="manage")

    def has_module_permission(self, request):
        return request.user.is_superuser or self._managed(request).exists()

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) if request.user.is_superuser else self._may(request, obj)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) if request.user.is_superuser else self._may(request, obj)

    def has_add_permission(self, request, obj=None):
        return super().has_add_permission(request) if request.user.is_superuser else self._may(request, None)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) if request.user.is_superuser else self._may(request, obj)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "project" and not request.user.is_superuser:
            kwargs["queryset"] = self._managed(request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def log_addition(self, request, obj, message):
        project_data_touch(project_ids=[self.project_id_of(obj)])
        return super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        project_data_touch(project_ids=[self.project_id_of(obj)])
        return super().log_change(request, obj, message)

    def log_deletions(self, request, queryset):
        project_data_touch(project_ids=[self.project_id_of(obj) for obj in queryset])
        return super().log_deletions(request, queryset)


class ReadOnlyMixin:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ProjectAdminForm(forms.ModelForm):
    """The project's fields, its groups of themes and specialties checked by their one validation."""

    class Meta:
        model = Project
        fields = "__all__"

    def clean_stratum_groups(self):
        try:
            return stratum_groups_clean(self.cleaned_data.get("stratum_groups"))
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc


@admin.register(Project)
class ProjectAdmin(ProjectDataAdmin, admin.ModelAdmin):
    """Projects are created by importing a bundle; managers may edit their own."""

    form = ProjectAdminForm

    list_display = ["slug", "name", "blind", "overlap", "coverage_k", "created_at"]
    search_fields = ["slug", "name"]
    list_filter = ["blind"]
    project_path = "pk"
    readonly_fields = ["blind", "show_reference_answer"]

    def project_id_of(self, obj):
        return obj.pk

    def has_add_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        # Unblinding goes through the settings service (explicit, recorded), never a checkbox here.
        return self.readonly_fields if obj is not None else []


@admin.register(Case)
class CaseAdmin(ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["external_id", "project", "difficulty", "register", "position"]
    list_filter = ["project", "difficulty", "register"]
    search_fields = ["external_id", "prompt"]
    list_select_related = ["project"]
    readonly_fields = ["rubric_version"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        case_rubric_versions_sync(project=obj.project)  # a new case is judged against the project rubric


class NewRubricVersionForm(forms.Form):
    criteria = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 30, "cols": 120, "spellcheck": "false"}),
        help_text="The whole rubric as a JSON list of criteria in bundle form (SPEC §4). Saving freezes it as a new "
                  "version; labels and judgments made against the current version keep it.",
    )

    def clean_criteria(self):
        try:
            return json.loads(self.cleaned_data["criteria"])
        except ValueError as exc:
            raise forms.ValidationError(f"not valid JSON: {exc}") from None
        except RecursionError:
            raise forms.ValidationError("not valid JSON: nested too deeply") from None


@admin.register(RubricVersion)
class RubricVersionAdmin(ReadOnlyMixin, ProjectDataAdmin, admin.ModelAdmin):
    """Versions are immutable; "New version" freezes an edited copy through ``rubric_version_new``."""

    list_display = ["content_hash", "project", "case", "is_current", "created_at"]
    list_filter = ["project", "is_current"]
    search_fields = ["content_hash", "case__external_id"]
    list_select_related = ["project", "case"]
    readonly_fields = ["project", "case", "content_hash", "is_current", "created_at", "content_pretty", "new_version_link"]
    exclude = ["content"]

    @admin.display(description="criteria (canonical JSON)")
    def content_pretty(self, obj):
        return format_html("<pre>{}</pre>", json.dumps(obj.content, indent=2, ensure_ascii=False))

    @admin.display(description="edit")
    def new_version_link(self, obj):
        url = reverse("admin:annotation_rubricversion_new_version", args=[obj.pk])
        return format_html('<a class="button" href="{}">New version of this rubric…</a>', url)

    def get_urls(self):
        new = path("<int:pk>/new-version/", self.admin_site.admin_view(self.new_version_view),
                   name="annotation_rubricversion_new_version")
        return [new, *super().get_urls()]

    def new_version_view(self, request, pk: int):
        version = RubricVersion.objects.select_related("project", "case").filter(pk=pk).first()
        if version is None:
            raise Http404("No such rubric version")
        project_check(project=version.project, user=request.user, action="manage")
        initial = json.dumps(version.content, indent=2, ensure_ascii=False)
        form = NewRubricVersionForm(request.POST or None, initial={"criteria": initial})
        if request.method == "POST" and form.is_valid():
            try:
                new, changed = rubric_version_new(version=version, specs=form.cleaned_data["criteria"], by=request.user)
            except ValidationError as exc:
                form.add_error("criteria", exc.message_dict.get("specs", exc.messages))
            else:
                if changed:
                    project_data_touch(project_ids=[version.project_id])
                    self.message_user(request, f"New rubric version {new.content_hash[:12]} is current; labels and "
                                               "judgments made before keep the version they were made against.")
                else:
                    self.message_user(request, "Nothing changed: that rubric is already the current version.",
                                      level=messages.WARNING)
                return redirect("admin:annotation_rubricversion_change", new.pk)
        context = {**self.admin_site.each_context(request), "title": f"New version of {version}", "form": form,
                   "version": version, "opts": self.model._meta}
        return TemplateResponse(request, "admin/annotation/rubricversion/new_version.html", context)


@admin.register(Criterion)
class CriterionAdmin(ReadOnlyMixin, ProjectDataAdmin, admin.ModelAdmin):
    """Read-only: a criterion changes by a new version of its rubric (link on each criterion)."""

    list_display = ["external_id", "project", "case", "kind", "weight", "min_evidence"]
    list_filter = ["project", "kind"]
    search_fields = ["external_id", "text"]
    list_select_related = ["project", "case"]
    readonly_fields = ["new_version_link"]

    @admin.display(description="edit")
    def new_version_link(self, obj):
        url = reverse("admin:annotation_rubricversion_new_version", args=[obj.rubric_version_id])
        return format_html('<a class="button" href="{}">Edit in a new version of its rubric…</a>', url)


@admin.register(Response)
class ResponseAdmin(ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["external_id", "project", "case", "model", "author_kind"]
    list_filter = ["project", "author_kind", "model"]
    search_fields = ["external_id", "text", "case__external_id"]
    list_select_related = ["project", "case"]


class MembershipInline(admin.TabularInline):
    model = CohortMembership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Cohort)
class CohortAdmin(ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["name", "project", "position"]
    list_filter = ["project"]
    search_fields = ["name"]
    inlines = [MembershipInline]
    actions = ["assign_round_robin"]

    @admin.action(description="Assign every response to the selected cohorts' annotators (balanced, project overlap)")
    def assign_round_robin(self, request, queryset):
        for cohort in queryset.select_related("project"):
            try:
                created = assignments_create(cohort=cohort, by=request.user)
                self.message_user(request, f"{cohort}: {len(created)} assignments created.")
            except ValidationError as exc:
                self.message_user(request, f"{cohort}: {'; '.join(exc.messages)}", level=messages.ERROR)


@admin.register(CohortMembership)
class CohortMembershipAdmin(ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["user", "cohort", "role", "project"]
    list_filter = ["project", "cohort", "role"]
    search_fields = ["user__username"]
    list_select_related = ["user", "cohort__project", "project"]


@admin.register(Assignment)
class AssignmentAdmin(ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["response", "annotator", "cohort", "status", "is_check", "active_seconds", "submitted_at"]
    list_filter = ["project", "cohort", "status", "is_check"]
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

    def delete_model(self, request, obj):
        self.delete_queryset(request, Assignment.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset):
        """A check item's labels go with it (through the label write service, history kept): left
        without their assignment they would read as a manager's final labels."""
        labels = list(Label.objects.filter(assignment__in=queryset.filter(is_check=True)).values_list("pk", flat=True))
        labels_delete(label_ids=labels, user=request.user, note="its check item was deleted")
        super().delete_queryset(request, queryset)

    @admin.action(description="Reopen the selected submitted or checked assignments")
    @admin.action(description="Reopen (asks for the reason the annotators are shown)")
    def reopen(self, request, queryset):
        """A page asking for the reason first (the reopen form requires one), then reopens."""
        reason = (request.POST.get("reason") or "").strip()
        if "apply" not in request.POST or not reason:
            return TemplateResponse(request, "admin/annotation/assignment/reopen.html", {
                **self.admin_site.each_context(request), "opts": self.model._meta, "assignments": queryset,
                "selected": request.POST.getlist(ACTION_CHECKBOX_NAME), "reason": reason,
                "error": "Give the reason: the annotators are shown it." if "apply" in request.POST else "",
            })
        done = 0
        for assignment in queryset:
            try:
                assignment_reopen(assignment=assignment, by=request.user, reason=reason)
                done += 1
            except ValidationError:
                pass
        self.message_user(request, f"{done} assignments reopened.")


class LabelHistoryInline(ReadOnlyMixin, admin.TabularInline):
    model = LabelHistory
    extra = 0
    fields = ["changed_at", "changed_by", "action", "old", "new", "note"]
    readonly_fields = fields


class LabelAdminForm(forms.ModelForm):
    """The admin's label form carries the revision it was opened at, so that saving it over a change
    somebody made meanwhile (a click on the labeling page, an import) is refused, not silent."""

    seen_revision = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    class Meta:
        model = Label
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["seen_revision"].initial = self.instance.revision if self.instance.pk else 0

    def clean(self):
        data = super().clean()
        if self.instance.pk:
            seen = data.get("seen_revision")
            now = Label.objects.filter(pk=self.instance.pk).values_list("revision", flat=True).first()
            if seen is None or seen != now:
                raise ValidationError(f"This label was changed since you opened it (now revision {now}); "
                                      "reload the page to see the change, then edit it again.")
        return data


class LabelFinalFilter(admin.SimpleListFilter):
    """Final labels (they count), drafts (an item not submitted yet, a review not completed) or labels of
    hidden check items (they never count; annotator quality)."""

    title = "final or draft"
    parameter_name = "final"

    def lookups(self, request, model_admin):
        return [("yes", "final"), ("no", "draft"), ("check", "check item")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(label_final_q())
        if self.value() == "no":
            return queryset.filter(label_draft_q())
        if self.value() == "check":
            return queryset.filter(label_check_q())
        return queryset


@admin.register(Label)
class LabelAdmin(ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["response", "criterion", "cohort", "annotator", "role", "verdict", "option_label", "value", "revision",
                    "final_or_draft"]
    list_filter = ["project", LabelFinalFilter, "cohort", "role", "verdict"]
    search_fields = ["response__external_id", "criterion__external_id", "annotator__username"]
    list_select_related = ["response", "criterion", "cohort__project", "annotator"]
    raw_id_fields = ["response", "criterion", "assignment"]
    readonly_fields = ["rubric_version", "import_batch", "revision", "created_at", "updated_at"]
    inlines = [LabelHistoryInline]
    form = LabelAdminForm

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            is_final=ExpressionWrapper(label_final_q(), output_field=BooleanField()),
            is_check=ExpressionWrapper(label_check_q(), output_field=BooleanField()))

    @admin.display(description="counts", ordering="is_final")
    def final_or_draft(self, obj):
        return "check item" if obj.is_check else "final" if obj.is_final else "draft"

    def save_model(self, request, obj, form, change):
        """Through the one write service (validation, the revision the form was opened at, history).
        A change that slipped in between the form's check and this save is refused there too."""
        try:
            label = label_save(
                response=obj.response, criterion=obj.criterion, cohort=obj.cohort, annotator=obj.annotator,
                changed_by=request.user, role=obj.role, verdict=obj.verdict, option_label=obj.option_label,
                value=obj.value if obj.option_label is None and obj.verdict is None else None,
                rationale=obj.rationale, evidence=obj.evidence, time_spent_seconds=obj.time_spent_seconds,
                assignment=obj.assignment, action="admin", expected_revision=form.cleaned_data.get("seen_revision") or 0,
            )
        except ValidationError as exc:
            messages.error(request, "Not saved: " + "; ".join(exc.messages))
            return
        obj.pk, obj.revision = label.pk, label.revision

    def delete_model(self, request, obj):
        labels_delete(label_ids=[obj.pk], user=request.user, note="deleted in the admin")

    def delete_queryset(self, request, queryset):
        labels_delete(label_ids=list(queryset.values_list("pk", flat=True)), user=request.user,
                      note="deleted in the admin")


@admin.register(LabelHistory)
class LabelHistoryAdmin(ReadOnlyMixin, ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["label", "action", "changed_by", "changed_at"]
    list_filter = ["action"]
    search_fields = ["label__response__external_id", "changed_by__username"]
    list_select_related = ["label__response", "label__criterion", "label__annotator", "changed_by"]


@admin.register(ImportBatch)
class ImportBatchAdmin(ReadOnlyMixin, ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["project", "bundle_sha256", "imported_by", "created_at", "counts"]
    list_select_related = ["project", "imported_by"]  # a nullable key: the admin's default would not join it
    list_filter = ["project"]


@admin.register(ProjectRole)
class ProjectRoleAdmin(ProjectDataAdmin, admin.ModelAdmin):
    """Roles; every change goes through ``projects.project_role_set`` (recorded in the audit trail)."""

    list_display = ["user", "role", "project", "created_at"]
    list_filter = ["project", "role"]
    search_fields = ["user__username"]
    autocomplete_fields = ["user"]

    def get_readonly_fields(self, request, obj=None):
        return ["project", "user"] if obj is not None else []  # a role changes; another person is another role

    def save_model(self, request, obj, form, change):
        saved = project_role_set(project=obj.project, username=obj.user.username, role=obj.role, by=request.user)
        obj.pk = saved.pk if saved else obj.pk

    def delete_model(self, request, obj):
        project_role_set(project=obj.project, username=obj.user.username, role=ROLE_NONE, by=request.user)

    def delete_queryset(self, request, queryset):
        for obj in queryset.select_related("project", "user"):
            self.delete_model(request, obj)


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyMixin, ProjectDataAdmin, admin.ModelAdmin):
    list_display = ["created_at", "project", "actor", "action", "target"]
    list_filter = ["project", "action"]
    search_fields = ["target", "actor__username", "note"]
    list_select_related = ["project", "actor"]


@admin.register(CaseQuality)
class CaseQualityAdmin(ReadOnlyMixin, ProjectDataAdmin, admin.ModelAdmin):
    """Read-only here: screening and audit outcomes are recorded by their commands and the project page."""

    list_display = ["case", "project", "flagged", "screen_accuracy_pct", "audit_sampled", "audit_outcome", "excluded"]
    list_filter = ["project", "flagged", "audit_sampled", "audit_outcome", "excluded"]
    search_fields = ["case__external_id", "audit_note"]
    list_select_related = ["case", "project"]
