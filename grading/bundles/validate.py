"""Field-level validation of bundle objects (SPEC §4). Each check raises ``FieldError`` naming
the field; the importer adds the file and line number.
"""
import re

from annotation.models import Case, Criterion

SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]+$")


class FieldError(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


def check_keys(obj: dict, *, required: tuple[str, ...], optional: tuple[str, ...], prefix: str = "") -> None:
    for key in required:
        if key not in obj:
            raise FieldError(prefix + key, f"missing field {prefix + key!r}")
    allowed = set(required) | set(optional)
    for key in obj:
        if key not in allowed:
            raise FieldError(prefix + key, f"unknown field {prefix + key!r}")


def string(obj: dict, key: str, *, prefix: str = "", required: bool = True, blank: bool = False) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise FieldError(prefix + key, f"field {prefix + key!r} must be a string")
    if required and not blank and not value.strip():
        raise FieldError(prefix + key, f"field {prefix + key!r} must not be empty")
    return value


def number(obj: dict, key: str, *, prefix: str = "", default: float | None = None) -> float | None:
    value = obj.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError(prefix + key, f"field {prefix + key!r} must be a number")
    return float(value)


SMALLINT_MAX, INT_MAX = 32767, 2147483647  # the database columns' ranges


def integer(obj: dict, key: str, *, prefix: str = "", default: int | None = None, minimum: int = 0,
            maximum: int | None = None) -> int | None:
    value = obj.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise FieldError(prefix + key, f"field {prefix + key!r} must be an integer >= {minimum}")
    if maximum is not None and value > maximum:
        raise FieldError(prefix + key, f"field {prefix + key!r} must be at most {maximum}")
    return value


def string_list(obj: dict, key: str, *, prefix: str = "") -> list[str]:
    value = obj.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FieldError(prefix + key, f"field {prefix + key!r} must be a list of strings")
    return value


def choice(obj: dict, key: str, choices: tuple[str, ...], *, prefix: str = "", default: str | None = None) -> str:
    value = obj.get(key, default)
    if value not in choices:
        raise FieldError(prefix + key, f"{prefix + key} {value!r} is not one of {', '.join(choices)}")
    return value


def criterion(obj: object, *, prefix: str = "") -> dict:
    """A CRITERION object, normalized to the canonical spec form."""
    if not isinstance(obj, dict):
        raise FieldError(prefix.rstrip("."), "a criterion must be a JSON object")
    check_keys(
        obj,
        required=("criterion_id", "text"),
        optional=("kind", "weight", "options", "tags", "min_evidence"),
        prefix=prefix,
    )
    kind = choice(obj, "kind", (Criterion.BINARY, Criterion.ORDINAL, Criterion.NOMINAL), prefix=prefix, default="binary")
    options = obj.get("options") or []
    if not isinstance(options, list):
        raise FieldError(prefix + "options", "field 'options' must be a list")
    if kind == Criterion.BINARY and options:
        raise FieldError(prefix + "options", "a binary criterion takes no options")
    if kind != Criterion.BINARY and not [o for o in options if isinstance(o, dict) and not o.get("na")]:
        raise FieldError(prefix + "options", f"a {kind} criterion needs at least one option")
    labels = set()
    for i, option in enumerate(options):
        where = f"{prefix}options[{i}]."
        if not isinstance(option, dict):
            raise FieldError(where.rstrip("."), "an option must be a JSON object")
        check_keys(option, required=("label", "value"), optional=("na",), prefix=where)
        label = string(option, "label", prefix=where)
        number(option, "value", prefix=where)
        if not isinstance(option.get("na", False), bool):
            raise FieldError(where + "na", "field 'na' must be true or false")
        if label in labels:
            raise FieldError(where + "label", f"duplicate option label {label!r}")
        labels.add(label)
    return {
        "criterion_id": string(obj, "criterion_id", prefix=prefix),
        "text": string(obj, "text", prefix=prefix),
        "kind": kind,
        "weight": number(obj, "weight", prefix=prefix, default=1.0),
        "options": options,
        "tags": string_list(obj, "tags", prefix=prefix),
        "min_evidence": integer(obj, "min_evidence", prefix=prefix, default=0),
    }


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
