"""The statements that write labels and their history, set-based: one statement per kind of
row whatever the batch size. On PostgreSQL the rows go as one JSON parameter (``json_to_recordset``)
and a whole change as one statement of data-modifying CTEs; on SQLite (3.35+, writers serialized by
IMMEDIATE transactions) as VALUES lists. Plain SQL because the ORM's query building cost more than
the database work on the labeling page's hot path."""
from __future__ import annotations

import json
from collections.abc import Sequence

from django.db import connection

from evalsite.statements import statement_cursor

from ..models import Assignment, Case, Cohort, CohortMembership, Criterion, Label, LabelHistory, Response
from .rules import Target

ASSIGNMENTS = Assignment._meta.db_table
CRITERIA = Criterion._meta.db_table
LABELS = Label._meta.db_table
HISTORY = LabelHistory._meta.db_table
RESPONSES = Response._meta.db_table
CASES = Case._meta.db_table
COHORTS = Cohort._meta.db_table
MEMBERS = CohortMembership._meta.db_table

ASSIGNMENT_COLUMNS = ("id", "project_id", "cohort_id", "response_id", "annotator_id", "status", "position")
CRITERION_COLUMNS = (
    "id", "project_id", "case_id", "rubric_version_id", "external_id", "position", "text", "kind", "weight",
    "options", "tags", "min_evidence", "checklist_of", "variants", "guidance",
)
# What validating a decision needs of a criterion (``rules.CriterionRule``), in its field order.
CRITERION_RULE_COLUMNS = ("id", "rubric_version_id", "kind", "options", "external_id")
LABEL_COLUMNS = (
    "id", "project_id", "response_id", "criterion_id", "rubric_version_id", "cohort_id", "annotator_id", "role",
    "assignment_id", "import_batch_id", "verdict", "option_label", "value", "rationale", "evidence",
    "time_spent_seconds", "revision",
)


def placeholders(n: int) -> str:
    return ", ".join(["%s"] * n)


class StaleRead(Exception):
    """A label changed between the read and the guarded write (a change made outside the labeling
    page's assignment lock): the caller rolls back and reads again, locked."""


def json_text(value) -> str | None:
    return None if value is None else json.dumps(value)


def rows_source(columns: Sequence[tuple[str, str]], rows: list[tuple]) -> tuple[str, list, dict[str, str]]:
    """A table of ``rows`` to select from in one statement, as (FROM clause, parameters, how each
    column is referred to). ``columns`` are (name, PostgreSQL type); a "jsonb" column's values are
    Python lists or dicts (None for SQL NULL).

    PostgreSQL gets the rows as one JSON array of objects (``json_to_recordset``): one parameter,
    so the statement's text is the same whatever the number of rows, and one ``json.dumps`` of the
    rows costs far less than adapting an array per column. SQLite gets a VALUES list, its JSON
    values as text.
    """
    names = [name for name, _ in columns]
    if connection.vendor == "postgresql":
        source = "json_to_recordset(%s::json) AS v(" + ", ".join(f"{name} {kind}" for name, kind in columns) + ")"
        param = json.dumps([dict(zip(names, r)) for r in rows], ensure_ascii=False, allow_nan=False)
        return source, [param], {name: f"v.{name}" for name in names}
    encoded = [i for i, (_, kind) in enumerate(columns) if kind == "jsonb"]
    if encoded:
        rows = [tuple(json_text(v) if i in encoded else v for i, v in enumerate(r)) for r in rows]
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"
    source = f"(VALUES {', '.join([row] * len(rows))}) AS v"
    return source, [value for r in rows for value in r], {name: f"v.column{i + 1}" for i, name in enumerate(names)}


INSERT_COLUMNS = (
    ("project_id", "bigint"), ("response_id", "bigint"), ("criterion_id", "bigint"), ("rubric_version_id", "bigint"),
    ("cohort_id", "bigint"), ("annotator_id", "bigint"), ("role", "varchar"), ("assignment_id", "bigint"),
    ("verdict", "varchar"), ("option_label", "varchar"), ("value", "double precision"), ("rationale", "text"),
    ("evidence", "jsonb"), ("time_spent_seconds", "double precision"),
)


UPDATE_COLUMNS = (
    ("id", "bigint"), ("old_revision", "integer"), ("verdict", "varchar"), ("option_label", "varchar"),
    ("value", "double precision"), ("rationale", "text"), ("evidence", "jsonb"), ("time_spent_seconds", "double precision"),
    ("role", "varchar"), ("annotator_id", "bigint"), ("rubric_version_id", "bigint"), ("revision", "integer"),
)


def insert_row(t: Target) -> tuple:
    """A new label's values in ``INSERT_COLUMNS`` order (both databases' inserts)."""
    n = t.new
    return (t.project_id, t.response_id, t.criterion.pk, t.criterion.rubric_version_id, t.cohort_id, t.owner_id,
            n["role"], t.assignment_id, n["verdict"], n["option_label"], n["value"], n["rationale"],
            n["evidence"], n["time_spent_seconds"])


def update_row(t: Target) -> tuple:
    """A changed label's values in ``UPDATE_COLUMNS`` order (both databases' updates); sets the
    id and the revision the write gives it."""
    n = t.new
    n["id"], n["revision"] = t.label.pk, t.label.revision + 1
    return (t.label.pk, t.label.revision, n["verdict"], n["option_label"], n["value"], n["rationale"],
            n["evidence"], n["time_spent_seconds"], n["role"], t.owner_id, t.criterion.rubric_version_id,
            n["revision"])


def insert_labels(targets: list[Target], stamp, batch_id: int | None) -> None:
    source, params, refs = rows_source(INSERT_COLUMNS, [insert_row(t) for t in targets])
    names = [name for name, _ in INSERT_COLUMNS]
    with connection.cursor() as cursor:
        # No conflict target: either unique key (own label, or the cohort's checker label) stops a
        # label somebody else inserted meanwhile; that target then comes back missing.
        cursor.execute(
            f"INSERT INTO {LABELS} ({', '.join(names)}, import_batch_id, revision, created_at, updated_at)"
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
            raise StaleRead()
        t.new["id"], t.new["revision"] = ids[key], 1


def update_labels(targets: list[Target], stamp) -> None:
    """One UPDATE for every changed label, each guarded by the revision that was read."""
    source, params, refs = rows_source(UPDATE_COLUMNS, [update_row(t) for t in targets])
    sets = ", ".join(f"{name} = {refs[name]}" for name, _ in UPDATE_COLUMNS[2:])
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {LABELS} SET {sets}, updated_at = %s FROM {source}"
            f" WHERE {LABELS}.id = {refs['id']} AND {LABELS}.revision = {refs['old_revision']}",
            [stamp, *params],
        )
        if cursor.rowcount != len(targets):
            raise StaleRead()


HISTORY_COLUMNS = (("label_id", "bigint"), ("project_id", "bigint"), ("action", "varchar"), ("old", "jsonb"),
                    ("new", "jsonb"), ("note", "text"))


def append_history(entries: list[tuple], stamp, user) -> None:
    """Append one history row per (label id, project id, action, old, new, note)."""
    if not entries:
        return
    source, params, refs = rows_source(HISTORY_COLUMNS, entries)
    names = [name for name, _ in HISTORY_COLUMNS]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {HISTORY} ({', '.join(names)}, changed_by_id, changed_at)"
            f" SELECT {', '.join(refs[name] for name in names)}, %s, %s FROM {source}",
            [user.pk if user is not None else None, stamp, *params],
        )


def write_postgres(inserts: list[Target], updates: list[Target], *, stamp, user, action: str, note: str,
                    batch_id: int | None, start: Assignment | None) -> None:
    """On PostgreSQL the inserts, the guarded updates, their history rows and the assignment's
    start go as one statement of data-modifying CTEs (one round trip, the same text whatever the
    batch size); the rows it returns say which labels were inserted and updated."""
    parts, params = [], []
    user_id = user.pk if user is not None else None
    if inserts:
        rows = [(*insert_row(t), t.new["state"]) for t in inserts]
        source, values, refs = rows_source((*INSERT_COLUMNS, ("state", "jsonb")), rows)
        names = [name for name, _ in INSERT_COLUMNS]
        parts += [
            f"vi AS (SELECT {', '.join(f'{refs[n]} AS {n}' for n in (*names, 'state'))} FROM {source})",
            f"ins AS (INSERT INTO {LABELS} ({', '.join(names)}, import_batch_id, revision, created_at, updated_at)"
            f" SELECT {', '.join(names)}, %s::bigint, 1, %s, %s FROM vi WHERE 1 = 1 ON CONFLICT DO NOTHING"
            " RETURNING id, project_id, response_id, criterion_id, annotator_id, role, cohort_id)",
            f"hi AS (INSERT INTO {HISTORY} (label_id, project_id, changed_by_id, changed_at, action, old, new, note)"
            " SELECT ins.id, ins.project_id, %s::integer, %s, %s::text, NULL, vi.state, %s::text FROM ins JOIN vi"
            " ON vi.response_id = ins.response_id AND vi.criterion_id = ins.criterion_id"
            " AND vi.annotator_id = ins.annotator_id AND vi.role = ins.role)",
        ]
        params += [*values, batch_id, stamp, stamp, user_id, stamp, action, note]
    if updates:
        rows = [(*update_row(t), t.project_id, t.new["old"], t.new["state"]) for t in updates]
        columns = (*UPDATE_COLUMNS, ("project_id", "bigint"), ("old", "jsonb"), ("state", "jsonb"))
        source, values, refs = rows_source(columns, rows)
        sets = ", ".join(f"{name} = vu.{name}" for name, _ in UPDATE_COLUMNS[2:])
        parts += [
            f"vu AS (SELECT {', '.join(f'{refs[n]} AS {n}' for n, _ in columns)} FROM {source})",
            f"upd AS (UPDATE {LABELS} SET {sets}, updated_at = %s FROM vu"
            f" WHERE {LABELS}.id = vu.id AND {LABELS}.revision = vu.old_revision RETURNING {LABELS}.id)",
            f"hu AS (INSERT INTO {HISTORY} (label_id, project_id, changed_by_id, changed_at, action, old, new, note)"
            " SELECT upd.id, vu.project_id, %s::integer, %s, %s::text, vu.old, vu.state, %s::text FROM upd JOIN vu ON vu.id = upd.id)",
        ]
        params += [*values, stamp, user_id, stamp, action, note]
    if start is not None:
        parts.append(f"st AS (UPDATE {ASSIGNMENTS} SET status = %s::text WHERE id = %s::bigint AND status = %s::text)")
        params += [Assignment.IN_PROGRESS, start.pk, Assignment.OPEN]
    if not parts:
        return
    returned = ["SELECT 'i', id, response_id, criterion_id, annotator_id, role, cohort_id FROM ins"] if inserts else []
    if updates:
        returned.append("SELECT 'u', id, NULL, NULL, NULL, NULL, NULL FROM upd")
    with statement_cursor() as cursor:
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
        raise StaleRead()
    for t in inserts:
        pk = inserted.get((t.response_id, t.criterion.pk, t.owner_id, t.role))
        if pk is None:  # inserted meanwhile by somebody else: read again, and judge the change against it
            raise StaleRead()
        t.new["id"], t.new["revision"] = pk, 1
