"""Adjudication through the API (adjudicators and managers): the project's adjudications (read,
filtered) and recording one decision with its confidence, category and note, guarded by the
revision the caller read (``adjudication_record``, the page's service). The queue itself is the
``adjudication_queue`` report endpoint."""
import django_filters
from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response as ApiResponse

from annotation import vocabulary
from annotation.models import Criterion, Response
from annotation.vocabulary import VERDICTS
from evalsite.api_filters import StrictFilterSet
from evalsite.api_inputs import JsonInput

from ..adjudication.services import AdjudicationConflict, adjudication_record
from ..models import Adjudication
from .common import not_found, responses, validation_error, write_responses
from .projects import _ProjectList


class AdjudicationOutput(serializers.ModelSerializer):
    response_id = serializers.CharField(source="response.external_id")
    criterion_id = serializers.CharField(source="criterion.external_id")
    verdict = serializers.ChoiceField(choices=VERDICTS, allow_null=True)
    option = serializers.CharField(source="option_label", allow_null=True)
    adjudicator = serializers.CharField(source="adjudicator.username", allow_null=True, default=None)
    provenance = serializers.SerializerMethodField()

    class Meta:
        model = Adjudication
        fields = ["id", "response_id", "criterion_id", "verdict", "option", "value", "provenance", "confidence",
                  "category", "note", "adjudicator", "revision", "updated_at"]

    @extend_schema_field(serializers.ChoiceField(choices=[vocabulary.ADJUDICATED]))
    def get_provenance(self, adjudication) -> str:
        """What gold says of an item an adjudicator decided (the same word as gold.jsonl's)."""
        return vocabulary.ADJUDICATED


class AdjudicationFilter(StrictFilterSet):
    response_id = django_filters.CharFilter(field_name="response__external_id")
    criterion_id = django_filters.CharFilter(field_name="criterion__external_id")

    class Meta:
        model = Adjudication
        fields = ["response_id", "criterion_id", "category", "confidence"]


class AdjudicationInput(JsonInput):
    response_id = serializers.CharField(max_length=200)
    criterion_id = serializers.CharField(max_length=200)
    verdict = serializers.ChoiceField(choices=VERDICTS, required=False, allow_null=True)
    option = serializers.CharField(max_length=200, required=False, allow_null=True)
    value = serializers.FloatField(required=False, allow_null=True)
    confidence = serializers.ChoiceField(choices=Adjudication.CONFIDENCES, required=False, allow_blank=True)
    category = serializers.ChoiceField(choices=Adjudication.CATEGORIES, required=False, allow_blank=True)
    note = serializers.CharField(max_length=5000, required=False, allow_blank=True)
    revision = serializers.IntegerField(min_value=0, max_value=2**31 - 1,
                                        help_text="The revision read (0: none yet); a stale one is refused with 409.")


class AdjudicationListApi(_ProjectList):
    action_needed = "adjudicate"
    serializer_class = AdjudicationOutput
    filterset_class = AdjudicationFilter

    def project_queryset(self, project):
        return (Adjudication.objects.filter(project=project)
                .select_related("response", "criterion", "adjudicator").order_by("id"))

    @extend_schema(responses=responses(AdjudicationOutput(many=True)))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(request=AdjudicationInput, responses=write_responses(
        AdjudicationOutput, {409: OpenApiResponse(OpenApiTypes.OBJECT, description="changed meanwhile: the current revision differs")}))
    def post(self, request, slug: str):
        """Record the final decision of (response, criterion); the gold set takes it at once."""
        project = self.project()
        data = AdjudicationInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        response = Response.objects.filter(project=project, external_id=d["response_id"]).first()
        if response is None:
            return not_found("response_id", f"no response {d['response_id']!r} in this project")
        criterion = Criterion.objects.filter(project=project, external_id=d["criterion_id"]).first()
        if criterion is None:
            return not_found("criterion_id", f"no criterion {d['criterion_id']!r} in this project")
        try:
            adjudication = adjudication_record(
                response=response, criterion=criterion, user=request.user, verdict=d.get("verdict"),
                option_label=d.get("option"), value=d.get("value"), confidence=d.get("confidence"),
                category=d.get("category"), note=d.get("note"), expected_revision=d["revision"])
        except AdjudicationConflict as exc:
            return validation_error(exc, code=status.HTTP_409_CONFLICT)
        except ValidationError as exc:
            return validation_error(exc)
        adjudication = Adjudication.objects.select_related("response", "criterion", "adjudicator").get(pk=adjudication.pk)
        return ApiResponse(AdjudicationOutput(adjudication).data)
