"""The one write path of labels, in a few plain SQL statements: ``label_row_write`` inserts a
label or updates it from the revision that was read, and appends the change's one history row,
in the caller's transaction. Every change of a label goes through it: the labeling page
(``services.label_record``), the checker review, the admin and re-imports (``services.label_save``),
so the rule "every change gets one history row" lives in this function alone. (New labels a
bundle import brings are copied in bulk without history; their import batch records them.)

One click is one save, and a study has dozens of annotators clicking at once, so this path
skips the ORM's query building, which cost more than the database work itself (about 13 ms of
Python per save against 2 ms of SQL; see the note of ``bench/load_labels.py``).

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

from evalsite.converters import id_in_range

from .models import Assignment, Case, Criterion, Label, LabelHistory, Response

_A = Assignment._meta.db_table
_C = Criterion._meta.db_table
_L = Label._meta.db_table
_H = LabelHistory._meta.db_table
_R = Response._meta.db_table
_K = Case._meta.db_table

ASSIGNMENT_COLUMNS = ("id", "project_id", "cohort_id", "response_id", "annotator_id", "status", "position")
CRITERION_COLUMNS = (
    "id", "project_id", "case_id", "rubric_version_id", "external_id", "position", "text", "kind", "weight",
    "options", "tags", "min_evidence", "checklist_of", "variants", "guidance",
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
    """What one write needs: whose label it is and where it belongs, and its current state.

    An annotator's label is keyed by (response, criterion, annotator = ``owner_id``); a cohort's
    checker label by (response, criterion, cohort), ``owner_id`` being the checker who records it.
    ``criterion`` is None when it is not part of the response's rubric; ``label`` is None before
    the first save; ``assignment`` is the locked assignment of a labeling-page save.
    """

    project_id: int
    response_id: int
    criterion: Criterion | None
    cohort_id: int
    owner_id: int
    role: str
    assignment_id: int | None
    label: Label | None
    assignment: Assignment | None = None

    def response_text(self) -> str:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT text FROM {_R} WHERE id = %s", [self.response_id])
            return cursor.fetchone()[0]


def label_target_lock(*, assignment_id: int, criterion_id: int, user) -> LabelTarget:
    """Lock the user's own assignment (404 for anybody else's) and read the criterion and label.

    The lock comes first, in its own statement, so the read that follows sees every save from
    the labeling page that committed while this one waited for it. The label itself is not
    locked: a change made elsewhere (admin, import) is caught by the revision-guarded write.
    """
    if not id_in_range(assignment_id):
        raise Http404("No such assignment")
    if not id_in_range(criterion_id):
        raise Http404("No such criterion")
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
        # The criterion must be part of the rubric the response's case is judged against.
        cursor.execute(
            f"SELECT {_select('c', CRITERION_COLUMNS)}, {_select('l', LABEL_COLUMNS)}"
            f" FROM {_R} r JOIN {_K} k ON k.id = r.case_id"
            f" LEFT JOIN {_C} c ON c.id = %s AND c.rubric_version_id = k.rubric_version_id"
            f" LEFT JOIN {_L} l ON l.response_id = r.id AND l.criterion_id = c.id AND l.annotator_id = %s"
            f" WHERE r.id = %s",
            [criterion_id, user.pk, assignment.response_id],
        )
        row = cursor.fetchone()
    criterion_values, label_values = row[:len(CRITERION_COLUMNS)], row[len(CRITERION_COLUMNS):]
    criterion = _instance(Criterion, CRITERION_COLUMNS, criterion_values) if criterion_values[0] is not None else None
    label = _instance(Label, LABEL_COLUMNS, label_values) if label_values[0] is not None else None
    return LabelTarget(
        project_id=assignment.project_id, response_id=assignment.response_id, criterion=criterion,
        cohort_id=assignment.cohort_id, owner_id=user.pk, role=Label.ANNOTATOR_ROLE, assignment_id=assignment.pk,
        label=label, assignment=assignment,
    )


def label_row_write(*, target: LabelTarget, changes: dict, old: dict | None, new: dict, user, action: str,
                    note: str = "") -> Label | None:
    """Insert the label or update it from the revision that was read, and append its one
    history row (who: ``user``, when, ``old`` and ``new`` state, ``action``, ``note``).

    ``changes`` holds the label's new verdict, option_label, value, rationale, evidence and
    role. Returns None, writing nothing, when the label was changed by somebody else in the
    meantime (the update guarded by the revision finds no row, or the insert finds one): the
    caller reads it again or reports a conflict instead of overwriting.
    """
    ops, now = connection.ops, timezone.now()
    stamp = ops.adapt_datetimefield_value(now)
    evidence = ops.adapt_json_value(changes["evidence"], None)
    c = target.criterion
    user_id = user.pk if user is not None else None
    with connection.cursor() as cursor:
        if target.label is None:
            # No conflict target: either unique key (own label, or the cohort's checker label) stops it.
            cursor.execute(
                f"INSERT INTO {_L} (project_id, response_id, criterion_id, rubric_version_id, cohort_id, annotator_id,"
                " role, assignment_id, verdict, option_label, value, rationale, evidence, revision, created_at,"
                " updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 1, %s, %s)"
                " ON CONFLICT DO NOTHING RETURNING id",
                [target.project_id, target.response_id, c.pk, c.rubric_version_id, target.cohort_id, target.owner_id,
                 changes["role"], target.assignment_id, changes["verdict"], changes["option_label"], changes["value"],
                 changes["rationale"], evidence, stamp, stamp],
            )
            row = cursor.fetchone()
            if row is None:
                return None
            label_id, revision = row[0], 1
        else:
            label_id, revision = target.label.pk, target.label.revision + 1
            cursor.execute(
                f"UPDATE {_L} SET verdict = %s, option_label = %s, value = %s, rationale = %s, evidence = %s,"
                " role = %s, annotator_id = %s, rubric_version_id = %s, revision = %s, updated_at = %s"
                " WHERE id = %s AND revision = %s",
                [changes["verdict"], changes["option_label"], changes["value"], changes["rationale"], evidence,
                 changes["role"], target.owner_id, c.rubric_version_id, revision, stamp, label_id, target.label.revision],
            )
            if cursor.rowcount != 1:
                return None
        cursor.execute(
            f"INSERT INTO {_H} (label_id, project_id, changed_by_id, changed_at, action, old, new, note)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [label_id, target.project_id, user_id, stamp, action,
             ops.adapt_json_value(old, None) if old is not None else None, ops.adapt_json_value(new, None), note],
        )
    label = target.label or Label(
        id=label_id, project_id=target.project_id, response_id=target.response_id, criterion_id=c.pk,
        cohort_id=target.cohort_id, assignment_id=target.assignment_id, created_at=now,
    )
    label._state.adding, label._state.db = False, connection.alias
    for name, value in changes.items():
        setattr(label, name, value)
    label.annotator_id = target.owner_id
    label.rubric_version_id, label.revision, label.updated_at = c.rubric_version_id, revision, now
    return label


def label_lock(*, target: LabelTarget) -> Label | None:
    """The target's label read again, locked this time (after a write found it changed since
    the first read, or before a change made outside the labeling page)."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    if target.role == Label.CHECKER_ROLE:
        where, params = "l.cohort_id = %s AND l.role = %s", [target.cohort_id, Label.CHECKER_ROLE]
    else:
        where, params = "l.annotator_id = %s", [target.owner_id]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_select('l', LABEL_COLUMNS)} FROM {_L} l"
            f" WHERE l.response_id = %s AND l.criterion_id = %s AND {where}{lock}",
            [target.response_id, target.criterion.pk, *params],
        )
        row = cursor.fetchone()
    return _instance(Label, LABEL_COLUMNS, row) if row else None


def assignment_mark_in_progress(assignment: Assignment) -> None:
    """An open assignment becomes "in progress" with its first save."""
    if assignment.status == Assignment.OPEN:
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {_A} SET status = %s WHERE id = %s", [Assignment.IN_PROGRESS, assignment.pk])
        assignment.status = Assignment.IN_PROGRESS
