"""The label save of the labeling page in a few plain SQL statements.

One click is one save, and a study has dozens of annotators clicking at once, so this path
skips the ORM's query building, which cost more than the database work itself (about 13 ms of
Python per save against 2 ms of SQL; see the note of ``bench/load_labels.py``). The rules stay
those of ``services.label_save``: the same validation, a revision bump and one history row per
change, in the caller's transaction. Everything else keeps using the ORM.

Statements are written for both supported databases (PostgreSQL and SQLite 3.35+): row locks
are taken only where the database has them (SQLite serializes writers on its own), and values
go through Django's adapters for JSON and datetimes.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import connection
from django.db.models import DEFERRED
from django.http import Http404
from django.utils import timezone

from .models import Assignment, Criterion, Label, LabelHistory, Response

_A = Assignment._meta.db_table
_C = Criterion._meta.db_table
_L = Label._meta.db_table
_H = LabelHistory._meta.db_table
_R = Response._meta.db_table

ASSIGNMENT_COLUMNS = ("id", "project_id", "cohort_id", "response_id", "annotator_id", "status", "position")
CRITERION_COLUMNS = (
    "id", "project_id", "case_id", "rubric_version_id", "external_id", "position", "text", "kind", "weight",
    "options", "tags", "min_evidence",
)
LABEL_COLUMNS = (
    "id", "project_id", "response_id", "criterion_id", "rubric_version_id", "cohort_id", "annotator_id", "role",
    "assignment_id", "verdict", "option_label", "value", "rationale", "evidence", "revision",
)


def _select(alias: str, columns: tuple[str, ...]) -> str:
    return ", ".join(f"{alias}.{connection.ops.quote_name(c)}" for c in columns)


def _instance(model, columns: tuple[str, ...], values):
    """A model instance from raw column values (the other fields deferred), JSON decoded."""
    given = dict(zip(columns, values))
    row = []
    for field in model._meta.concrete_fields:  # from_db takes values in the model's field order
        value = given.get(field.attname, DEFERRED)
        if value is not None and value is not DEFERRED and hasattr(field, "from_db_value"):
            value = field.from_db_value(value, None, connection)
        row.append(value)
    return model.from_db(connection.alias, list(columns), row)


@dataclass
class LabelTarget:
    """What one save needs: the locked assignment, the criterion (None when it is not part of the
    assignment's rubric) and the annotator's current label for it (None before the first click)."""

    assignment: Assignment
    criterion: Criterion | None
    label: Label | None

    def response_text(self) -> str:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT text FROM {_R} WHERE id = %s", [self.assignment.response_id])
            return cursor.fetchone()[0]


def label_target_lock(*, assignment_id: int, criterion_id: int, user) -> LabelTarget:
    """Lock the user's own assignment (404 for anybody else's) and read the criterion and label.

    The lock comes first, in its own statement, so the read that follows sees every save from
    the labeling page that committed while this one waited for it. The label itself is not
    locked: a change made elsewhere (admin, import) is caught by the revision-guarded write.
    """
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_select('a', ASSIGNMENT_COLUMNS)} FROM {_A} a WHERE a.id = %s AND a.annotator_id = %s{lock}",
            [assignment_id, user.pk],
        )
        row = cursor.fetchone()
        if row is None:
            raise Http404("No such assignment")
        assignment = _instance(Assignment, ASSIGNMENT_COLUMNS, row)
        # The criterion must belong to the response's case, or be project-wide when the case
        # has no criteria of its own (the rule of selectors.criteria_for_response).
        cursor.execute(
            f"SELECT {_select('c', CRITERION_COLUMNS)}, {_select('l', LABEL_COLUMNS)}"
            f" FROM {_R} r"
            f" LEFT JOIN {_C} c ON c.id = %s AND c.project_id = r.project_id AND (c.case_id = r.case_id OR"
            f"  (c.case_id IS NULL AND NOT EXISTS (SELECT 1 FROM {_C} o WHERE o.project_id = r.project_id"
            f"   AND o.case_id = r.case_id)))"
            f" LEFT JOIN {_L} l ON l.response_id = r.id AND l.criterion_id = c.id AND l.annotator_id = %s"
            f" WHERE r.id = %s",
            [criterion_id, user.pk, assignment.response_id],
        )
        row = cursor.fetchone()
    criterion_values, label_values = row[:len(CRITERION_COLUMNS)], row[len(CRITERION_COLUMNS):]
    criterion = _instance(Criterion, CRITERION_COLUMNS, criterion_values) if criterion_values[0] is not None else None
    label = _instance(Label, LABEL_COLUMNS, label_values) if label_values[0] is not None else None
    return LabelTarget(assignment=assignment, criterion=criterion, label=label)


def label_row_write(*, target: LabelTarget, changes: dict, old: dict | None, new: dict, user, action: str) -> Label | None:
    """Insert the label or update it from the revision that was read, and append its history row.

    Returns None, writing nothing, when the label was changed by somebody else in the meantime
    (the update guarded by the revision finds no row, or the insert finds one): the caller
    reports a conflict instead of overwriting.
    """
    ops, now = connection.ops, timezone.now()
    stamp = ops.adapt_datetimefield_value(now)
    evidence = ops.adapt_json_value(changes["evidence"], None)
    a, c = target.assignment, target.criterion
    with connection.cursor() as cursor:
        if target.label is None:
            cursor.execute(
                f"INSERT INTO {_L} (project_id, response_id, criterion_id, rubric_version_id, cohort_id, annotator_id,"
                " role, assignment_id, verdict, option_label, value, rationale, evidence, revision, created_at,"
                " updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 1, %s, %s)"
                " ON CONFLICT (response_id, criterion_id, annotator_id) DO NOTHING RETURNING id",
                [a.project_id, a.response_id, c.pk, c.rubric_version_id, a.cohort_id, user.pk, changes["role"],
                 a.pk, changes["verdict"], changes["option_label"], changes["value"], changes["rationale"],
                 evidence, stamp, stamp],
            )
            row = cursor.fetchone()
            if row is None:
                return None
            label_id, revision = row[0], 1
        else:
            label_id, revision = target.label.pk, target.label.revision + 1
            cursor.execute(
                f"UPDATE {_L} SET verdict = %s, option_label = %s, value = %s, rationale = %s, evidence = %s,"
                " role = %s, rubric_version_id = %s, revision = %s, updated_at = %s WHERE id = %s AND revision = %s",
                [changes["verdict"], changes["option_label"], changes["value"], changes["rationale"], evidence,
                 changes["role"], c.rubric_version_id, revision, stamp, label_id, target.label.revision],
            )
            if cursor.rowcount != 1:
                return None
        cursor.execute(
            f"INSERT INTO {_H} (label_id, changed_by_id, changed_at, action, old, new, note)"
            " VALUES (%s, %s, %s, %s, %s, %s, '')",
            [label_id, user.pk, stamp, action, ops.adapt_json_value(old, None) if old is not None else None,
             ops.adapt_json_value(new, None)],
        )
    label = target.label or Label(
        id=label_id, project_id=a.project_id, response_id=a.response_id, criterion_id=c.pk, cohort_id=a.cohort_id,
        annotator_id=user.pk, assignment_id=a.pk, created_at=now,
    )
    label._state.adding, label._state.db = False, connection.alias
    for name, value in changes.items():
        setattr(label, name, value)
    label.rubric_version_id, label.revision, label.updated_at = c.rubric_version_id, revision, now
    return label


def label_lock(*, target: LabelTarget, user) -> Label | None:
    """The annotator's label for the target's criterion read again, locked this time (after a
    write found it changed since the first read)."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_select('l', LABEL_COLUMNS)} FROM {_L} l"
            f" WHERE l.response_id = %s AND l.criterion_id = %s AND l.annotator_id = %s{lock}",
            [target.assignment.response_id, target.criterion.pk, user.pk],
        )
        row = cursor.fetchone()
    return _instance(Label, LABEL_COLUMNS, row) if row else None


def assignment_mark_in_progress(assignment: Assignment) -> None:
    """An open assignment becomes "in progress" with its first save."""
    if assignment.status == Assignment.OPEN:
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {_A} SET status = %s WHERE id = %s", [Assignment.IN_PROGRESS, assignment.pk])
        assignment.status = Assignment.IN_PROGRESS


def progress_counts(*, response_id: int, annotator_id: int) -> tuple[int, int]:
    """(decided, total) over the response's rubric for one annotator, in one small query: the
    case's own criteria, or the project-wide ones when the case has none."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.case_id IS NULL, COUNT(*), COUNT(l.id) FROM {_R} r"
            f" JOIN {_C} c ON c.project_id = r.project_id AND (c.case_id = r.case_id OR c.case_id IS NULL)"
            f" LEFT JOIN {_L} l ON l.criterion_id = c.id AND l.response_id = r.id AND l.annotator_id = %s"
            f" WHERE r.id = %s GROUP BY c.case_id IS NULL",
            [annotator_id, response_id],
        )
        counts = {bool(shared): (decided, total) for shared, total, decided in cursor.fetchall()}
    return counts.get(False) or counts.get(True) or (0, 0)
