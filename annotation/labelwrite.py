"""The one write service of labels: every change of a human label, whatever its entry point (the
labeling page, the single and batch API, the checker review, the admin, a re-import), goes
through ``labels_write``; a bundle import's new labels are copied in bulk and get their history
rows from ``labels_import_history``; a deletion goes through ``labels_delete``.

What every path gets, in one place:
- validation once: the decision against its criterion (``decisions.decision_validate``), quotes
  verified against the stored response text, the rationale, quote and time caps, the criterion in
  the rubric the response is judged against, and the cohort, the annotator (a member of that
  cohort) and the response in one project;
- a revision check: an interactive change names the revision it was made against
  (``expected_revision``, 0 for a label not saved yet) and is refused (``LabelConflict``) when the
  label changed since; only a path that means to overwrite says so (``replace=True``: imports),
  and its history row says it replaced;
- one history row per change, in the same transaction as the change; a deletion appends one too
  and keeps every earlier row (``LabelHistory.label`` is not a cascading key).

It is set-based: a batch of N changes costs a constant number of statements (read the targets,
insert the new labels, update the changed ones guarded by their revisions, append the history
rows, mark the assignment in progress), whatever N. Statements are plain SQL for both supported
databases (PostgreSQL, and SQLite 3.35+ whose writers are serialized by IMMEDIATE transactions),
because the ORM's query building cost more than the database work on the labeling page's hot path.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import DEFERRED
from django.http import Http404
from django.utils import timezone

from evalsite.converters import id_in_range

from .decisions import DecisionError, decision_validate
from .markdown import quote_in_response
from .models import Assignment, Case, Cohort, CohortMembership, Criterion, Label, LabelHistory, Response

MAX_RATIONALE = 5000  # characters of a rationale
MAX_QUOTE = 2000  # characters of one evidence quote
MAX_QUOTES = 100  # quotes on one label
MAX_SECONDS = 24 * 3600.0  # time spent on one decision
BATCH_MAX = 500  # changes in one interactive batch

_A = Assignment._meta.db_table
_C = Criterion._meta.db_table
_L = Label._meta.db_table
_H = LabelHistory._meta.db_table
_R = Response._meta.db_table
_K = Case._meta.db_table
_O = Cohort._meta.db_table
_M = CohortMembership._meta.db_table

ASSIGNMENT_COLUMNS = ("id", "project_id", "cohort_id", "response_id", "annotator_id", "status", "position")
CRITERION_COLUMNS = (
    "id", "project_id", "case_id", "rubric_version_id", "external_id", "position", "text", "kind", "weight",
    "options", "tags", "min_evidence", "checklist_of", "variants", "guidance",
)
LABEL_COLUMNS = (
    "id", "project_id", "response_id", "criterion_id", "rubric_version_id", "cohort_id", "annotator_id", "role",
    "assignment_id", "import_batch_id", "verdict", "option_label", "value", "rationale", "evidence",
    "time_spent_seconds", "revision",
)
FINAL_STATUSES = (Assignment.SUBMITTED, Assignment.CHECKED)
EDITABLE_STATUSES = (Assignment.OPEN, Assignment.IN_PROGRESS)


class LabelConflict(ValidationError):
    """The label changed since the revision the caller saw (another tab, a manager, an import)."""

    def __init__(self, label: Label | None):
        revision = label.revision if label else 0
        super().__init__(
            {"revision": f"changed in another tab or window, or changed elsewhere by a reviewer or manager (now revision"
                         f" {revision}); your change was not applied"},
            code="conflict",
        )
        self.label = label


class BatchRefused(ValidationError):
    """One change of a batch was refused, so none was applied; ``index`` and ``criterion_id``
    name it, ``conflict`` says whether it was a stale revision (``LabelConflict``)."""

    def __init__(self, *, index: int, criterion_id: int, error: ValidationError):
        self.index, self.criterion_id, self.error = index, criterion_id, error
        self.conflict = isinstance(error, LabelConflict)
        detail = "; ".join(error.messages)
        super().__init__({"labels": f"decision {index + 1} (criterion {criterion_id}): {detail}; nothing was saved"},
                         code="conflict" if self.conflict else "invalid")


@dataclass
class LabelChange:
    """One change asked of a label. A decision (``verdict`` / ``option_label`` / ``value``) or,
    left empty, the stored one kept; ``rationale`` and ``evidence`` None keep the stored ones;
    ``evidence_add`` / ``evidence_remove`` change one quote (the labeling page's clicks).

    On the assignment path (``labels_write(assignment_id=...)``) the label is the assignment
    annotator's own for ``criterion_id``; elsewhere ``response_id``, ``cohort_id``, ``owner_id``
    (the annotator, or for a checker label the checker who records it) and ``role`` name it.
    """

    criterion_id: int
    verdict: str | None = None
    option_label: str | None = None
    value: float | None = None
    rationale: str | None = None
    evidence: list[str] | None = None
    evidence_add: str | None = None
    evidence_remove: str | None = None
    time_spent_seconds: float | None = None
    expected_revision: int | None = None
    response_id: int | None = None
    cohort_id: int | None = None
    owner_id: int | None = None
    role: str = Label.ANNOTATOR_ROLE
    assignment_id: int | None = None


@dataclass
class _Target:
    change: LabelChange
    project_id: int
    response_id: int
    cohort_id: int
    owner_id: int
    role: str
    assignment_id: int | None
    criterion: Criterion
    label: Label | None = None
    new: dict = field(default_factory=dict)


def label_state(label) -> dict:
    """The part of a label its history records (of a Label, or of anything with its fields)."""
    return {
        "verdict": label.verdict,
        "option": label.option_label,
        "value": label.value,
        "rationale": label.rationale,
        "evidence": list(label.evidence or []),
        "role": label.role,
    }


# --- reading the targets ------------------------------------------------------------------------


def _quoted(alias: str, columns: Sequence[str]) -> str:
    return ", ".join(f"{alias}.{connection.ops.quote_name(c)}" for c in columns)


def _instance(model, columns: Sequence[str], values):
    """A model instance from raw column values (the other fields deferred), JSON decoded."""
    given = dict(zip(columns, values))
    row = []
    for fld in model._meta.concrete_fields:  # from_db takes values in the model's field order
        value = given.get(fld.attname, DEFERRED)
        if value is not None and value is not DEFERRED and hasattr(fld, "from_db_value"):
            value = fld.from_db_value(value, None, connection)
        row.append(value)
    return model.from_db(connection.alias, list(columns), row)


def _placeholders(n: int) -> str:
    return ", ".join(["%s"] * n)


def _lock() -> str:
    return " FOR UPDATE" if connection.features.has_select_for_update else ""


def _assignment_targets(*, assignment_id: int, user, changes: list[LabelChange]) -> tuple[Assignment, list[_Target | None]]:
    """Lock the user's own assignment (404 for anybody else's or an unknown id) and read, in the
    same statement, the criteria of ``changes`` (in the rubric the response is judged against) and
    the annotator's current labels of them; None where a criterion is not in that rubric.

    The lock serializes two tabs of one annotator. On PostgreSQL a statement that waited for it
    still reads the labels as they were when it started: a label saved meanwhile is caught by the
    write (the revision-guarded update finds no row, the insert finds one) and read again.
    """
    if not id_in_range(assignment_id):
        raise Http404("No such assignment")
    ids = [c.criterion_id for c in changes if id_in_range(c.criterion_id)] or [0]
    # One array on PostgreSQL: the statement's text stays the same whatever the batch size.
    in_ids, id_params = ("= ANY(%s)", [ids]) if connection.vendor == "postgresql" else \
        (f"IN ({_placeholders(len(ids))})", ids)
    lock = " FOR UPDATE OF a" if connection.features.has_select_for_update else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_quoted('a', ASSIGNMENT_COLUMNS)}, {_quoted('c', CRITERION_COLUMNS)}, {_quoted('l', LABEL_COLUMNS)}"
            f" FROM {_A} a JOIN {_R} r ON r.id = a.response_id JOIN {_K} k ON k.id = r.case_id"
            f" LEFT JOIN {_C} c ON c.rubric_version_id = k.rubric_version_id AND c.id {in_ids}"
            f" LEFT JOIN {_L} l ON l.response_id = r.id AND l.criterion_id = c.id AND l.annotator_id = a.annotator_id"
            f" WHERE a.id = %s AND a.annotator_id = %s{lock}",
            [*id_params, assignment_id, user.pk],
        )
        rows = cursor.fetchall()
    if not rows:
        raise Http404("No such assignment")
    na, nc = len(ASSIGNMENT_COLUMNS), len(CRITERION_COLUMNS)
    assignment = _instance(Assignment, ASSIGNMENT_COLUMNS, rows[0][:na])
    found: dict[int, tuple[Criterion, Label | None]] = {}
    for row in rows:
        if row[na] is None:
            continue
        criterion = _instance(Criterion, CRITERION_COLUMNS, row[na:na + nc])
        label = _instance(Label, LABEL_COLUMNS, row[na + nc:]) if row[na + nc] is not None else None
        found[criterion.pk] = (criterion, label)
    targets = []
    for change in changes:
        hit = found.get(change.criterion_id)
        targets.append(None if hit is None else _Target(
            change=change, project_id=assignment.project_id, response_id=assignment.response_id,
            cohort_id=assignment.cohort_id, owner_id=assignment.annotator_id, role=Label.ANNOTATOR_ROLE,
            assignment_id=assignment.pk, criterion=hit[0], label=hit[1],
        ))
    return assignment, targets


def _chunks(items: list, size: int = 400):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _keyed_targets(changes: list[LabelChange]) -> list[_Target]:
    """Targets named by (response, criterion, cohort, owner, role), checked to belong together: the
    criterion in the rubric the response is judged against, the cohort in the response's project,
    the owner a member of the cohort (a checker for a checker label). The current labels are read
    locked. A handful of statements, whatever the number of changes."""
    response_ids = sorted({c.response_id for c in changes})
    criterion_ids = sorted({c.criterion_id for c in changes})
    cohort_ids = sorted({c.cohort_id for c in changes})
    owner_ids = sorted({c.owner_id for c in changes})
    responses: dict[int, tuple[int, int]] = {}
    criteria: dict[int, Criterion] = {}
    cohorts: dict[int, int] = {}
    members: dict[tuple[int, int], str] = {}
    with connection.cursor() as cursor:
        for chunk in _chunks(response_ids):
            cursor.execute(f"SELECT r.id, r.project_id, k.rubric_version_id FROM {_R} r JOIN {_K} k ON k.id = r.case_id"
                           f" WHERE r.id IN ({_placeholders(len(chunk))})", chunk)
            responses.update({pk: (project, rubric) for pk, project, rubric in cursor.fetchall()})
        for chunk in _chunks(criterion_ids):
            cursor.execute(f"SELECT {_quoted('c', CRITERION_COLUMNS)} FROM {_C} c WHERE c.id IN ({_placeholders(len(chunk))})",
                           chunk)
            for row in cursor.fetchall():
                criterion = _instance(Criterion, CRITERION_COLUMNS, row)
                criteria[criterion.pk] = criterion
        cursor.execute(
            f"SELECT o.id, o.project_id, m.user_id, m.role FROM {_O} o LEFT JOIN {_M} m ON m.cohort_id = o.id"
            f" AND m.user_id IN ({_placeholders(len(owner_ids))}) WHERE o.id IN ({_placeholders(len(cohort_ids))})",
            [*owner_ids, *cohort_ids],
        )
        for cohort_id, project_id, user_id, role in cursor.fetchall():
            cohorts[cohort_id] = project_id
            if user_id is not None:
                members[(cohort_id, user_id)] = role
        labels: dict[tuple, Label] = {}
        pairs = sorted({(c.response_id, c.criterion_id) for c in changes})
        for chunk in _chunks(pairs):
            values = ", ".join(["(%s, %s)"] * len(chunk))
            cursor.execute(
                f"SELECT {_quoted('l', LABEL_COLUMNS)} FROM {_L} l WHERE (l.response_id, l.criterion_id) IN"
                f" (VALUES {values}){_lock()}", [v for pair in chunk for v in pair],
            )
            for row in cursor.fetchall():
                label = _instance(Label, LABEL_COLUMNS, row)
                if label.role == Label.CHECKER_ROLE:
                    labels[("checker", label.response_id, label.criterion_id, label.cohort_id)] = label
                else:
                    labels[("own", label.response_id, label.criterion_id, label.annotator_id)] = label
    targets = []
    for change in changes:
        response = responses.get(change.response_id)
        criterion = criteria.get(change.criterion_id)
        if response is None:
            raise ValidationError({"response": f"no response with id {change.response_id}"})
        if criterion is None or criterion.rubric_version_id != response[1]:
            name = criterion.external_id if criterion is not None else change.criterion_id
            raise ValidationError({"criterion": f"criterion {name!r} is not in the rubric of this response"})
        if cohorts.get(change.cohort_id) != response[0]:
            raise ValidationError({"cohort": "the cohort is not one of this response's project"})
        member_role = members.get((change.cohort_id, change.owner_id))
        if member_role is None:
            raise ValidationError({"annotator": "the annotator is not a member of this cohort"})
        if change.role not in (Label.ANNOTATOR_ROLE, Label.CHECKER_ROLE):
            raise ValidationError({"role": f"role {change.role!r} is not annotator or checker"})
        if change.role == Label.CHECKER_ROLE:
            if member_role != CohortMembership.CHECKER:
                raise ValidationError({"annotator": "only a checker of the cohort records its checker label"})
            label = labels.get(("checker", change.response_id, change.criterion_id, change.cohort_id))
        else:
            label = labels.get(("own", change.response_id, change.criterion_id, change.owner_id))
        targets.append(_Target(
            change=change, project_id=response[0], response_id=change.response_id, cohort_id=change.cohort_id,
            owner_id=change.owner_id, role=change.role, criterion=criterion, label=label,
            assignment_id=change.assignment_id if change.role == Label.ANNOTATOR_ROLE else None,
        ))
    return targets


def _response_texts(response_ids: set[int]) -> dict[int, str]:
    with connection.cursor() as cursor:
        ids = sorted(response_ids)
        cursor.execute(f"SELECT id, text FROM {_R} WHERE id IN ({_placeholders(len(ids))})", ids)
        return dict(cursor.fetchall())


# --- deciding what each change does -------------------------------------------------------------


def label_input_check(*, rationale: str | None = None, quotes: Sequence[str] = (),
                      time_spent_seconds: float | None = None) -> None:
    """The caps every path applies to what a person typed (the importer calls it per line too)."""
    if rationale is not None and len(rationale) > MAX_RATIONALE:
        raise ValidationError({"rationale": f"a rationale can be at most {MAX_RATIONALE:,} characters"})
    if len(quotes) > MAX_QUOTES:
        raise ValidationError({"evidence": f"at most {MAX_QUOTES} quotes on one decision"})
    for quote in quotes:
        if len(quote) > MAX_QUOTE:
            raise ValidationError({"quote": f"a quote can be at most {MAX_QUOTE:,} characters"})
    if time_spent_seconds is not None and not (0 <= time_spent_seconds <= MAX_SECONDS):
        raise ValidationError({"time_spent_seconds": f"time spent must be between 0 and {MAX_SECONDS:,.0f} seconds"})


def _would_be(label: Label, new: dict) -> bool:
    return (
        (label.verdict, label.option_label, label.value) == (new["verdict"], new["option_label"], new["value"])
        and new["rationale"] == label.rationale
        and list(label.evidence or []) == new["evidence"]
    )


def _new_state(target: _Target, texts: dict[int, str] | None) -> dict:
    """The label's fields after the change, validated (``ValidationError`` naming the field)."""
    change, label, criterion = target.change, target.label, target.criterion
    verdict, option_label, value = change.verdict, change.option_label, change.value
    if verdict is None and option_label is None and value is None:
        if label is None:
            raise ValidationError({"verdict": "choose a decision first, then add a rationale or evidence"})
        verdict, option_label = label.verdict, label.option_label
        value = label.value if label.option_label is None and label.verdict is None else None
    try:
        decision = decision_validate(kind=criterion.kind, options=criterion.options, verdict=verdict,
                                     option_label=option_label, value=value)
    except DecisionError as exc:
        raise ValidationError({exc.field: exc.message}) from exc
    if change.evidence is not None:
        evidence = [str(q).strip() for q in change.evidence]
        evidence = list(dict.fromkeys(q for q in evidence if q))
        fresh = [q for q in evidence if label is None or q not in (label.evidence or [])]
    else:
        evidence = list(label.evidence or []) if label else []
        fresh = []
    if change.evidence_add is not None:
        quote = change.evidence_add.strip()
        if quote not in evidence:
            evidence.append(quote)
            fresh.append(quote)
    if change.evidence_remove is not None and change.evidence_remove in evidence:
        evidence.remove(change.evidence_remove)
    rationale = change.rationale if change.rationale is not None else (label.rationale if label else "")
    label_input_check(rationale=rationale, quotes=fresh, time_spent_seconds=change.time_spent_seconds)
    if fresh:
        text = texts[target.response_id]
        for quote in fresh:
            if not quote_in_response(quote=quote, text=text):
                raise ValidationError({"quote": f"the quote is not part of the response text: {quote[:60]!r}"})
    return {
        "verdict": decision.verdict, "option_label": decision.option_label, "value": decision.value,
        "rationale": rationale, "evidence": evidence, "role": target.role,
        "time_spent_seconds": change.time_spent_seconds if change.time_spent_seconds is not None
        else (label.time_spent_seconds if label else None),
    }


# --- writing ------------------------------------------------------------------------------------


def _json_text(value) -> str | None:
    return None if value is None else json.dumps(value)


def _rows_source(columns: Sequence[tuple[str, str]], rows: list[tuple]) -> tuple[str, list, dict[str, str]]:
    """A table of ``rows`` to select from in one statement, as (FROM clause, parameters, how each
    column is referred to). ``columns`` are (name, PostgreSQL type); JSON goes as text ("json").

    PostgreSQL gets one array per column (``unnest``), so the statement's text, and psycopg's
    parsing of it, is the same whatever the number of rows; SQLite gets a VALUES list.
    """
    if connection.vendor == "postgresql":
        types = {"json": "text"}
        source = "unnest(" + ", ".join(f"%s::{types.get(kind, kind)}[]" for _, kind in columns) + ")"
        source += " AS v(" + ", ".join(name for name, _ in columns) + ")"
        params = [list(column) for column in zip(*rows)]
        refs = {name: f"v.{name}::jsonb" if kind == "json" else f"v.{name}" for name, kind in columns}
        return source, params, refs
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"
    source = f"(VALUES {', '.join([row] * len(rows))}) AS v"
    return source, [value for r in rows for value in r], {name: f"v.column{i + 1}" for i, (name, _) in enumerate(columns)}


_INSERT_COLUMNS = (
    ("project_id", "bigint"), ("response_id", "bigint"), ("criterion_id", "bigint"), ("rubric_version_id", "bigint"),
    ("cohort_id", "bigint"), ("annotator_id", "bigint"), ("role", "varchar"), ("assignment_id", "bigint"),
    ("verdict", "varchar"), ("option_label", "varchar"), ("value", "double precision"), ("rationale", "text"),
    ("evidence", "json"), ("time_spent_seconds", "double precision"),
)


def _insert(targets: list[_Target], stamp, batch_id: int | None) -> None:
    rows = []
    for t in targets:
        n = t.new
        rows.append((t.project_id, t.response_id, t.criterion.pk, t.criterion.rubric_version_id, t.cohort_id,
                     t.owner_id, n["role"], t.assignment_id, n["verdict"], n["option_label"], n["value"],
                     n["rationale"], json.dumps(n["evidence"]), n["time_spent_seconds"]))
    source, params, refs = _rows_source(_INSERT_COLUMNS, rows)
    names = [name for name, _ in _INSERT_COLUMNS]
    with connection.cursor() as cursor:
        # No conflict target: either unique key (own label, or the cohort's checker label) stops a
        # label somebody else inserted meanwhile; that target then comes back missing.
        cursor.execute(
            f"INSERT INTO {_L} ({', '.join(names)}, import_batch_id, revision, created_at, updated_at)"
            f" SELECT {', '.join(refs[name] for name in names)}, %s, 1, %s, %s FROM {source} WHERE 1 = 1"
            " ON CONFLICT DO NOTHING RETURNING id, response_id, criterion_id, annotator_id, role, cohort_id",
            [batch_id, stamp, stamp, *params],  # the SELECT list's constants come before the FROM's rows
        )
        returned = cursor.fetchall()
    ids = {}
    for pk, response_id, criterion_id, annotator_id, role, cohort_id in returned:
        key = (response_id, criterion_id, cohort_id) if role == Label.CHECKER_ROLE else (response_id, criterion_id, annotator_id)
        ids[key] = pk
    for t in targets:
        key = (t.response_id, t.criterion.pk, t.cohort_id) if t.role == Label.CHECKER_ROLE else \
            (t.response_id, t.criterion.pk, t.owner_id)
        if key not in ids:  # inserted meanwhile by somebody else: read again, and judge the change against it
            raise _StaleRead()
        t.new["id"], t.new["revision"] = ids[key], 1


_UPDATE_COLUMNS = (
    ("id", "bigint"), ("old_revision", "integer"), ("verdict", "varchar"), ("option_label", "varchar"),
    ("value", "double precision"), ("rationale", "text"), ("evidence", "json"), ("time_spent_seconds", "double precision"),
    ("role", "varchar"), ("annotator_id", "bigint"), ("rubric_version_id", "bigint"), ("revision", "integer"),
)


def _update(targets: list[_Target], stamp) -> None:
    """One UPDATE for every changed label, each guarded by the revision that was read."""
    rows = []
    for t in targets:
        n = t.new
        n["id"], n["revision"] = t.label.pk, t.label.revision + 1
        rows.append((t.label.pk, t.label.revision, n["verdict"], n["option_label"], n["value"], n["rationale"],
                     json.dumps(n["evidence"]), n["time_spent_seconds"], n["role"], t.owner_id,
                     t.criterion.rubric_version_id, n["revision"]))
    source, params, refs = _rows_source(_UPDATE_COLUMNS, rows)
    sets = ", ".join(f"{name} = {refs[name]}" for name, _ in _UPDATE_COLUMNS[2:])
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_L} SET {sets}, updated_at = %s FROM {source}"
            f" WHERE {_L}.id = {refs['id']} AND {_L}.revision = {refs['old_revision']}",
            [stamp, *params],
        )
        if cursor.rowcount != len(targets):
            raise _StaleRead()


class _StaleRead(Exception):
    """A label changed between the read and the guarded write (a change made outside the labeling
    page's assignment lock): the caller rolls back and reads again, locked."""


_HISTORY_COLUMNS = (("label_id", "bigint"), ("project_id", "bigint"), ("action", "varchar"), ("old", "json"),
                    ("new", "json"), ("note", "text"))


def _history(entries: list[tuple], stamp, user) -> None:
    """Append one history row per (label id, project id, action, old, new, note)."""
    if not entries:
        return
    rows = [(label_id, project_id, action, _json_text(old), _json_text(new), note)
            for label_id, project_id, action, old, new, note in entries]
    source, params, refs = _rows_source(_HISTORY_COLUMNS, rows)
    names = [name for name, _ in _HISTORY_COLUMNS]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_H} ({', '.join(names)}, changed_by_id, changed_at)"
            f" SELECT {', '.join(refs[name] for name in names)}, %s, %s FROM {source}",
            [user.pk if user is not None else None, stamp, *params],
        )


def _result_label(t: _Target, now) -> Label:
    """The label as it is now (the one read, where nothing changed), its criterion attached."""
    if t.new is None:
        t.label.criterion = t.criterion
        return t.label
    label = t.label or Label(
        id=t.new["id"], project_id=t.project_id, response_id=t.response_id, criterion_id=t.criterion.pk,
        cohort_id=t.cohort_id, assignment_id=t.assignment_id, created_at=now,
    )
    label._state.adding, label._state.db = False, connection.alias
    for name in ("verdict", "option_label", "value", "rationale", "evidence", "role", "time_spent_seconds", "revision"):
        setattr(label, name, t.new[name])
    label.annotator_id, label.rubric_version_id, label.updated_at = t.owner_id, t.criterion.rubric_version_id, now
    label.criterion = t.criterion
    return label


def _apply(targets: list[_Target], *, user, action: str, note: str, replace: bool, assignment: Assignment | None,
           batch: bool, batch_id: int | None = None) -> list[Label]:
    """Validate every target's change, check revisions, write the changed ones set-based with
    their history rows; the labels as they are now, in order (``BatchRefused`` names a refused one
    when there are several)."""
    needs_text = {t.response_id for t in targets
                  if t.change.evidence_add is not None or t.change.evidence is not None}
    texts = _response_texts(needs_text) if needs_text else None
    inserts, updates = [], []
    for index, t in enumerate(targets):
        try:
            t.new = _new_state(t, texts)
            current = t.label.revision if t.label else 0
            expected = t.change.expected_revision
            if not replace and expected is None and assignment is None:
                raise ValidationError({"revision": "say which revision of the label this change was made against"})
            if not replace and expected is not None and expected != current:
                if t.label is not None and _would_be(t.label, t.new):
                    t.new = None  # a retry of a change that is already stored
                else:
                    raise LabelConflict(t.label)
        except ValidationError as exc:
            if not batch:
                raise
            raise BatchRefused(index=index, criterion_id=t.change.criterion_id, error=exc) from None
        if t.new is None:
            continue
        old = label_state(t.label) if t.label else None
        new = label_state(_Fields(t.new))
        same_owner = t.label is None or t.label.annotator_id == t.owner_id
        if old == new and same_owner and (t.label is None or t.new["time_spent_seconds"] == t.label.time_spent_seconds):
            t.new = None
            continue
        t.new["old"], t.new["state"] = old, new
        (updates if t.label is not None else inserts).append(t)
    now = timezone.now()
    stamp = connection.ops.adapt_datetimefield_value(now)
    shown = f"replace ({note})" if replace and note else ("replace" if replace else note)
    start = assignment if assignment is not None and assignment.status == Assignment.OPEN else None
    if connection.vendor == "postgresql":
        _write_postgres(inserts, updates, stamp=stamp, user=user, action=action, note=shown, batch_id=batch_id,
                        start=start)
    else:
        if inserts:
            _insert(inserts, stamp, batch_id)
        if updates:
            _update(updates, stamp)
        _history([(t.new["id"], t.project_id, action, t.new["old"], t.new["state"], shown) for t in inserts + updates],
                 stamp, user)
        if start is not None:
            with connection.cursor() as cursor:
                cursor.execute(f"UPDATE {_A} SET status = %s WHERE id = %s", [Assignment.IN_PROGRESS, start.pk])
    if start is not None:  # an open assignment becomes "in progress" with its first save
        start.status = Assignment.IN_PROGRESS
    return [_result_label(t, now) for t in targets]


def _write_postgres(inserts: list[_Target], updates: list[_Target], *, stamp, user, action: str, note: str,
                    batch_id: int | None, start: Assignment | None) -> None:
    """On PostgreSQL the inserts, the guarded updates, their history rows and the assignment's
    start go as one statement of data-modifying CTEs (one round trip, the same text whatever the
    batch size); the rows it returns say which labels were inserted and updated."""
    parts, params = [], []
    user_id = user.pk if user is not None else None
    if inserts:
        rows = [(t.project_id, t.response_id, t.criterion.pk, t.criterion.rubric_version_id, t.cohort_id, t.owner_id,
                 t.new["role"], t.assignment_id, t.new["verdict"], t.new["option_label"], t.new["value"],
                 t.new["rationale"], json.dumps(t.new["evidence"]), t.new["time_spent_seconds"],
                 json.dumps(t.new["state"])) for t in inserts]
        source, values, refs = _rows_source((*_INSERT_COLUMNS, ("state", "json")), rows)
        names = [name for name, _ in _INSERT_COLUMNS]
        parts += [
            f"vi AS (SELECT {', '.join(f'{refs[n]} AS {n}' for n in (*names, 'state'))} FROM {source})",
            f"ins AS (INSERT INTO {_L} ({', '.join(names)}, import_batch_id, revision, created_at, updated_at)"
            f" SELECT {', '.join(names)}, %s, 1, %s, %s FROM vi WHERE 1 = 1 ON CONFLICT DO NOTHING"
            " RETURNING id, project_id, response_id, criterion_id, annotator_id, role, cohort_id)",
            f"hi AS (INSERT INTO {_H} (label_id, project_id, changed_by_id, changed_at, action, old, new, note)"
            " SELECT ins.id, ins.project_id, %s, %s, %s, NULL, vi.state, %s FROM ins JOIN vi"
            " ON vi.response_id = ins.response_id AND vi.criterion_id = ins.criterion_id"
            " AND vi.annotator_id = ins.annotator_id AND vi.role = ins.role)",
        ]
        params += [*values, batch_id, stamp, stamp, user_id, stamp, action, note]
    if updates:
        rows = []
        for t in updates:
            t.new["id"], t.new["revision"] = t.label.pk, t.label.revision + 1
            rows.append((t.label.pk, t.label.revision, t.new["verdict"], t.new["option_label"], t.new["value"],
                         t.new["rationale"], json.dumps(t.new["evidence"]), t.new["time_spent_seconds"], t.new["role"],
                         t.owner_id, t.criterion.rubric_version_id, t.new["revision"], t.project_id,
                         json.dumps(t.new["old"]), json.dumps(t.new["state"])))
        columns = (*_UPDATE_COLUMNS, ("project_id", "bigint"), ("old", "json"), ("state", "json"))
        source, values, refs = _rows_source(columns, rows)
        sets = ", ".join(f"{name} = vu.{name}" for name, _ in _UPDATE_COLUMNS[2:])
        parts += [
            f"vu AS (SELECT {', '.join(f'{refs[n]} AS {n}' for n, _ in columns)} FROM {source})",
            f"upd AS (UPDATE {_L} SET {sets}, updated_at = %s FROM vu"
            f" WHERE {_L}.id = vu.id AND {_L}.revision = vu.old_revision RETURNING {_L}.id)",
            f"hu AS (INSERT INTO {_H} (label_id, project_id, changed_by_id, changed_at, action, old, new, note)"
            " SELECT upd.id, vu.project_id, %s, %s, %s, vu.old, vu.state, %s FROM upd JOIN vu ON vu.id = upd.id)",
        ]
        params += [*values, stamp, user_id, stamp, action, note]
    if start is not None:
        parts.append(f"st AS (UPDATE {_A} SET status = %s WHERE id = %s AND status = %s)")
        params += [Assignment.IN_PROGRESS, start.pk, Assignment.OPEN]
    if not parts:
        return
    returned = ["SELECT 'i', id, response_id, criterion_id, annotator_id, role, cohort_id FROM ins"] if inserts else []
    if updates:
        returned.append("SELECT 'u', id, NULL, NULL, NULL, NULL, NULL FROM upd")
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {', '.join(parts)} " + (" UNION ALL ".join(returned) or "SELECT 1 WHERE false"), params)
        rows = cursor.fetchall()
    inserted = {}
    updated = 0
    for kind, pk, response_id, criterion_id, annotator_id, role, cohort_id in rows:
        if kind == "u":
            updated += 1
        else:
            inserted[(response_id, criterion_id, annotator_id, role)] = pk
    if updated != len(updates):
        raise _StaleRead()
    for t in inserts:
        pk = inserted.get((t.response_id, t.criterion.pk, t.owner_id, t.role))
        if pk is None:  # inserted meanwhile by somebody else: read again, and judge the change against it
            raise _StaleRead()
        t.new["id"], t.new["revision"] = pk, 1


class _Fields:
    def __init__(self, new: dict):
        self.verdict, self.option_label, self.value = new["verdict"], new["option_label"], new["value"]
        self.rationale, self.evidence, self.role = new["rationale"], new["evidence"], new["role"]


def labels_write(*, changes: list[LabelChange], user, action: str, note: str = "", replace: bool = False,
                 assignment_id: int | None = None, batch: bool = False) -> tuple[Assignment | None, list[Label]]:
    """Apply ``changes`` all or none and return (the assignment, the labels as they are now).

    With ``assignment_id`` the changes are the assignment annotator's own labels from the labeling
    page or the API: the assignment is locked, must be the ``user``'s (404) and open or in progress
    (read-only once submitted); an unknown criterion is a 404. With ``batch=True`` a refused change
    raises ``BatchRefused`` naming it (the read-only refusal and the batch's own shape stay plain).
    Without it each change names its response, cohort, owner and role (review, admin, re-import).
    ``replace=True`` overwrites whatever is stored (imports); every other change must carry the
    revision it was made against. A criterion may appear once per label in one call.
    """
    if not changes:
        raise ValidationError({"labels": "send at least one decision"})
    for _attempt in range(2):
        try:
            with transaction.atomic():
                return _labels_write_once(changes=changes, user=user, action=action, note=note, replace=replace,
                                          assignment_id=assignment_id, batch=batch)
        except _StaleRead:
            continue  # somebody changed a label between our read and our write: judge against the new state
    raise LabelConflict(None)


def _labels_write_once(*, changes, user, action, note, replace, assignment_id, batch):
    assignment = None
    if assignment_id is not None:
        if len(changes) > BATCH_MAX:
            raise ValidationError({"labels": f"at most {BATCH_MAX} decisions per batch, not {len(changes)}"})
        seen: set[int] = set()
        for index, change in enumerate(changes):
            if change.criterion_id in seen:
                raise ValidationError({"labels": f"decision {index + 1}: criterion {change.criterion_id} appears "
                                                 "twice; send one decision per criterion"})
            seen.add(change.criterion_id)
        assignment, targets = _assignment_targets(assignment_id=assignment_id, user=user, changes=changes)
        if assignment.status not in EDITABLE_STATUSES:
            raise ValidationError({"assignment": "this assignment is submitted and read-only"}, code="read_only")
        for index, target in enumerate(targets):
            if target is None:
                if not batch:
                    raise Http404("No such criterion")
                raise BatchRefused(index=index, criterion_id=changes[index].criterion_id,
                                   error=ValidationError({"criterion": "not a criterion of this assignment"}))
    else:
        targets = _keyed_targets(changes)
        seen_keys: set[tuple] = set()
        for t in targets:
            key = (t.response_id, t.criterion.pk, t.role, t.cohort_id if t.role == Label.CHECKER_ROLE else t.owner_id)
            if key in seen_keys:
                raise ValidationError({"labels": f"two changes of one label (criterion {t.criterion.external_id!r})"})
            seen_keys.add(key)
    labels = _apply(targets, user=user, action=action, note=note, replace=replace, assignment=assignment, batch=batch)
    return assignment, labels


# --- imports and deletions ----------------------------------------------------------------------


def labels_import_history(*, batch_id: int, project_id: int, user, note: str) -> int:
    """One "import" history row for every label a bundle import copied in (``import_batch_id``),
    written by one INSERT ... SELECT: the state the label was created with."""
    if connection.vendor == "postgresql":
        state = ("jsonb_build_object('verdict', l.verdict, 'option', l.option_label, 'value', l.value,"
                 " 'rationale', l.rationale, 'evidence', l.evidence, 'role', l.role)")
    else:
        state = ("json_object('verdict', l.verdict, 'option', l.option_label, 'value', l.value,"
                 " 'rationale', l.rationale, 'evidence', json(l.evidence), 'role', l.role)")
    stamp = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_H} (label_id, project_id, changed_by_id, changed_at, action, old, new, note)"
            f" SELECT l.id, l.project_id, %s, %s, 'import', NULL, {state}, %s FROM {_L} l"
            f" WHERE l.import_batch_id = %s AND l.project_id = %s",
            [user.pk if user is not None else None, stamp, note, batch_id, project_id],
        )
        return cursor.rowcount


@transaction.atomic
def labels_delete(*, label_ids: Sequence[int], user, note: str = "") -> int:
    """Delete labels, keeping their history: one "delete" row each records who deleted what (the
    last state, and whose label on which response and criterion) before the label goes."""
    ids = [pk for pk in label_ids if id_in_range(pk)]
    if not ids:
        return 0
    rows = list(
        Label.objects.select_for_update(of=("self",)).filter(pk__in=ids)
        .values_list("pk", "project_id", "verdict", "option_label", "value", "rationale", "evidence", "role",
                     "response__external_id", "criterion__external_id", "annotator__username", "cohort__name")
    )
    entries = []
    for pk, project_id, verdict, option, value, rationale, evidence, role, response, criterion, annotator, cohort in rows:
        old = {"verdict": verdict, "option": option, "value": value, "rationale": rationale,
               "evidence": list(evidence or []), "role": role, "response": response, "criterion": criterion,
               "annotator": annotator, "cohort": cohort}
        entries.append((pk, project_id, "delete", old, None, note))
    stamp = connection.ops.adapt_datetimefield_value(timezone.now())
    _history(entries, stamp, user)
    Label.objects.filter(pk__in=[r[0] for r in rows]).delete()
    return len(rows)

