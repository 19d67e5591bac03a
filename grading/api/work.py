"""Managers' work endpoints: the project's assignments (filtered, paginated), creating them for a
cohort (the same balanced or seeded-random draw as the page), reassigning one, and routing a cohort's
next labels (``grading.routing``). Annotators'
own endpoints (their items, labels, submit) are ``annotation.apis``."""
import django_filters
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.http import Http404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.access import project_get_for
from annotation.assignments import METHODS, ROUND_ROBIN, assignment_reassign, project_assign
from annotation.models import Assignment, Cohort
from evalsite.api_filters import StrictFilterSet
from evalsite.api_inputs import JsonInput
from grading.routing.services import MAX_SEED, routing_extend

from .common import CONFLICT_ANSWER, not_found, responses, validation_error, write_responses
from .projects import _ProjectList


class AssignmentOutput(serializers.ModelSerializer):
    cohort = serializers.CharField(source="cohort.name")
    annotator = serializers.CharField(source="annotator.username")
    response_id = serializers.CharField(source="response.external_id")
    case_id = serializers.CharField(source="response.case.external_id")

    class Meta:
        model = Assignment
        fields = ["id", "cohort", "annotator", "response_id", "case_id", "status", "position", "active_seconds",
                  "created_at", "submitted_at", "checked_at", "reopen_reason", "is_check"]


class AssignmentFilter(StrictFilterSet):
    cohort = django_filters.CharFilter(field_name="cohort__name")
    annotator = django_filters.CharFilter(field_name="annotator__username")
    status = django_filters.ChoiceFilter(choices=Assignment.STATUSES)

    class Meta:
        model = Assignment
        fields = ["cohort", "annotator", "status"]


class AssignInput(JsonInput):
    cohort = serializers.CharField(max_length=100, help_text="The cohort's name.")
    overlap = serializers.IntegerField(min_value=1, max_value=50, required=False,
                                       help_text="Annotators per response (default: the project's overlap).")
    method = serializers.ChoiceField(choices=METHODS, default=ROUND_ROBIN)
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=-(2**31), max_value=2**31 - 1)


AssignOutput = inline_serializer("AssignResult", {"created": serializers.IntegerField(),
                                                  "assignments": AssignmentOutput(many=True)})


class ProjectAssignmentListApi(_ProjectList):
    """The project's assignments; POST creates them for a cohort (managers)."""
    action_needed = "manage"
    serializer_class = AssignmentOutput
    filterset_class = AssignmentFilter

    def project_queryset(self, project):
        return (Assignment.objects.filter(project=project).select_related("cohort", "annotator", "response__case")
                .order_by("cohort__position", "annotator__username", "position", "id"))

    @extend_schema(responses=responses(AssignmentOutput(many=True)))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(request=AssignInput, responses=write_responses({201: AssignOutput}))
    def post(self, request, slug: str):
        project = self.project()
        data = AssignInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        cohort = Cohort.objects.filter(project=project, name=d["cohort"]).first()
        if cohort is None:
            return not_found("cohort", f"no cohort {d['cohort']!r} in this project")
        try:
            created = project_assign(project=project, cohort_id=cohort.pk, overlap=d.get("overlap", project.overlap),
                                     method=d["method"], seed=d.get("seed"), by=request.user)
        except ValidationError as exc:
            return validation_error(exc)
        rows = Assignment.objects.filter(pk__in=[a.pk for a in created]).select_related("cohort", "annotator", "response__case")
        return ApiResponse({"created": len(created), "assignments": AssignmentOutput(rows.order_by("id"), many=True).data},
                           status=status.HTTP_201_CREATED)


class ReassignInput(JsonInput):
    annotator = serializers.CharField(max_length=150, help_text="User name of another annotator of the cohort.")


class AssignmentReassignApi(APIView):
    @extend_schema(request=ReassignInput, responses=write_responses(AssignmentOutput, CONFLICT_ANSWER))
    def post(self, request, slug: str, assignment_id: int):
        """Give an untouched (open, no labels) assignment to another annotator of its cohort."""
        project = project_get_for(user=request.user, action="manage", slug=slug)
        assignment = Assignment.objects.filter(pk=assignment_id, project=project).first()
        if assignment is None:
            raise Http404("No such assignment")
        data = ReassignInput(data=request.data)
        data.is_valid(raise_exception=True)
        user = get_user_model().objects.filter(username=data.validated_data["annotator"]).first()
        if user is None:
            return not_found("annotator", f"no user {data.validated_data['annotator']!r}")
        try:
            assignment = assignment_reassign(assignment=assignment, annotator=user, by=request.user)
        except ValidationError as exc:
            return validation_error(exc)
        assignment = Assignment.objects.select_related("cohort", "annotator", "response__case").get(pk=assignment.pk)
        return ApiResponse(AssignmentOutput(assignment).data)


class RoutingInput(JsonInput):
    cohort = serializers.CharField(max_length=100, help_text="The cohort's name.")
    budget = serializers.IntegerField(min_value=1, help_text="Responses the cohort labels in all (it only grows).")
    judges = serializers.ListField(child=serializers.CharField(max_length=200), required=False, allow_empty=True,
                                   help_text="Judges whose uncertainty steers the draw (first draw only; default: all).")
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_SEED,
                                    help_text="Seed of the draw (first draw only; default 0).")


RoutingOutput = inline_serializer("RoutingResult", {
    "cohort": serializers.CharField(), "budget": serializers.IntegerField(), "round": serializers.IntegerField(),
    "judges": serializers.ListField(child=serializers.CharField()), "uniform_share": serializers.FloatField(),
    "seed": serializers.IntegerField(), "chosen_now": serializers.IntegerField(), "chosen": serializers.IntegerField(),
    "responses": serializers.IntegerField(), "assignments": serializers.IntegerField(),
})


class RoutingExtendApi(APIView):
    @extend_schema(request=RoutingInput, responses=write_responses(RoutingOutput))
    def post(self, request, slug: str):
        """Raise a cohort's routing budget: draw the new responses (favouring those the judges are unsure
        about, each with a known probability) and assign them to the cohort's annotators. The figures are
        the ``routing`` report's."""
        project = project_get_for(user=request.user, action="manage", slug=slug)
        data = RoutingInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        cohort = Cohort.objects.filter(project=project, name=d["cohort"]).first()
        if cohort is None:
            return not_found("cohort", f"no cohort {d['cohort']!r} in this project")
        try:
            done = routing_extend(project=project, cohort=cohort, budget=d["budget"], by=request.user,
                                  judges=d.get("judges") or None, seed=d.get("seed"))
        except ValidationError as exc:
            return validation_error(exc)
        design = done.design
        return ApiResponse({"cohort": cohort.name, "budget": design.budget, "round": design.rounds, "judges": design.judges,
                            "uniform_share": design.uniform_share, "seed": design.seed, "chosen_now": done.chosen_now,
                            "chosen": done.chosen, "responses": done.population, "assignments": done.assignments})
