"""The OpenAPI schema's view of the API: every rule the server enforces on a request is stated in
the schema, so a client generated from it, or schemathesis, can tell a request the server takes
from one it refuses (schemathesis' positive-data check holds the two to each other).

- Errors: every operation documents the answers any endpoint may give besides its own
  (drf-spectacular's AutoSchema with those added); an operation's own declaration of a code wins.
  400: invalid input (a JSON object naming each field, or ``detail``); 401: no credentials or a
  wrong token; 403: the role does not allow it; 404: no such object, or no role in its project
  (also an object a request names that the project does not have); 409: the objects are in a
  state that does not allow it; 413: a body over the size limit; 429: throttled.
- Text: every string the server reads refuses a NUL character (PostgreSQL cannot store one:
  ``evalsite.errors.RequestTextMiddleware`` and DRF's fields), and a field that may not be blank
  also refuses text of white space only (DRF trims it first). ``text_schema`` states both from the
  field's own attributes, for request bodies (``Schema``), for report parameters
  (``grading.api.reports``) and, as a postprocessing hook, for every other string parameter.
"""
import copy

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import append_meta, force_instance
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

DETAIL = {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}
FIELDS = {"type": "object", "additionalProperties": True, "description": "field name -> what is wrong"}
COMMON = {
    "400": ("Invalid input: each field with what is wrong (or detail).", FIELDS),
    "401": ("No credentials, or a wrong token.", DETAIL),
    "403": ("The caller's role does not allow this.", DETAIL),
    "404": ("No such object, or no role in its project; or the request names an object the project does not have.",
            DETAIL),
    "413": ("The request body is over the size limit.", FIELDS),
    "429": ("Throttled: too many requests, or too many failed tokens.", DETAIL),
}

# JSON Schema patterns (ECMA and Python regular expressions alike); \u0000 is the NUL character.
NO_NUL = r"^[^\u0000]*$"
NOT_BLANK = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"  # some character that is not white space, no NUL


def text_schema(field: serializers.CharField, schema: dict) -> dict:
    """``schema`` (a string's) with the text rules of ``field`` added: no NUL character and, for a
    field that refuses blanks after trimming, a character that is not white space. A field whose
    schema has a pattern, a format or an enum of its own keeps it (its pattern states these too)."""
    if schema.get("type") != "string" or {"pattern", "format", "enum"} & schema.keys():
        return schema
    if not field.allow_blank and field.trim_whitespace:
        schema["pattern"] = NOT_BLANK
    else:
        schema["pattern"] = NO_NUL
    if not field.allow_blank:
        schema.setdefault("minLength", 1)
    return schema


def _request_rules(field, schema: dict) -> None:
    if isinstance(field, serializers.ListField) and isinstance(schema.get("items"), dict):
        _request_rules(field.child, schema["items"])
    elif isinstance(field, serializers.CharField):
        text_schema(field, schema)


class Schema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction == "response":
            for code, (description, schema) in COMMON.items():
                responses.setdefault(code, {"description": description, "content": {"application/json": {"schema": schema}}})
        return responses

    def _unwrap_list_serializer(self, serializer, direction):
        schema = super()._unwrap_list_serializer(serializer, direction)
        if direction == "request" and isinstance(serializer, serializers.ListSerializer) and schema:
            if not serializer.allow_empty:  # a list of many: how many it takes, as the serializer says
                schema["minItems"] = max(schema.get("minItems", 0), 1, serializer.min_length or 0)
            if serializer.max_length is not None:
                schema["maxItems"] = serializer.max_length
        return schema

    def _get_request_for_media_type(self, serializer, direction="request"):
        schema, required = super()._get_request_for_media_type(serializer, direction)
        if isinstance(force_instance(serializer), PolymorphicProxySerializer):
            required = True  # one of several bodies (a judge's, per backend), each with fields it needs
        return schema, required

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        # A field that states its own JSON Schema (``json_schema()``: a judge's settings, a source)
        # is documented by it: the field checks its input against the same declaration.
        if callable(getattr(field, "json_schema", None)):
            return append_meta(copy.deepcopy(field.json_schema()), self._get_serializer_field_meta(field, direction))
        return super()._map_serializer_field(field, direction, bypass_extensions)

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request":  # an answer's text is what was stored; the rules are the input's
            instance = force_instance(serializer)
            for field in instance.fields.values():
                if field.field_name in schema.get("properties", {}):
                    _request_rules(field, schema["properties"][field.field_name])
            if callable(getattr(instance, "json_schema_extra", None)):  # rules across fields (which pairs go together)
                instance.json_schema_extra(schema)
        return schema


def parameters_refuse_nul(result, generator, request, public):
    """Postprocessing hook: every string path or query parameter without a pattern, format or
    enum of its own states that a NUL character is refused (``RequestTextMiddleware``)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                schema = parameter.get("schema", {})
                if schema.get("type") == "string" and not {"pattern", "format", "enum"} & schema.keys():
                    schema["pattern"] = NO_NUL
    return result
