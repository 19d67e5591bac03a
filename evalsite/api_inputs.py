"""Request bodies read as JSON take each value in the JSON type the schema states for it.

DRF's fields coerce: an integer field takes ``"5"``, a text field ``5``, a boolean ``"yes"``;
the schema says ``integer``, ``string``, ``boolean``, so a body with ``"5"`` does not fit it and
must be refused like any other that does not (schemathesis' negative check holds the server to
that). ``JsonInput`` is the base of every serializer of a JSON body: before its fields read the
values it refuses, naming each field, a value whose JSON type is not its field's; null is left to
the field (``allow_null``). Query parameters and multipart forms are text by nature and keep
DRF's reading.
"""
from rest_framework import serializers

_NUMBER = (int, float)


def json_types(field: serializers.Field) -> tuple[tuple[type, ...], str] | None:
    """The Python types (as ``json.loads`` gives them) a field of a JSON body takes, and their JSON
    name; None for a field that takes any JSON."""
    if isinstance(field, serializers.BooleanField):
        return (bool,), "true or false"
    if isinstance(field, serializers.IntegerField):
        return (int,), "whole number"
    if isinstance(field, (serializers.FloatField, serializers.DecimalField)):
        return _NUMBER, "number"
    if isinstance(field, serializers.ChoiceField):
        kinds = {type(key) for key in field.choices}
        return ((str,), "text") if kinds <= {str} else None
    if isinstance(field, serializers.CharField):
        return (str,), "text"
    if isinstance(field, (serializers.DictField, serializers.Serializer)):
        return (dict,), "object"
    if isinstance(field, (serializers.ListField, serializers.ListSerializer)):
        return (list,), "list"
    if isinstance(field, serializers.PrimaryKeyRelatedField):
        return (int,), "whole number (an id)"
    return None


class JsonInput(serializers.Serializer):
    def to_internal_value(self, data):
        if isinstance(data, dict):
            errors = {}
            for name, field in self.fields.items():
                if field.read_only or field.field_name not in data or data[field.field_name] is None:
                    continue
                expected = json_types(field)
                value = data[field.field_name]
                # bool is an int in Python, never a number in JSON
                if expected and (not isinstance(value, expected[0]) or (isinstance(value, bool) and bool not in expected[0])):
                    errors[field.field_name] = [f"must be a JSON {expected[1]}, not {type(value).__name__} {value!r}"[:300]]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)
