"""What every API view shares: the pagination, the documented error answers, and the turn of a
service's ``ValidationError`` into a 400 naming the field."""
from django.core.exceptions import ValidationError
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response


class Pagination(LimitOffsetPagination):
    default_limit = 100
    max_limit = 1000


Error = inline_serializer("Error", {"detail": serializers.CharField()})
FieldErrors = inline_serializer("FieldErrors", {"field": serializers.ListField(child=serializers.CharField())})

# The answers any authenticated endpoint may give besides its own.
ERRORS = {
    401: OpenApiResponse(Error, description="no or a wrong token / session"),
    403: OpenApiResponse(Error, description="the role does not allow this"),
    404: OpenApiResponse(Error, description="no such object, or no role in its project"),
    429: OpenApiResponse(Error, description="throttled: too many requests or failed tokens"),
}
WRITE_ERRORS = {**ERRORS, 400: OpenApiResponse(FieldErrors, description="invalid input; each field with what is wrong")}


def responses(ok, extra: dict | None = None) -> dict:
    """``extend_schema(responses=...)``: the success answer(s) (a serializer: 200; or a dict by
    status), every error, and ``extra`` answers by status."""
    ok = ok if isinstance(ok, dict) else {200: ok}
    return {**ok, **ERRORS, **(extra or {})}


def write_responses(ok, extra: dict | None = None) -> dict:
    ok = ok if isinstance(ok, dict) else {200: ok}
    return {**ok, **WRITE_ERRORS, **(extra or {})}


def validation_error(exc: ValidationError, code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    body = exc.message_dict if hasattr(exc, "error_dict") else {"detail": "; ".join(exc.messages)}
    return Response(body, status=code)


def paginated(view, queryset, serializer_class) -> Response:
    paginator = Pagination()
    page = paginator.paginate_queryset(queryset, view.request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)
