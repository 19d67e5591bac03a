"""What every API view shares: the pagination, strict filters, the success answers for the schema
(evalsite.api_schema adds the errors), and the turn of a service's ``ValidationError`` into a 400
naming the field (404 / 409 when its code says so: ``evalsite.api_errors``)."""
import decimal

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from evalsite.api_errors import django_refusal
from evalsite.api_pagination import Pagination  # noqa: F401 - every list of this API paginates so
from evalsite.codes import CONFLICT, NOT_FOUND


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


class MoneyField(serializers.DecimalField):
    """An amount of US dollars in a JSON body: a JSON number (not text), at least 0, below the
    column's limit (the schema's ``exclusiveMaximum``); digits beyond ``decimal_places`` are cut
    off (a price per million tokens finer than 1/10000 of a dollar has no use), so every number
    the schema allows is taken."""

    def __init__(self, **kwargs):
        super().__init__(coerce_to_string=False, min_value=0, rounding=decimal.ROUND_DOWN, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        return super().to_internal_value(data)

    def validate_precision(self, value):
        if value.adjusted() >= self.max_digits - self.decimal_places:  # too large to cut: DRF's message says so
            return super().validate_precision(value)
        return super().validate_precision(value.quantize(decimal.Decimal(1).scaleb(-self.decimal_places),
                                                         rounding=decimal.ROUND_DOWN))


def validation_error(exc: ValidationError, code: int | None = None) -> Response:
    """A service's refusal: 400 naming the fields, or 404 / 409 by its codes (``code`` forces one)."""
    return django_refusal(exc, code)


def not_found(field: str, message: str) -> Response:
    """The request names, in ``field``, an object the project does not have: a 404 saying which."""
    return validation_error(ValidationError({field: ValidationError(message, code=NOT_FOUND)}))


def conflict(field: str, message: str) -> Response:
    """The objects' state does not allow the request (a name taken...): a 409 saying why."""
    return validation_error(ValidationError({field: ValidationError(message, code=CONFLICT)}))


# An operation's 409 (evalsite.api_schema documents the 404 of every operation).
CONFLICT_ANSWER = {409: OpenApiResponse(OpenApiTypes.OBJECT, description="the objects' current state does not allow it "
                                        "(detail, and the field with what is wrong)")}
