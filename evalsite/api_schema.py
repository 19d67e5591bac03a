"""The OpenAPI schema's view of errors: every operation documents the answers any endpoint of
this API may give besides its own (drf-spectacular's AutoSchema with those added), so a client
generated from the schema, or schemathesis, knows them all.

- 400: invalid input; a JSON object naming each field with what is wrong (or ``detail``);
- 401: no credentials or a wrong token; 403: the role does not allow it; 404: no such object, or
  no role in its project; 413: a body over the size limit; 429: throttled.
An operation's own declaration of one of these codes wins.
"""
from drf_spectacular.openapi import AutoSchema

DETAIL = {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}
FIELDS = {"type": "object", "additionalProperties": True, "description": "field name -> what is wrong"}
COMMON = {
    "400": ("Invalid input: each field with what is wrong (or detail).", FIELDS),
    "401": ("No credentials, or a wrong token.", DETAIL),
    "403": ("The caller's role does not allow this.", DETAIL),
    "404": ("No such object, or no role in its project.", DETAIL),
    "413": ("The request body is over the size limit.", FIELDS),
    "429": ("Throttled: too many requests, or too many failed tokens.", DETAIL),
}


class Schema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction == "response":
            for code, (description, schema) in COMMON.items():
                responses.setdefault(code, {"description": description, "content": {"application/json": {"schema": schema}}})
        return responses
