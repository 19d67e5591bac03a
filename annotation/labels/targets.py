"""Reading what a change targets, locked: the assignment annotator's own labels (one statement
that also locks the assignment) or labels named by response, criterion, cohort and owner, checked
to belong together."""
from __future__ import annotations

import functools
from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db import connection
from django.http import Http404

from evalsite.converters import id_in_range
from evalsite.statements import model_from_row, statement_cursor

from ..models import Assignment, CohortMembership, Criterion, Label
from .rules import CriterionRule, LabelChange, Target
from .sql import (
    ASSIGNMENT_COLUMNS,
    ASSIGNMENTS,
    CASES,
    COHORTS,
    CRITERIA,
    CRITERION_COLUMNS,
    CRITERION_RULE_COLUMNS,
    LABEL_COLUMNS,
    LABELS,
    MEMBERS,
    RESPONSES,
    placeholders,
)


def quoted(alias: str, columns: Sequence[str]) -> str:
    return ", ".join(f"{alias}.{connection.ops.quote_name(c)}" for c in columns)


@functools.cache
def assignment_select_list(vendor: str, whole_criteria: bool) -> str:
    """The columns ``assignment_targets`` reads, quoted for the database (built once per kind)."""
    criterion_columns = CRITERION_COLUMNS if whole_criteria else CRITERION_RULE_COLUMNS
    return f"{quoted('a', ASSIGNMENT_COLUMNS)}, {quoted('c', criterion_columns)}, {quoted('l', LABEL_COLUMNS)}"


def lock_clause() -> str:
    return " FOR UPDATE" if connection.features.has_select_for_update else ""


def assignment_targets(*, assignment_id: int, user, changes: list[LabelChange],
                       whole_criteria: bool = True) -> tuple[Assignment, list[Target | None]]:
    """Lock the user's own assignment (404 for anybody else's or an unknown id) and read, in the
    same statement, the criteria of ``changes`` (in the rubric the response is judged against) and
    the annotator's current labels of them; None where a criterion is not in that rubric. Each
    target's criterion is a ``Criterion``, or with ``whole_criteria=False`` only what validation
    needs of it (``CriterionRule``).

    The lock serializes two tabs of one annotator. On PostgreSQL a statement that waited for it
    still reads the labels as they were when it started: a label saved meanwhile is caught by the
    write (the revision-guarded update finds no row, the insert finds one) and read again.
    """
    if not id_in_range(assignment_id):
        raise Http404("No such assignment")
    ids = [c.criterion_id for c in changes if id_in_range(c.criterion_id)] or [0]
    # One array on PostgreSQL: the statement's text stays the same whatever the batch size.
    in_ids, id_params = ("= ANY(%s)", [ids]) if connection.vendor == "postgresql" else \
        (f"IN ({placeholders(len(ids))})", ids)
    lock = " FOR UPDATE OF a" if connection.features.has_select_for_update else ""
    with statement_cursor() as cursor:
        cursor.execute(
            f"SELECT {assignment_select_list(connection.vendor, whole_criteria)}"
            f" FROM {ASSIGNMENTS} a JOIN {RESPONSES} r ON r.id = a.response_id JOIN {CASES} k ON k.id = r.case_id"
            f" LEFT JOIN {CRITERIA} c ON c.rubric_version_id = k.rubric_version_id AND c.id {in_ids}"
            f" LEFT JOIN {LABELS} l ON l.response_id = r.id AND l.criterion_id = c.id AND l.annotator_id = a.annotator_id"
            f" WHERE a.id = %s AND a.annotator_id = %s{lock}",
            [*id_params, assignment_id, user.pk],
        )
        rows = cursor.fetchall()
    if not rows:
        raise Http404("No such assignment")
    na, nc = len(ASSIGNMENT_COLUMNS), len(CRITERION_COLUMNS if whole_criteria else CRITERION_RULE_COLUMNS)
    assignment = model_from_row(Assignment, ASSIGNMENT_COLUMNS, rows[0][:na])
    found: dict[int, tuple[Criterion | CriterionRule, Label | None]] = {}
    for row in rows:
        if row[na] is None:
            continue
        criterion = model_from_row(Criterion, CRITERION_COLUMNS, row[na:na + nc]) if whole_criteria else \
            CriterionRule(*row[na:na + nc])
        label = model_from_row(Label, LABEL_COLUMNS, row[na + nc:]) if row[na + nc] is not None else None
        found[criterion.pk] = (criterion, label)
    targets = []
    project_id, response_id, cohort_id = assignment.project_id, assignment.response_id, assignment.cohort_id
    owner_id, own_id = assignment.annotator_id, assignment.pk
    for change in changes:
        hit = found.get(change.criterion_id)
        targets.append(None if hit is None else Target(
            change=change, project_id=project_id, response_id=response_id, cohort_id=cohort_id, owner_id=owner_id,
            role=Label.ANNOTATOR_ROLE, assignment_id=own_id, criterion=hit[0], label=hit[1],
        ))
    return assignment, targets


def chunks(items: list, size: int = 400):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def keyed_targets(changes: list[LabelChange]) -> list[Target]:
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
        for chunk in chunks(response_ids):
            cursor.execute(f"SELECT r.id, r.project_id, k.rubric_version_id FROM {RESPONSES} r JOIN {CASES} k ON k.id = r.case_id"
                           f" WHERE r.id IN ({placeholders(len(chunk))})", chunk)
            responses.update({pk: (project, rubric) for pk, project, rubric in cursor.fetchall()})
        for chunk in chunks(criterion_ids):
            cursor.execute(f"SELECT {quoted('c', CRITERION_COLUMNS)} FROM {CRITERIA} c WHERE c.id IN ({placeholders(len(chunk))})",
                           chunk)
            for row in cursor.fetchall():
                criterion = model_from_row(Criterion, CRITERION_COLUMNS, row)
                criteria[criterion.pk] = criterion
        cursor.execute(
            f"SELECT o.id, o.project_id, m.user_id, m.role FROM {COHORTS} o LEFT JOIN {MEMBERS} m ON m.cohort_id = o.id"
            f" AND m.user_id IN ({placeholders(len(owner_ids))}) WHERE o.id IN ({placeholders(len(cohort_ids))})",
            [*owner_ids, *cohort_ids],
        )
        for cohort_id, project_id, user_id, role in cursor.fetchall():
            cohorts[cohort_id] = project_id
            if user_id is not None:
                members[(cohort_id, user_id)] = role
        labels: dict[tuple, Label] = {}
        pairs = sorted({(c.response_id, c.criterion_id) for c in changes})
        for chunk in chunks(pairs):
            values = ", ".join(["(%s, %s)"] * len(chunk))
            cursor.execute(
                f"SELECT {quoted('l', LABEL_COLUMNS)} FROM {LABELS} l WHERE (l.response_id, l.criterion_id) IN"
                f" (VALUES {values}){lock_clause()}", [v for pair in chunk for v in pair],
            )
            for row in cursor.fetchall():
                label = model_from_row(Label, LABEL_COLUMNS, row)
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
        targets.append(Target(
            change=change, project_id=response[0], response_id=change.response_id, cohort_id=change.cohort_id,
            owner_id=change.owner_id, role=change.role, criterion=criterion, label=label,
            assignment_id=change.assignment_id if change.role == Label.ANNOTATOR_ROLE else None,
        ))
    return targets


def response_texts(response_ids: set[int]) -> dict[int, str]:
    with connection.cursor() as cursor:
        ids = sorted(response_ids)
        cursor.execute(f"SELECT id, text FROM {RESPONSES} WHERE id IN ({placeholders(len(ids))})", ids)
        return dict(cursor.fetchall())
