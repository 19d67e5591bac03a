"""The kinds of table a spreadsheet import reads, their fields, and which column is which field.

A table's kind is ``responses`` (cases and responses, one row per response: a table named
``cases`` is one too), ``labels`` or ``judgments``; ``skip`` leaves a table out (``gold``, which
is export only, is skipped by its name). The kind is the mapping's, else the table's name's, else
the one kind whose key fields its columns hold. A field's column is the mapping's (``null``: none),
else the header that is the field's name (any case, spaces or dashes for underscores), else the
first header among the field's usual names ("question" for the prompt, "score" for a value, ...).

The column mapping (``--mapping FILE``, or what the browser's column step chose)::

    {"table": KIND, "columns": {FIELD: HEADER or null}}                       # every table of the file
    {"tables": {NAME: {"table": KIND, "columns": {FIELD: HEADER or null}}}}   # a sheet, or a CSV file of a folder
"""
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .sheets import Table, TableError

RESPONSES, LABELS, JUDGMENTS, SKIP = "responses", "labels", "judgments", "skip"
METADATA_PREFIX = "metadata."
KNOWN_METADATA = ("difficulty", "register", "task_themes", "specialties")


@dataclass(frozen=True)
class Field:
    name: str
    help: str
    type: str = "text"  # text, number, integer, json, quotes (a JSON list of them, or one)
    required: bool = False
    names: tuple[str, ...] = ()  # usual headers for it, besides its own name


@dataclass(frozen=True)
class Kind:
    name: str
    title: str
    fields: tuple[Field, ...]
    key_fields: tuple[tuple[str, ...], ...]  # a table is this kind when it has a column for one field of each
    others: str  # what becomes of the columns no field takes

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


_DECISION = (
    Field("verdict", "met, not met or cannot assess (binary criteria)", names=("label", "decision")),
    Field("option", "the option's label (ordinal and nominal criteria)", names=("choice",)),
    Field("value", "a number between the lowest and highest option value (ordinal)", type="number",
          names=("score", "rating")),
)
KINDS = {
    RESPONSES: Kind(RESPONSES, "cases and responses (one row per response)", (
        Field("case_id", "the case's id", required=True, names=("case", "prompt_id", "item_id", "question_id")),
        Field("prompt", "the prompt text", names=("question", "input", "query")),
        Field("messages", "the chat messages as JSON instead of a prompt", type="json", names=("conversation",)),
        Field("reference_answer", "a reference answer", names=("reference", "ideal_answer", "ideal_completion")),
        Field("criteria", "the case's own criteria as JSON (bundle form)", type="json", names=("rubric",)),
        Field("response_id", "the response's id (made of case id and model when left out)", names=("completion_id",)),
        Field("model", "the model (or author) of the response", names=("model_name", "source_model", "system")),
        Field("author_kind", "model or human", names=("author",)),
        Field("text", "the response's text", names=("response", "response_text", "completion", "answer", "output")),
    ), key_fields=(("case_id",), ("prompt", "messages", "text")), others="become case metadata (a column metadata.KEY: key KEY)"),
    LABELS: Kind(LABELS, "labels (one row per response, criterion and rater)", (
        Field("response_id", "the response's id", required=True),
        Field("criterion_id", "the criterion's id", required=True, names=("criterion",)),
        Field("cohort", "the rater's cohort", required=True, names=("group",)),
        Field("annotator", "the rater's user name", required=True, names=("rater", "user", "username")),
        Field("role", "annotator or checker"),
        *_DECISION,
        Field("rationale", "why", names=("comment", "comments", "reason")),
        Field("evidence", "quotes from the response (a JSON list, or one quote)", type="quotes", names=("quotes", "quote")),
        Field("time_spent_seconds", "time spent, in seconds", type="number",
              names=("time", "seconds", "time_spent", "lead_time")),
    ), key_fields=(("response_id",), ("criterion_id",), ("annotator",)), others="are left out"),
    JUDGMENTS: Kind(JUDGMENTS, "judgments (one row per response, criterion, judge and sample)", (
        Field("response_id", "the response's id", required=True),
        Field("criterion_id", "the criterion's id", required=True, names=("criterion",)),
        Field("judge", "the judge's name", required=True, names=("judge_name",)),
        Field("judge_model", "the judge's model (a new judge)"),
        Field("condition", "attributed or anonymized"),
        Field("sample", "the sample number (from 0)", type="integer"),
        *_DECISION,
        Field("explanation", "the judge's explanation", names=("reasoning",)),
        Field("evidence", "quotes from the response (a JSON list, or one quote)", type="quotes", names=("quotes",)),
        Field("raw", "the judge's raw output", names=("raw_output",)),
    ), key_fields=(("response_id",), ("criterion_id",), ("judge",)), others="are left out"),
}
KIND_NAMES = {"cases": RESPONSES, RESPONSES: RESPONSES, LABELS: LABELS, JUDGMENTS: JUDGMENTS, "gold": SKIP}
KIND_CHOICES = (*((k.name, k.title) for k in KINDS.values()), (SKIP, "skip: not imported"))


def normalized(header: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", header.casefold()).strip("_")


def metadata_key(header: str) -> str:
    """The case metadata key of a column no field takes: what follows ``metadata.`` exactly as it is;
    else the header, or, when it names one of the keys pages filter on (difficulty, register, task
    themes, specialties) in another case or spacing, that key."""
    if header.startswith(METADATA_PREFIX):
        return header[len(METADATA_PREFIX):]
    return normalized(header) if normalized(header) in KNOWN_METADATA else header


@dataclass(frozen=True)
class Plan:
    """How one table is read: its kind and the column of each field (by index)."""

    table: Table
    kind: str
    columns: dict  # field name -> header
    problems: tuple[str, ...]

    def index(self) -> dict[str, int]:
        return {name: self.table.headers.index(header) for name, header in self.columns.items() if header}

    def others(self) -> list[str]:
        taken = set(self.columns.values())
        return [h for h in self.table.headers if h not in taken]


def mapping_load(path: Path | None) -> dict:
    """The column mapping file, checked for its shape (the headers are checked against each table)."""
    if path is None:
        return {}
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise TableError(path.name, f"not a JSON mapping: {exc}") from None
    return mapping_check(data, name=path.name)


def mapping_check(data, *, name: str) -> dict:
    if not isinstance(data, dict):
        raise TableError(name, "the mapping must be a JSON object")
    _entry_check(data, name=name, where="", keys=("table", "columns", "tables"))
    tables = data.get("tables") or {}
    if not isinstance(tables, dict):
        raise TableError(name, "'tables' must be a JSON object: {NAME: {\"table\", \"columns\"}}", field="tables")
    for key, entry in tables.items():
        if not isinstance(entry, dict):
            raise TableError(name, f"tables[{key!r}] must be a JSON object", field=f"tables.{key}")
        _entry_check(entry, name=name, where=f"tables.{key}.", keys=("table", "columns"))
    return data


def _entry_check(entry: dict, *, name: str, where: str, keys: tuple[str, ...]) -> None:
    for key in entry:
        if key not in keys:
            raise TableError(name, f"unknown key {where + key!r} (use {', '.join(keys)})", field=where + key)
    kind = entry.get("table")
    if kind is not None and kind not in (*KINDS, SKIP):
        raise TableError(name, f"unknown table {kind!r} (use {', '.join((*KINDS, SKIP))})", field=where + "table")
    columns = entry.get("columns", {})
    if not isinstance(columns, dict) or not all(v is None or isinstance(v, str) for v in columns.values()):
        raise TableError(name, f"'{where}columns' must map fields to column headers (or null)", field=where + "columns")
    if kind in KINDS:
        unknown = [f for f in columns if KINDS[kind].field(f) is None]
        if unknown:
            raise TableError(name, f"{kind} tables have no field {unknown[0]!r} (they have "
                                   f"{', '.join(f.name for f in KINDS[kind].fields)})", field=where + "columns")


def _matched(kind: Kind, headers: list[str], chosen: dict) -> dict:
    """Each field's column: the chosen one, else the header named like it, else one of its usual names."""
    columns, taken = {}, {h for h in chosen.values() if h}
    by_name = {}
    for header in headers:
        by_name.setdefault(normalized(header), header)
    for f in kind.fields:
        if f.name in chosen:
            columns[f.name] = chosen[f.name]
            continue
        for candidate in (f.name, *f.names):
            header = by_name.get(candidate)
            if header is not None and header not in taken and not header.startswith(METADATA_PREFIX):
                columns[f.name] = header
                taken.add(header)
                break
        else:
            columns[f.name] = None
    return columns


def _fits(kind: Kind, columns: dict) -> bool:
    return all(any(columns[f] for f in group) for group in kind.key_fields)


def plan(table: Table, mapping: dict, *, mapping_name: str = "mapping") -> Plan:
    """How ``table`` is read under ``mapping``: its kind, each field's column, and what is wrong
    (a required field without a column, a kind that cannot be told, a header the table lacks)."""
    entry = {**{k: v for k, v in mapping.items() if k in ("table", "columns")},
             **((mapping.get("tables") or {}).get(table.key) or {})}
    chosen = dict(mapping.get("columns") or {})
    chosen.update(((mapping.get("tables") or {}).get(table.key) or {}).get("columns") or {})
    kind = entry.get("table") or KIND_NAMES.get(table.name.casefold())
    problems = []
    if not kind:
        fits = [k.name for k in KINDS.values() if _fits(k, _matched(k, table.headers, chosen))]
        if len(fits) == 1:
            kind = fits[0]
        elif fits:
            problems.append(f"its columns fit a table of {' and of '.join(fits)}: say which it is")
        else:
            problems.append("its columns fit no table (" + "; ".join(
                f"{k.name}: {', '.join(' or '.join(group) for group in k.key_fields)}" for k in KINDS.values())
                + "): say which it is and map its columns")
    if kind == SKIP or not kind:
        return Plan(table, kind or "", {}, tuple(problems))
    spec = KINDS[kind]
    chosen = {f: h for f, h in chosen.items() if spec.field(f) is not None}
    columns = _matched(spec, table.headers, chosen)
    for f, header in columns.items():
        if header and header not in table.headers:
            problems.append(f"the {mapping_name} names column {header!r} for {f}, and {table.label} has no such column")
    used: dict[str, str] = {}
    for f, header in columns.items():
        if header:
            if header in used:
                problems.append(f"column {header!r} is chosen for both {used[header]} and {f}")
            used[header] = f
    for f in spec.fields:
        if f.required and not columns[f.name]:
            problems.append(f"no column for {f.name} ({f.help})")
    if kind == RESPONSES and not (columns["model"] or columns["text"]) and not (columns["prompt"] or columns["messages"]):
        problems.append("no column for the prompt (or messages) nor for the response's model and text")
    if kind == RESPONSES and bool(columns["model"]) != bool(columns["text"]):
        problems.append(f"a response needs both its model and its text: no column for {'text' if columns['model'] else 'model'}")
    return Plan(table, kind, columns, tuple(problems))
