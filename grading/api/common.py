"""What every API view shares: the pagination, the documented error answers, and the turn of a
service's ``ValidationError`` into a 400 naming the field."""
import django_filters
from django import forms
from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response


class Pagination(LimitOffsetPagination):
    """``limit`` (1 to 1,000, default 100) and ``offset`` (0 or more); anything else is a 400
    naming the parameter, not silently the default."""
    default_limit = 100
    max_limit = 1000

    def _number(self, request, name: str, default: int, low: int, high: int | None) -> int:
        values = request.query_params.getlist(name)
        if not values:
            return default
        if len(values) > 1:
            raise exceptions.ValidationError({name: ["give it once"]})
        try:
            value = int(values[0])
        except ValueError:
            raise exceptions.ValidationError({name: [f"{values[0][:40]!r} is not a whole number"]}) from None
        if value < low or (high is not None and value > high):
            raise exceptions.ValidationError({name: [f"must be between {low} and {high}" if high else f"must be {low} or more"]})
        return value

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        bounds = {self.limit_query_param: {"minimum": 1, "maximum": self.max_limit}, self.offset_query_param: {"minimum": 0}}
        for parameter in parameters:
            parameter["schema"].update(bounds.get(parameter["name"], {}))
        return parameters

    def get_limit(self, request):
        return self._number(request, self.limit_query_param, self.default_limit, 1, self.max_limit)

    def get_offset(self, request):
        return self._number(request, self.offset_query_param, 0, 0, None)


Error = inline_serializer("Error", {"detail": serializers.CharField()})


def responses(ok, extra: dict | None = None) -> dict:
    """``extend_schema(responses=...)``: the success answer(s) (a serializer: 200; or a dict by
    status) and ``extra`` answers by status; evalsite.api_schema adds the common errors."""
    ok = ok if isinstance(ok, dict) else {200: ok}
    return {**ok, **(extra or {})}


write_responses = responses


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": 2**63 - 1})
class IdFilter(django_filters.NumberFilter):
    """A database id: a whole number in the range ids take (a larger one is a 400, not a 500)."""
    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        super().__init__(*args, min_value=1, max_value=2**63 - 1, **kwargs)


@extend_schema_field(OpenApiTypes.BOOL)
class StrictBooleanFilter(django_filters.TypedChoiceFilter):
    """``true`` or ``false``; anything else is a 400 (django-filter's own takes "null" as no filter)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, choices=[("true", "true"), ("false", "false")], coerce=lambda v: v == "true", **kwargs)


def validation_error(exc: ValidationError, code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    body = exc.message_dict if hasattr(exc, "error_dict") else {"detail": "; ".join(exc.messages)}
    return Response(body, status=code)


def paginated(view, queryset, serializer_class) -> Response:
    paginator = Pagination()
    page = paginator.paginate_queryset(queryset, view.request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)
