"""The OpenAPI schema (drf-spectacular) generates without warnings: two views' nested
serializers sharing a component name would silently describe one with the other's fields."""
from io import StringIO

import yaml
from django.core.management import call_command


def test_the_schema_has_no_warnings_and_one_component_per_serializer(db, capsys):
    out = StringIO()
    call_command("spectacular", "--fail-on-warn", stdout=out)
    schemas = yaml.safe_load(out.getvalue())["components"]["schemas"]
    assert {"Decision", "Assignment"} <= set(schemas)
    assert "response_id" in schemas["Decision"]["properties"] and "Output" not in schemas
