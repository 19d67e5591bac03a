"""The researcher's REST API of the grading app. For now one read: a source's decisions, the
same ones every report, page and export uses (``grading.selectors.source_decisions``), so a
pipeline can audit a figure decision by decision. For the project's adjudicators and managers
(``annotation.access``: 404 without a role, 403 for a viewer); a response or criterion the project
does not have is a 404 too.
"""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.views import APIView

from annotation.access import project_get_for
from annotation.models import Criterion, Response

from ..reports.registry import SourceField


class DecisionPagination(LimitOffsetPagination):
    default_limit = 1000
    max_limit = 10000


class DecisionListApi(APIView):
    """``GET /api/projects/{slug}/decisions/?source=cohort:NAME|judge:NAME|gold[&response=ID][&criterion=ID]``"""

    class FilterSerializer(serializers.Serializer):
        source = SourceField()  # a cohort or judge the project does not have: 404
        response = serializers.CharField(max_length=200, required=False)
        criterion = serializers.CharField(max_length=200, required=False)

    @extend_schema_serializer(component_name="Decision")  # every view's nested serializer is "Output"
    class OutputSerializer(serializers.Serializer):
        response_id = serializers.CharField()
        criterion_id = serializers.CharField()
        verdict = serializers.CharField(allow_null=True)
        option = serializers.CharField(allow_null=True)
        value = serializers.FloatField(allow_null=True)
        unresolved = serializers.BooleanField()
        invalid = serializers.IntegerField()
        n = serializers.IntegerField()

    @extend_schema(
        parameters=[FilterSerializer],
        # The answer is a page (DecisionPagination: count, next, previous, results), as the view sends it.
        responses={200: inline_serializer("PaginatedDecisionList", {
            "count": serializers.IntegerField(), "next": serializers.CharField(allow_null=True),
            "previous": serializers.CharField(allow_null=True), "results": OutputSerializer(many=True)}),
            400: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
    )
    def get(self, request, slug: str):
        project = project_get_for(user=request.user, action="inspect", slug=slug)
        filters = self.FilterSerializer(data=request.query_params, context={"project": project, "local_only": True})
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        source = data["source"]
        for name, model in (("response", Response), ("criterion", Criterion)):
            wanted = data.get(name)
            if wanted is not None and not model.objects.filter(project=project, external_id=wanted).exists():
                # Not an empty list: the caller named something that is not there (often a database id).
                raise NotFound(f"No {name} {wanted!r} in project {project.slug!r}; "
                               f"'{name}' is the {name}_id of the bundle, as the decisions list it.")
        from ..selectors import source_decision_records  # lazy: the decision frames bring pandas

        records = source_decision_records(source=source, response_external_id=data.get("response"),
                                          criterion_external_id=data.get("criterion"))
        paginator = DecisionPagination()
        page = paginator.paginate_queryset(records, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)
