"""What every API view shares: the pagination, strict filters, the success answers for the schema
(evalsite.api_schema adds the errors), and the turn of a service's ``ValidationError`` into a 400
naming the field."""
import django_filters
from django import forms
from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import status
from rest_framework.response import Response

from evalsite.api_pagination import Pagination  # noqa: F401 - every list of this API paginates so


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
