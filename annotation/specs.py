"""Field-level validation of bundle-shaped objects (SPEC §4) that the annotation app owns:
the generic field checks and the criterion. Each check raises ``FieldError`` naming the field;
the importer adds the file and line number, the rubric forms show it next to the field.

``criterion_clean`` is the one definition of a valid criterion and of its canonical form
(what a rubric version's hash is computed over): the importer, the rubric freezing service
and the new-version form all go through it.
"""
import math

from .models import Criterion


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


def string(obj: dict, key: str, *, prefix: str = "", required: bool = True, blank: bool = False,
           max_length: int | None = None) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise FieldError(prefix + key, f"field {prefix + key!r} must be a string")
    if required and not blank and not value.strip():
        raise FieldError(prefix + key, f"field {prefix + key!r} must not be empty")
    if max_length is not None and len(value) > max_length:
        raise FieldError(prefix + key, f"field {prefix + key!r} may hold at most {max_length:,} characters")
    return value


def number(obj: dict, key: str, *, prefix: str = "", default: float | None = None) -> float | None:
    value = obj.get(key, default)
    if value is None:
        return default
    try:
        finite = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    except OverflowError:  # an integer beyond a double
        finite = False
    if not finite:
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


def criterion_clean(obj: object, *, prefix: str = "") -> dict:
    """A CRITERION object checked and turned into its canonical form: keys in a fixed set,
    numbers as floats, ``na`` flags explicit, tags and minimum evidence present. A scale of
    option values outside [0, 1] needs two distinct applicable values (it is rescaled by them)."""
    if not isinstance(obj, dict):
        raise FieldError(prefix.rstrip("."), "a criterion must be a JSON object")
    check_keys(
        obj,
        required=("criterion_id", "text"),
        optional=("kind", "weight", "options", "tags", "min_evidence", "guidance", "checklist_of", "variants"),
        prefix=prefix,
    )
    criterion_guidance(obj, prefix=prefix)
    criterion_variants(obj, prefix=prefix)
    kind = choice(obj, "kind", (Criterion.BINARY, Criterion.ORDINAL, Criterion.NOMINAL), prefix=prefix, default="binary")
    options = obj.get("options") or []
    if not isinstance(options, list):
        raise FieldError(prefix + "options", "field 'options' must be a list")
    if kind == Criterion.BINARY and options:
        raise FieldError(prefix + "options", "a binary criterion takes no options")
    if kind != Criterion.BINARY and not [o for o in options if isinstance(o, dict) and not o.get("na")]:
        raise FieldError(prefix + "options", f"a {kind} criterion needs at least one option")
    labels, clean_options = set(), []
    for i, option in enumerate(options):
        where = f"{prefix}options[{i}]."
        if not isinstance(option, dict):
            raise FieldError(where.rstrip("."), "an option must be a JSON object")
        check_keys(option, required=("label", "value"), optional=("na",), prefix=where)
        label = string(option, "label", prefix=where, max_length=200)  # stored in labels' option_label
        value = number(option, "value", prefix=where)
        if not isinstance(option.get("na", False), bool):
            raise FieldError(where + "na", "field 'na' must be true or false")
        if label in labels:
            raise FieldError(where + "label", f"duplicate option label {label!r}")
        labels.add(label)
        clean_options.append({"label": label, "value": value, "na": bool(option.get("na", False))})
    scored = {o["value"] for o in clean_options if not o["na"]}
    if scored and (min(scored) < 0 or max(scored) > 1) and len(scored) < 2:
        raise FieldError(prefix + "options", "option values outside [0, 1] need at least two distinct values to form a scale")
    checklist_of = string(obj, "checklist_of", prefix=prefix, required=False)
    if checklist_of and (kind != Criterion.ORDINAL or sorted(o["value"] for o in clean_options if not o["na"]) != [0, 1, 2]):
        raise FieldError(prefix + "checklist_of", "a checklist item is an ordinal criterion with the options 0, 1 and 2 "
                                                  "(not present / partially / clearly)")
    return criterion_canonical({
        "checklist_of": checklist_of,
        "criterion_id": string(obj, "criterion_id", prefix=prefix, max_length=200),  # Criterion.external_id
        "text": string(obj, "text", prefix=prefix),
        "kind": kind,
        "weight": number(obj, "weight", prefix=prefix, default=1.0),
        "options": clean_options,
        "tags": string_list(obj, "tags", prefix=prefix),
        "min_evidence": integer(obj, "min_evidence", prefix=prefix, default=0, maximum=SMALLINT_MAX),
    })


GUIDANCE_MAX = 20_000


def criterion_guidance(obj: dict, *, prefix: str = "") -> str | None:
    """A criterion spec's ``guidance`` for annotators (Markdown), checked; None when it has none.
    Guidance is not in the canonical form: it explains how to apply a criterion without changing
    what the criterion means, so editing it makes no new rubric version."""
    if "guidance" not in obj:
        return None
    text = obj["guidance"]
    if not isinstance(text, str):
        raise FieldError(prefix + "guidance", f"field {prefix + 'guidance'!r} must be a string")
    if len(text) > GUIDANCE_MAX:
        raise FieldError(prefix + "guidance", f"field {prefix + 'guidance'!r} may hold at most {GUIDANCE_MAX:,} characters")
    return text


VARIANTS = ("paraphrased",)


def criterion_variants(obj: dict, *, prefix: str = "") -> dict | None:
    """A criterion spec's ``variants`` (alternative texts for rubric-perturbation runs:
    ``{"paraphrased": "..."}``), checked; None when it has none. Like guidance, not in the
    canonical form: a variant is a test of the judge, not a change of the criterion."""
    if "variants" not in obj:
        return None
    value = obj["variants"]
    where = prefix + "variants"
    if not isinstance(value, dict):
        raise FieldError(where, f"field {where!r} must be an object such as {{\"paraphrased\": \"...\"}}")
    for name, text in value.items():
        if name not in VARIANTS:
            raise FieldError(f"{where}.{name}", f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
        if not isinstance(text, str) or not text.strip() or len(text) > GUIDANCE_MAX:
            raise FieldError(f"{where}.{name}", f"field {where + '.' + name!r} must be a non-empty text")
    return dict(value)


def criterion_canonical(spec: dict) -> dict:
    """The canonical dict of a criterion spec that is known to be valid (a stored criterion,
    or ``criterion_clean``'s checked fields): exactly the keys a rubric version hashes."""
    return {
        "criterion_id": spec["criterion_id"],
        "text": spec["text"],
        "kind": spec.get("kind", Criterion.BINARY),
        "weight": float(spec.get("weight", 1.0)),
        "options": [
            {"label": o["label"], "value": float(o["value"]), "na": bool(o.get("na", False))}
            for o in spec.get("options") or []
        ],
        "tags": list(spec.get("tags") or []),
        "min_evidence": int(spec.get("min_evidence", 0)),
        # Only when set, so the hashes of rubrics without compiled traits stay as they were.
        **({"checklist_of": spec["checklist_of"]} if spec.get("checklist_of") else {}),
    }
