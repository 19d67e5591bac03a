"""Annotator quality over the API (issue 28): each annotator's agreement with gold on hidden check
items, its drift and the alert, kappa with their cohort and time per item (managers); the project's
quality settings (PATCH) and seeding check items (POST, managers); and an annotator's own feedback,
when the project allows it (``annotation.access`` for managers, the cohort membership for annotators).
Nothing an annotator can read names a check item."""
from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.access import project_get_for
from annotation.models import Cohort, Project
from evalsite.api_inputs import JsonInput
from grading.goldcheck.rules import MAX_COUNT, MAX_RATE
from grading.goldcheck.selectors import annotator_feedback, annotator_quality, check_counts
from grading.goldcheck.services import checks_seed, quality_settings_update

from .common import not_found, responses, validation_error, write_responses


class QualitySettings(serializers.Serializer):
    check_rate = serializers.FloatField(min_value=0, max_value=MAX_RATE,
                                        help_text="Share of each annotator's queue made of hidden check items; 0 = off.")
    check_alert_threshold = serializers.FloatField(min_value=0, max_value=1,
                                                   help_text="Agreement with gold below which an annotator is flagged.")
    check_min_items = serializers.IntegerField(min_value=1, max_value=MAX_COUNT,
                                               help_text="Submitted check items needed before an alert can fire.")
    check_window = serializers.IntegerField(min_value=1, max_value=MAX_COUNT,
                                            help_text="Check items in the rolling window (submission order).")
    check_feedback = serializers.BooleanField(help_text="Annotators may see their own agreement with reference answers.")


class QualitySettingsInput(JsonInput, QualitySettings):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


class DriftPoint(serializers.Serializer):
    item = serializers.IntegerField(help_text="The check item's number in the annotator's submission order.")
    agreement = serializers.FloatField(allow_null=True, help_text="Agreement over the window ending at this item.")


class AnnotatorQualityOutput(serializers.Serializer):
    annotator = serializers.CharField()
    cohort = serializers.CharField()
    check_items = serializers.IntegerField(help_text="Submitted check items.")
    check_decisions = serializers.IntegerField(help_text="Gold-decided criteria compared on them.")
    agreement = serializers.FloatField(allow_null=True, help_text="Share of those decisions that match gold.")
    window_items = serializers.IntegerField()
    window_agreement = serializers.FloatField(allow_null=True, help_text="Agreement over the last window of check items.")
    drift = DriftPoint(many=True)
    kappa_with_cohort = serializers.FloatField(allow_null=True, help_text=(
        "Cohen's kappa of the annotator's final regular labels with the decision of the rest of their cohort."))
    kappa_n = serializers.IntegerField()
    items_submitted = serializers.IntegerField()
    median_seconds = serializers.FloatField(allow_null=True)
    mean_seconds = serializers.FloatField(allow_null=True)
    alert = serializers.BooleanField()
    alert_reason = serializers.CharField()


QualityOutput = inline_serializer("AnnotatorQualityReport", {
    "project": serializers.CharField(), "settings": QualitySettings(),
    "check_items": inline_serializer("CheckItemCounts", {"seeded": serializers.IntegerField(),
                                                         "submitted": serializers.IntegerField()}),
    "annotators": AnnotatorQualityOutput(many=True),
})


class SeedInput(JsonInput):
    seed = serializers.IntegerField(default=0, min_value=-(2**31), max_value=2**31 - 1,
                                    help_text="The same seed draws the same check items.")
    cohort = serializers.CharField(max_length=100, required=False, help_text="Only this cohort's annotators.")


SeedOutput = inline_serializer("CheckSeedResult", {
    "created": serializers.IntegerField(), "requeued": serializers.IntegerField(),
    "per_annotator": serializers.DictField(child=serializers.IntegerField()),
    "eligible": serializers.IntegerField(help_text="Responses with gold decisions that check items are drawn from."),
    "seed": serializers.IntegerField(), "rate": serializers.FloatField(),
})

FeedbackOutput = inline_serializer("AnnotatorFeedback", {
    "as_of": serializers.DateField(help_text="Items submitted before this day count."),
    "enough": serializers.BooleanField(), "reference_items_at_least": serializers.IntegerField(),
    "agreement": serializers.FloatField(allow_null=True), "recent_agreement": serializers.FloatField(allow_null=True),
    "threshold": serializers.FloatField(), "below_threshold": serializers.BooleanField(),
})


def _settings(project: Project) -> dict:
    return {name: getattr(project, name) for name in QualitySettings().fields}


def _report(project: Project) -> dict:
    return {"project": project.slug, "settings": _settings(project), "check_items": check_counts(project=project),
            "annotators": [row.as_json() for row in annotator_quality(project=project)]}


class AnnotatorQualityApi(APIView):
    """Every annotator's quality (managers); PATCH changes the project's quality settings (audited)."""

    @extend_schema(responses=responses(QualityOutput))
    def get(self, request, slug: str):
        project = project_get_for(user=request.user, action="manage", slug=slug)
        return ApiResponse(_report(project))

    @extend_schema(request=QualitySettingsInput, responses=write_responses(QualityOutput))
    def patch(self, request, slug: str):
        project = project_get_for(user=request.user, action="manage", slug=slug)
        data = QualitySettingsInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            quality_settings_update(project=project, data=dict(data.validated_data), by=request.user)
        except ValidationError as exc:
            return validation_error(exc)
        project.refresh_from_db()
        return ApiResponse(_report(project))


class CheckSeedApi(APIView):
    @extend_schema(request=SeedInput, responses=write_responses({201: SeedOutput}))
    def post(self, request, slug: str):
        """Seed hidden check items into the annotators' queues at the project's rate (idempotent)."""
        project = project_get_for(user=request.user, action="manage", slug=slug)
        data = SeedInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        cohort = None
        if d.get("cohort"):
            cohort = Cohort.objects.filter(project=project, name=d["cohort"]).first()
            if cohort is None:
                return not_found("cohort", f"no cohort {d['cohort']!r} in this project")
        try:
            result = checks_seed(project=project, by=request.user, seed=d["seed"], cohort=cohort)
        except ValidationError as exc:
            return validation_error(exc)
        return ApiResponse(result, status=status.HTTP_201_CREATED)


class MyFeedbackApi(APIView):
    @extend_schema(responses=responses(FeedbackOutput))
    def get(self, request, slug: str):
        """The caller's own agreement with reference answers, when the project shows it (403 when not;
        404 when the caller annotates nothing there). Counted up to the end of the previous day."""
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            return not_found("project", "no such project")
        return ApiResponse(annotator_feedback(project=project, user=request.user))
