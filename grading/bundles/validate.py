"""Field-level validation of bundle objects (SPEC §4). The generic field checks and the
criterion live with the rubric in ``annotation.specs``; this module adds what only bundles
carry (slugs, case metadata, chat messages). Each check raises ``FieldError`` naming the
field; the importer adds the file and line number.
"""
import re

from annotation.models import Case
from annotation.specs import (  # noqa: F401 - the importer's validators, re-exported
    INT_MAX,
    SMALLINT_MAX,
    FieldError,
    check_keys,
    choice,
    criterion_clean,
    criterion_guidance,
    criterion_variants,
    integer,
    number,
    string,
    string_list,
)

SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]+$")


def criterion(obj: object, *, prefix: str) -> dict:
    """A bundle's criterion: ``criterion_clean``'s canonical form, plus ``guidance`` and
    ``variants`` when given (kept outside the rubric version's hash; ``rubrics_freeze`` stores them
    on the criterion)."""
    spec = criterion_clean(obj, prefix=prefix)
    guidance = criterion_guidance(obj, prefix=prefix)
    if guidance is not None:
        spec["guidance"] = guidance
    variants = criterion_variants(obj, prefix=prefix)
    if variants is not None:
        spec["variants"] = variants
    return spec


def metadata(obj: object) -> dict:
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise FieldError("metadata", "field 'metadata' must be a JSON object")
    difficulties = tuple(c for c, _ in Case.DIFFICULTIES)
    registers = tuple(c for c, _ in Case.REGISTERS)
    if obj.get("difficulty") is not None:
        choice(obj, "difficulty", difficulties, prefix="metadata.")
    if obj.get("register") is not None:
        choice(obj, "register", registers, prefix="metadata.")
    string_list(obj, "task_themes", prefix="metadata.")
    string_list(obj, "specialties", prefix="metadata.")
    return obj


def messages(value: object) -> list[dict]:
    if not isinstance(value, list) or not value:
        raise FieldError("messages", "field 'messages' must be a non-empty list")
    for i, message in enumerate(value):
        where = f"messages[{i}]."
        if not isinstance(message, dict):
            raise FieldError(where.rstrip("."), "a message must be a JSON object")
        check_keys(message, required=("role", "content"), optional=("name",), prefix=where)
        string(message, "role", prefix=where)
        string(message, "content", prefix=where, blank=True)
    return value
