"""The annotator's REST API: their own assignments, one assignment's case and rubric, saving a
label and submitting. It goes through the same fetch-and-authorize selectors and services as the
pages, so independence and blinding hold here too: another user's assignment is a 404, labels
are only the caller's own, and in a blind project no field carries the source model.
"""
import math

import django_filters
from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import generics, serializers, status
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from evalsite.api_errors import django_refusal
from evalsite.api_filters import StrictFilterSet
from evalsite.api_inputs import JsonInput
from evalsite.api_pagination import Pagination

from . import selectors
from .assignments import assignment_submit
from .labels import BATCH_MAX, MAX_QUOTE, MAX_RATIONALE
from .markdown import markdown_render
from .models import Assignment
from .services import BatchRefused, LabelConflict, label_record, labels_record_batch
from .vocabulary import VERDICTS

REVISION_HELP = ("The label's revision the caller last read, 0 for a label not saved yet. Required: a save "
                 "made without knowing the current state would overwrite somebody's newer one (409 when stale).")


def _errors(exc: ValidationError) -> dict:
    return exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}


class AssignmentListApi(generics.ListAPIView):
    """The caller's own assignments, in their order; filters ``project`` (slug) and ``status``."""

    @extend_schema_serializer(component_name="Assignment")  # every view's nested serializer is "Output"
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField(source="pk")
        project = serializers.CharField(source="project.slug")
        case = serializers.CharField(source="response.case.external_id")
        status = serializers.CharField()
        position = serializers.IntegerField()
        decided = serializers.IntegerField()

    class Filter(StrictFilterSet):
        project = django_filters.CharFilter(field_name="project__slug")
        status = django_filters.ChoiceFilter(choices=Assignment.STATUSES)

        class Meta:
            model = Assignment
            fields = ["project", "status"]

    serializer_class = OutputSerializer
    filterset_class = Filter
    pagination_class = Pagination

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Assignment.objects.none()
        return selectors.assignments_for_annotator(user=self.request.user)


class LabelOutputSerializer(serializers.Serializer):
    criterion = serializers.IntegerField(source="criterion_id")
    verdict = serializers.CharField(allow_null=True)
    option = serializers.CharField(source="option_label", allow_null=True)
    value = serializers.FloatField(allow_null=True)
    rationale = serializers.CharField()
    evidence = serializers.ListField(child=serializers.CharField())
    revision = serializers.IntegerField()


class AssignmentDetailApi(APIView):
    class CriterionSerializer(serializers.Serializer):
        id = serializers.IntegerField(source="pk")
        criterion_id = serializers.CharField(source="external_id")
        text = serializers.CharField()
        kind = serializers.CharField()
        options = serializers.SerializerMethodField()

        def get_options(self, criterion):
            return [{"label": o["label"], "value": o["value"], "na": o.get("na", False)} for o in criterion.options]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, assignment_id: int):
        assignment = selectors.assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
        data = selectors.labeling_page_data(assignment=assignment)
        case, project, response = data["case"], data["project"], assignment.response
        body = {
            "id": assignment.pk, "project": project.slug, "status": assignment.status,
            "case": {"case_id": case.external_id, "prompt": case.prompt, "messages": case.messages,
                     "reference_answer": case.reference_answer if project.show_reference_answer else None},
            "response": {"text": response.text, "html": str(markdown_render(response.text))},
            "criteria": self.CriterionSerializer([row.criterion for row in data["rows"]], many=True).data,
            "labels": LabelOutputSerializer([row.label for row in data["rows"] if row.label], many=True).data,
            "decided": data["decided"], "total": data["total"],
        }
        if not project.blind:
            body["response"]["model"] = response.model
        return ApiResponse(body)


class LabelSaveApi(APIView):
    class InputSerializer(JsonInput):
        assignment = serializers.IntegerField(help_text="The assignment's id (404 when it is not the caller's).")
        criterion = serializers.IntegerField(help_text="The criterion's id in the assignment's rubric.")
        verdict = serializers.ChoiceField(choices=VERDICTS, required=False, allow_null=True)
        option = serializers.CharField(max_length=200, required=False, allow_null=True)
        value = serializers.FloatField(required=False, allow_null=True,
                                       help_text="For an ordinal criterion: a value between its lowest and highest option.")
        rationale = serializers.CharField(max_length=MAX_RATIONALE, required=False, allow_blank=True, trim_whitespace=False)
        evidence_add = serializers.CharField(max_length=MAX_QUOTE, required=False)
        evidence_remove = serializers.CharField(max_length=MAX_QUOTE, required=False)
        revision = serializers.IntegerField(min_value=0, max_value=2**31 - 1, help_text=REVISION_HELP)

    @extend_schema(request=InputSerializer, responses={200: LabelOutputSerializer, 400: OpenApiTypes.OBJECT,
                                                       404: OpenApiTypes.OBJECT, 409: OpenApiTypes.OBJECT})
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            _, _, label = label_record(
                assignment_id=data["assignment"], criterion_id=data["criterion"], user=request.user,
                verdict=data.get("verdict"), option_label=data.get("option"), value=data.get("value"),
                rationale=data.get("rationale"),
                evidence_add=data.get("evidence_add"), evidence_remove=data.get("evidence_remove"),
                expected_revision=data.get("revision"),
            )
        except LabelConflict as exc:
            return ApiResponse(_errors(exc), status=status.HTTP_409_CONFLICT)
        except ValidationError as exc:
            return django_refusal(exc)  # 400; 409 for a submitted (read-only) assignment
        return ApiResponse(LabelOutputSerializer(label).data, status=status.HTTP_200_OK)


class LabelBatchApi(APIView):
    """Several decisions of one assignment in one request, all or none: a stale revision or an
    invalid decision names its criterion and nothing is saved (409 / 400)."""

    @extend_schema_serializer(component_name="BatchDecision")
    class DecisionSerializer(JsonInput):
        criterion = serializers.IntegerField()
        verdict = serializers.ChoiceField(choices=VERDICTS, required=False, allow_null=True)
        option = serializers.CharField(max_length=200, required=False, allow_null=True)
        value = serializers.FloatField(required=False, allow_null=True)
        rationale = serializers.CharField(max_length=MAX_RATIONALE, required=False, allow_blank=True, trim_whitespace=False)
        evidence_add = serializers.CharField(max_length=MAX_QUOTE, required=False)
        evidence_remove = serializers.CharField(max_length=MAX_QUOTE, required=False)
        revision = serializers.IntegerField(min_value=0, max_value=2**31 - 1, help_text=REVISION_HELP)

    @extend_schema_serializer(component_name="LabelBatch")
    class InputSerializer(serializers.Serializer):
        labels = serializers.ListField(allow_empty=False, max_length=BATCH_MAX)  # each item: DecisionSerializer

    @extend_schema(request=DecisionSerializer(many=True, allow_empty=False, max_length=BATCH_MAX), responses={
        200: LabelOutputSerializer(many=True), 400: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT, 409: OpenApiTypes.OBJECT})
    def post(self, request, assignment_id: int):
        """Body: ``{"labels": [decision, ...]}`` (or the bare list); answer: the labels in order. Another
        user's assignment is a 404 whatever the body (checked before a refusal of the body; on the way
        to a save, by the write service's lock of it)."""
        body = request.data
        labels = body if type(body) is list else body.get("labels") if type(body) is dict else None
        if not (type(labels) is list and 0 < len(labels) <= BATCH_MAX):
            # A list of the right length is what InputSerializer would pass on unchanged; anything
            # else it decides, and words the refusal.
            outer = self.InputSerializer(data={"labels": body} if isinstance(body, list) else body)
            if not outer.is_valid():
                selectors.assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
                return ApiResponse(outer.errors, status=status.HTTP_400_BAD_REQUEST)
            labels = outer.validated_data["labels"]
        decisions = decisions_well_formed(labels)
        if decisions is not None:
            return self._save(request, assignment_id, decisions)
        items = self.DecisionSerializer(data=labels, many=True)
        if not items.is_valid():
            selectors.assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
            errors = items.errors  # by index: a dict of the refused ones, or a list with an entry each
            pairs = errors.items() if isinstance(errors, dict) else enumerate(errors)
            problems = {f"labels[{i}]" + (f" (criterion {labels[i]['criterion']})"
                                          if isinstance(labels[i], dict) and "criterion" in labels[i] else ""): e
                        for i, e in pairs if e}
            return ApiResponse(problems, status=status.HTTP_400_BAD_REQUEST)
        decisions = [{
            "criterion_id": d["criterion"], "verdict": d.get("verdict"), "option_label": d.get("option"),
            "value": d.get("value"), "rationale": d.get("rationale"), "evidence_add": d.get("evidence_add"),
            "evidence_remove": d.get("evidence_remove"), "expected_revision": d.get("revision"),
        } for d in items.validated_data]
        return self._save(request, assignment_id, decisions)

    def _save(self, request, assignment_id: int, decisions: list[dict]):
        try:
            labels = labels_record_batch(assignment_id=assignment_id, user=request.user, decisions=decisions, rows=True)
        except BatchRefused as exc:
            answer = django_refusal(exc)  # 409 for a stale revision, 404 for a criterion not of the assignment
            answer.data.update({"index": exc.index, "criterion": exc.criterion_id})
            if exc.conflict and exc.error.label is not None:
                answer.data["current"] = LabelOutputSerializer(exc.error.label).data
            return answer
        except ValidationError as exc:
            return django_refusal(exc)
        return ApiResponse([label_output(label) for label in labels])


def label_output(label) -> dict:
    """``LabelOutputSerializer``'s answer for one label, built directly (a batch answers 30 at once);
    ``test_label_output_matches_its_serializer`` keeps the two the same."""
    return {"criterion": label.criterion_id, "verdict": label.verdict, "option": label.option_label,
            "value": None if label.value is None else float(label.value), "rationale": label.rationale,
            "evidence": [str(q) for q in label.evidence or []], "revision": label.revision}


_DECISION_TEXTS = {"option": 200, "rationale": MAX_RATIONALE, "evidence_add": MAX_QUOTE, "evidence_remove": MAX_QUOTE}
_DECISION_KEYS = {"criterion", "verdict", "value", "revision", *_DECISION_TEXTS}


def _plain_text(value, limit: int, *, keep_as_is: bool) -> bool:
    """A string DRF's CharField would take unchanged: within its length, no NUL or surrogate
    characters and, for a field that trims and refuses blanks (``keep_as_is`` False), not blank and
    without surrounding white space."""
    if type(value) is not str or len(value) > limit or "\x00" in value:
        return False
    if not keep_as_is and (value != value.strip() or not value):
        return False
    return not any("\ud800" <= ch <= "\udfff" for ch in value)


def decisions_well_formed(items: list) -> list[dict] | None:
    """The batch's decisions as ``labels_record_batch`` takes them when every item is plainly well
    formed (JSON integers, known verdicts, finite numbers, strings DRF would keep as they are), or
    None: then ``DecisionSerializer`` decides, and words its refusals. It accepts a subset of what
    the serializer accepts and yields the same values (``test_well_formed_decisions_agree_with_the_serializer``);
    it exists because validating 30 decisions field by field cost a batch more than its writes."""
    out = []
    for item in items:
        if type(item) is not dict or not item.keys() <= _DECISION_KEYS:
            return None
        criterion, revision = item.get("criterion"), item.get("revision")
        if type(criterion) is not int or not -2**63 <= criterion < 2**63:
            return None
        if type(revision) is not int or not 0 <= revision <= 2**31 - 1:
            return None
        verdict = item.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            return None
        value = item.get("value")
        if value is not None and (type(value) not in (int, float) or not math.isfinite(value) or abs(value) > 1e300):
            return None
        for name, limit in _DECISION_TEXTS.items():
            text = item.get(name)
            if text is None and name in item and name != "option":
                return None  # DRF refuses null for these
            if text is not None and not _plain_text(text, limit, keep_as_is=name == "rationale"):
                return None
        out.append({"criterion_id": criterion, "verdict": verdict, "option_label": item.get("option"),
                    "value": None if value is None else float(value), "rationale": item.get("rationale"),
                    "evidence_add": item.get("evidence_add"), "evidence_remove": item.get("evidence_remove"),
                    "expected_revision": revision})
    return out


class AssignmentSubmitApi(APIView):
    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT, 409: OpenApiResponse(
        OpenApiTypes.OBJECT, description="not submittable as it stands: criteria undecided, evidence missing, "
                                         "or submitted already")})
    def post(self, request, assignment_id: int):
        """Submit the assignment; it takes no body, so a refusal is always the assignment's state (409)."""
        assignment = selectors.assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
        try:
            assignment = assignment_submit(assignment=assignment, user=request.user)
        except ValidationError as exc:
            return django_refusal(exc, status.HTTP_409_CONFLICT)
        return ApiResponse({"id": assignment.pk, "status": assignment.status})
