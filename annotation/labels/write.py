"""Applying label changes: validate each (``rules``), check revisions, write the changed labels
and their history rows (``sql``), all or none; and the two other writes of labels, an import's
history rows and a deletion that keeps history."""
from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.http import Http404
from django.utils import timezone

from evalsite.codes import CONFLICT, NOT_FOUND
from evalsite.converters import id_in_range
from evalsite.fastinsert import lock_key_share, references_checked

from ..models import Assignment, Label, LabelHistory
from . import targets as reading
from .rules import (
    BATCH_MAX,
    EDITABLE_STATUSES,
    BatchRefused,
    LabelChange,
    LabelConflict,
    LabelRow,
    Target,
    label_state,
    new_state,
    would_be,
)
from .sql import ASSIGNMENTS, HISTORY, LABELS, StaleRead, append_history, insert_labels, update_labels, write_postgres


def result_label(t: Target, now) -> Label:
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


def result_row(t: Target) -> LabelRow:
    """The label as it is now, as a ``LabelRow`` (no model instance)."""
    if t.new is None:
        label = t.label
        return LabelRow(id=label.pk, criterion_id=label.criterion_id, verdict=label.verdict, option_label=label.option_label,
                        value=label.value, rationale=label.rationale, evidence=label.evidence, revision=label.revision)
    n = t.new
    return LabelRow(id=n["id"], criterion_id=t.criterion.pk, verdict=n["verdict"], option_label=n["option_label"],
                    value=n["value"], rationale=n["rationale"], evidence=n["evidence"], revision=n["revision"])


def state_of(new: dict) -> dict:
    """``label_state`` of a change's new fields."""
    return {"verdict": new["verdict"], "option": new["option_label"], "value": new["value"], "rationale": new["rationale"],
            "evidence": list(new["evidence"]), "role": new["role"]}


def apply_changes(targets: list[Target], *, user, action: str, note: str, replace: bool, assignment: Assignment | None,
           batch: bool, batch_id: int | None = None, rows: bool = False) -> list[Label] | list[LabelRow]:
    """Validate every target's change, check revisions, write the changed ones set-based with
    their history rows; the labels as they are now, in order, as ``Label``s or with ``rows`` as
    ``LabelRow``s (``BatchRefused`` names a refused one when there are several)."""
    needs_text = {t.response_id for t in targets
                  if t.change.evidence_add is not None or t.change.evidence is not None}
    texts = reading.response_texts(needs_text) if needs_text else None
    inserts, updates = [], []
    for index, t in enumerate(targets):
        try:
            t.new = new_state(t, texts)
            current = t.label.revision if t.label else 0
            expected = t.change.expected_revision
            if not replace and expected is None and assignment is None:
                raise ValidationError({"revision": "say which revision of the label this change was made against"})
            if not replace and expected is not None and expected != current:
                if t.label is not None and would_be(t.label, t.new):
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
        new = state_of(t.new)
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
        write_postgres(inserts, updates, stamp=stamp, user=user, action=action, note=shown, batch_id=batch_id,
                        start=start)
    else:
        if inserts:
            insert_labels(inserts, stamp, batch_id)
        if updates:
            update_labels(updates, stamp)
        append_history([(t.new["id"], t.project_id, action, t.new["old"], t.new["state"], shown) for t in inserts + updates],
                 stamp, user)
        if start is not None:
            with connection.cursor() as cursor:
                cursor.execute(f"UPDATE {ASSIGNMENTS} SET status = %s WHERE id = %s", [Assignment.IN_PROGRESS, start.pk])
    if start is not None:  # an open assignment becomes "in progress" with its first save
        start.status = Assignment.IN_PROGRESS
    if rows:
        return [result_row(t) for t in targets]
    return [result_label(t, now) for t in targets]


def labels_write(*, changes: list[LabelChange], user, action: str, note: str = "", replace: bool = False,
                 assignment_id: int | None = None, batch: bool = False,
                 rows: bool = False) -> tuple[Assignment | None, list[Label] | list[LabelRow]]:
    """Apply ``changes`` all or none and return (the assignment, the labels as they are now).

    With ``assignment_id`` the changes are the assignment annotator's own labels from the labeling
    page or the API: the assignment is locked, must be the ``user``'s (404) and open or in progress
    (read-only once submitted); an unknown criterion is a 404. With ``batch=True`` a refused change
    raises ``BatchRefused`` naming it (the read-only refusal and the batch's own shape stay plain).
    Without it each change names its response, cohort, owner and role (review, admin, re-import).
    ``replace=True`` overwrites whatever is stored (imports); every other change must carry the
    revision it was made against. A criterion may appear once per label in one call. ``rows=True``
    answers ``LabelRow``s instead of ``Label``s (for a caller that only answers their fields: no
    model instances, and no more of each criterion read than validation needs).
    """
    if not changes:
        raise ValidationError({"labels": "send at least one decision"})
    for _attempt in range(2):
        try:
            with transaction.atomic():
                return _labels_write_once(changes=changes, user=user, action=action, note=note, replace=replace,
                                          assignment_id=assignment_id, batch=batch, rows=rows)
        except StaleRead:
            continue  # somebody changed a label between our read and our write: judge against the new state
    raise LabelConflict(None)


def _labels_write_once(*, changes, user, action, note, replace, assignment_id, batch, rows):
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
        assignment, targets = reading.assignment_targets(assignment_id=assignment_id, user=user, changes=changes,
                                                         whole_criteria=not rows)
        if assignment.status not in EDITABLE_STATUSES:
            raise ValidationError({"assignment": ValidationError("this assignment is submitted and read-only", code=CONFLICT)})
        for index, target in enumerate(targets):
            if target is None:
                if not batch:
                    raise Http404("No such criterion")
                raise BatchRefused(index=index, criterion_id=changes[index].criterion_id,
                                   error=ValidationError({"criterion": ValidationError("not a criterion of this assignment",
                                                                                       code=NOT_FOUND)}))
    else:
        targets = reading.keyed_targets(changes)
        seen_keys: set[tuple] = set()
        for t in targets:
            key = (t.response_id, t.criterion.pk, t.role, t.cohort_id if t.role == Label.CHECKER_ROLE else t.owner_id)
            if key in seen_keys:
                raise ValidationError({"labels": f"two changes of one label (criterion {t.criterion.external_id!r})"})
            seen_keys.add(key)
    labels = apply_changes(targets, user=user, action=action, note=note, replace=replace, assignment=assignment, batch=batch,
                           rows=rows)
    return assignment, labels


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
    # The rows reference the project (the import holds it locked), the labels this transaction
    # inserted, and the importing user, locked here: their foreign-key checks, deferred to COMMIT
    # one row at a time, are skipped (1.8 s of a tenth-scale import's 14 s, the server alone at work).
    if user is not None:
        lock_key_share(get_user_model()._meta.db_table, "id = %s", [user.pk])
    with references_checked(), connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {HISTORY} (label_id, project_id, changed_by_id, changed_at, action, old, new, note)"
            f" SELECT l.id, l.project_id, %s, %s, %s, NULL, {state}, %s FROM {LABELS} l"
            f" WHERE l.import_batch_id = %s AND l.project_id = %s",
            [user.pk if user is not None else None, stamp, LabelHistory.IMPORT, note, batch_id, project_id],
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
        entries.append((pk, project_id, LabelHistory.DELETE, old, None, note))
    stamp = connection.ops.adapt_datetimefield_value(timezone.now())
    append_history(entries, stamp, user)
    Label.objects.filter(pk__in=[r[0] for r in rows]).delete()
    return len(rows)
