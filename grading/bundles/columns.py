"""What the database can store of a bundle's records (issue 27, point 4): the checks that make
PostgreSQL and SQLite refuse the same hostile values by file, line and field before anything is
written, rather than PostgreSQL raising a ``DataError`` mid-import and SQLite storing the value.

- ``stored_value_problem``: anywhere in a JSON value (every field, every key, nested metadata and
  settings included), a string holding a NUL character or a lone surrogate (PostgreSQL's text and
  jsonb hold neither; PostgreSQL cannot even be sent a surrogate) or a number that is not finite or
  not a double.
- ``record_checker``: each field of a bundle file that the importer stores in a column, against that
  column: a string no longer than its ``max_length``, an integer within the column's range (Django's
  ``integer_field_ranges``: the PostgreSQL ranges, also on SQLite, which would store any 64-bit
  integer), a number within a ``DecimalField``'s digits. ``_columns`` names the model field of each
  stored bundle field (a new kind of record declares its fields there); every limit is read from
  that field, none is copied here.

The reader (``grading.bundles.reader``) runs both on every object it hands the importer, so each
entry point (command, upload job, API, and the formats that convert to a bundle) refuses alike.
"""
import decimal
import math
from collections.abc import Callable
from functools import cache

from django.contrib.auth import get_user_model
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

from annotation.models import Case, CaseQuality, Cohort, Criterion, Label, Project, Response

from ..models import Adjudication, Judge, Judgment
from .validate import FieldError


def _criterion(prefix: str) -> dict:
    return {
        f"{prefix}criterion_id": (Criterion, "external_id"),
        f"{prefix}weight": (Criterion, "weight"),
        f"{prefix}min_evidence": (Criterion, "min_evidence"),
        f"{prefix}checklist_of": (Criterion, "checklist_of"),
        f"{prefix}options[].label": (Label, "option_label"),  # what a label that chooses the option stores
        f"{prefix}options[].value": (Label, "value"),
    }


JUDGE_COLUMNS = ("name", "model", "base_url", "api_key_env", "temperature", "samples", "concurrency", "max_retries",
                 "price_in_per_mtok", "price_out_per_mtok")


def _columns() -> dict[str, dict[str, tuple[type[models.Model], str]]]:
    """{bundle file: {field path: (model, field name)}}; ``a[].b`` is field ``b`` of each item of
    list ``a``, ``a.b`` field ``b`` of object ``a``. Text and JSON columns are left out
    (``stored_value_problem`` covers them), and so are lookups that must name a known row."""
    User = get_user_model()
    username = (User, User.USERNAME_FIELD)
    return {
        "project.json": {
            "slug": (Project, "slug"), "name": (Project, "name"), "coverage_k": (Project, "coverage_k"),
            "overlap": (Project, "overlap"), "low_agreement_threshold": (Project, "low_agreement_threshold"),
            "cohorts[].name": (Cohort, "name"), "cohorts[].members[].user": username, "roles[].user": username,
            **{f"judges[].{name}": (Judge, name) for name in JUDGE_COLUMNS},
            **_criterion("rubric[]."),
        },
        "cases.jsonl": {"case_id": (Case, "external_id"), **_criterion("criteria[].")},
        "responses.jsonl": {"response_id": (Response, "external_id"), "model": (Response, "model")},
        "labels.jsonl": {"annotator": username, "option": (Label, "option_label"), "value": (Label, "value"),
                         "time_spent_seconds": (Label, "time_spent_seconds")},
        "judgments.jsonl": {"judge": (Judge, "name"), "judge_model": (Judge, "model"), "sample": (Judgment, "sample"),
                            "option": (Judgment, "option_label"), "value": (Judgment, "value"),
                            "tokens_in": (Judgment, "tokens_in"), "tokens_out": (Judgment, "tokens_out"),
                            "latency_ms": (Judgment, "latency_ms")},
        "adjudications.jsonl": {"adjudicator": username, "option": (Adjudication, "option_label"),
                                "value": (Adjudication, "value")},
        "quality.jsonl": {"case_id": (Case, "external_id"), "screen_source": (CaseQuality, "screen_source"),
                          "screen_accuracy_pct": (CaseQuality, "screen_accuracy_pct"),
                          "screen_threshold_pct": (CaseQuality, "screen_threshold_pct"), "audit_by": username},
    }


# -- anywhere in a value ----------------------------------------------------------------------

def _name(path: str) -> str:
    """A field path fit for a message (a key may hold the very character refused)."""
    return path if path.isprintable() else ascii(path)[1:-1]


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "a NUL character (\\u0000)"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"a lone surrogate (\\u{ord(text[exc.start]):04x}, not Unicode text)"
    return None


def stored_value_problem(value: object, path: str = "") -> tuple[str, str] | None:
    """(field path, message) of the first string, key or number in ``value`` that no database
    column can hold; None when there is none. Iterative: JSON nests as deep as its parser allows."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            problem = _text_problem(item)
            if problem:
                return _name(where), f"field '{_name(where)}' holds {problem}, which the database cannot store"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return _name(where), f"field '{_name(where)}' must be a finite number, not {item}"
        elif isinstance(item, int) and not isinstance(item, bool):
            try:
                float(item)
            except OverflowError:
                return _name(where), f"field '{_name(where)}' is a number beyond the range of a double"
        elif isinstance(item, dict):
            children = []
            for key, child in item.items():
                inner = f"{where}.{key}" if where else key
                problem = _text_problem(key)
                if problem:
                    return _name(inner), f"the key '{_name(inner)}' holds {problem}, which the database cannot store"
                children.append((inner, child))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


# -- against the columns ----------------------------------------------------------------------

def _column_check(field: models.Field) -> Callable[[str, object], None] | None:
    """The check of a value bound for ``field``'s column; None for a column that holds any value
    of the right type (a value of the wrong type is left to the importer's validators)."""
    if field.choices:
        return None  # the importer names the choices
    if isinstance(field, models.CharField):
        max_length = field.max_length

        def check(where: str, value: object) -> None:
            if isinstance(value, str) and len(value) > max_length:
                raise FieldError(where, f"field {where!r} may hold at most {max_length:,} characters")
        return check
    if isinstance(field, models.DecimalField):
        digits, places = field.max_digits, field.decimal_places
        bound = 10 ** (digits - places)
        context = decimal.Context(prec=digits, traps=[decimal.InvalidOperation])
        quantum = decimal.Decimal(1).scaleb(-places)

        def check(where: str, value: object) -> None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return
            try:
                number = decimal.Decimal(repr(value) if isinstance(value, float) else value)
                if number.is_finite():
                    number.quantize(quantum, context=context)
                    return
            except decimal.InvalidOperation:
                pass
            raise FieldError(where, f"field {where!r} must be a number of less than {bound:,} in size (the database "
                                    f"column holds {digits} digits, {places} after the point)")
        return check
    if isinstance(field, models.IntegerField):
        low, high = BaseDatabaseOperations.integer_field_ranges[field.get_internal_type()]

        def check(where: str, value: object) -> None:  # worded as the importer's integer check words it
            if isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
                raise FieldError(where, f"field {where!r} must be at most {high}" if value > high
                                 else f"field {where!r} must be at least {low}")
        return check
    return None  # text without a length, JSON, and FloatField: any finite double (stored_value_problem and
    # orjson refuse the others wherever they are)


def _walker(path: str, check: Callable[[str, object], None]) -> Callable[[dict], None]:
    """Apply ``check`` to the value(s) ``path`` names in an object, with each one's own path."""
    head, dot, rest = path.partition(".")
    listed = head.endswith("[]")
    key = head[:-2] if listed else head
    inner = _walker(rest, check) if dot else None

    def walk(obj: dict, prefix: str = "") -> None:
        value = obj.get(key)
        if value is None:
            return
        items = [(f"{prefix}{key}[{i}]", item) for i, item in enumerate(value)] if listed and isinstance(value, list) \
            else [] if listed else [(prefix + key, value)]
        for where, item in items:
            if inner is None:
                check(where, item)
            elif isinstance(item, dict):
                inner(item, where + ".")
    return walk


@cache
def record_checker(name: str) -> Callable[[dict], None] | None:
    """The check of an object of bundle file ``name`` against the columns its fields are stored in
    (FieldError names the first field that does not fit); None for a file with nothing to check.
    Made once per process; the top-level strings and integers, all a label or judgment line
    carries, are compared inline (a study's import checks 10^6 lines)."""
    strings, integers, others = [], [], []
    for path, (model, field_name) in _columns().get(name, {}).items():
        field = model._meta.get_field(field_name)
        check = _column_check(field)
        if check is None:
            continue
        if "." in path or "[" in path or not isinstance(field, (models.CharField, models.IntegerField)):
            others.append(_walker(path, check))
        elif isinstance(field, models.CharField):
            strings.append((path, field.max_length, check))
        else:
            integers.append((path, *BaseDatabaseOperations.integer_field_ranges[field.get_internal_type()], check))
    if not (strings or integers or others):
        return None

    def record_check(obj: dict) -> None:
        for key, most, check in strings:
            value = obj.get(key)
            if value.__class__ is str and len(value) > most:
                check(key, value)
        for key, low, high, check in integers:
            value = obj.get(key)
            if value.__class__ is int and not low <= value <= high:
                check(key, value)
        for walk in others:
            walk(obj)
    return record_check
