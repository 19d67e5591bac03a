"""Writes of the annotation app: recording labels with their history, from imports, the
labeling page (``label_record``) and the checker review (``checker_label_record``).

Every change of a label (creation, edit, checker override, re-import) appends one
``LabelHistory`` row with who, when, the old and the new state, inside the same transaction
as the change, so no change can be stored without its history.
"""
from types import SimpleNamespace

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from .decisions import DecisionError, decision_validate
from .labelrows import assignment_mark_in_progress, label_lock, label_row_write, label_target_lock
from .markdown import quote_in_response
from .models import Assignment, Cohort, CohortMembership, Criterion, Label, LabelHistory, Response
from .selectors import (
    assignment_get_for_checker, criteria_for_response, criterion_get_for_assignment,
)


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


@transaction.atomic
def label_save(
    *,
    response: Response,
    criterion: Criterion,
    cohort: Cohort,
    annotator,
    changed_by,
    role: str = "annotator",
    verdict: str | None = None,
    option_label: str | None = None,
    value: float | None = None,
    rationale: str | None = None,
    evidence: list[str] | None = None,
    assignment: Assignment | None = None,
    expected_revision: int | None = None,
    action: str = "set",
    note: str = "",
) -> Label:
    """Create or change the label of ``annotator`` for (response, criterion) and log it.

    ``rationale`` / ``evidence`` left as None keep their stored value. With
    ``expected_revision`` the change is refused (ValidationError) when somebody else changed
    the label since that revision, instead of silently overwriting their work.
    """
    try:
        decision = decision_validate(
            kind=criterion.kind, options=criterion.options, verdict=verdict, option_label=option_label, value=value
        )
    except DecisionError as exc:
        raise ValidationError({exc.field: exc.message}) from exc
    if criterion.case_id is not None and criterion.case_id != response.case_id:
        raise ValidationError({"criterion": f"criterion {criterion.external_id!r} belongs to another case"})

    # order_by("pk"): the model's default ordering joins criterion -> case (nullable), and
    # PostgreSQL refuses FOR UPDATE on the nullable side of an outer join.
    label = (
        Label.objects.select_for_update()
        .filter(response=response, criterion=criterion, annotator=annotator)
        .order_by("pk")
        .first()
    )
    if label is None:
        label = Label(
            project_id=response.project_id,
            response=response,
            criterion=criterion,
            cohort=cohort,
            annotator=annotator,
            role=role,
            assignment=assignment,
            rubric_version_id=criterion.rubric_version_id,
            revision=0,
        )
        old = None
    else:
        if expected_revision is not None and label.revision != expected_revision:
            raise ValidationError(
                {"revision": f"this label was changed elsewhere (now revision {label.revision}); reload to see it"}
            )
        old = label_state(label)
    label.verdict, label.option_label, label.value = decision.verdict, decision.option_label, decision.value
    if rationale is not None:
        label.rationale = rationale
    if evidence is not None:
        label.evidence = list(evidence)
    label.role = role
    new = label_state(label)
    if old == new:
        return label
    label.rubric_version_id = criterion.rubric_version_id
    label.revision += 1
    label.save()
    LabelHistory.objects.create(label=label, changed_by=changed_by, action=action, old=old, new=new, note=note)
    return label


# --- Labeling from the annotator workspace and the checker review -------------------------


class LabelConflict(ValidationError):
    """The label changed since the revision the client saw (another tab or a retry race)."""

    def __init__(self, label: Label | None):
        revision = label.revision if label else 0
        super().__init__(
            {"revision": f"changed in another tab or window (now revision {revision}); your click was not applied"},
            code="conflict",
        )
        self.label = label


def _label_would_be(label: Label, decision, rationale: str | None, evidence: list[str]) -> bool:
    return (
        (label.verdict, label.option_label, label.value) == (decision.verdict, decision.option_label, decision.value)
        and (rationale is None or rationale == label.rationale)
        and list(label.evidence or []) == evidence
    )


@transaction.atomic
def label_record(
    *,
    assignment_id: int,
    criterion_id: int,
    user,
    verdict: str | None = None,
    option_label: str | None = None,
    value: float | None = None,
    rationale: str | None = None,
    evidence_add: str | None = None,
    evidence_remove: str | None = None,
    expected_revision: int | None = None,
) -> tuple[Assignment, Criterion, Label]:
    """One save from the labeling page: a decision, a rationale, or one evidence quote added/removed.

    The assignment row is locked for the duration, so two tabs of the same annotator are
    serialized; ``expected_revision`` (0 = "no label yet") refuses a stale change with
    ``LabelConflict`` instead of overwriting, except that repeating a change that is already
    stored (a retry whose first attempt did arrive) succeeds without a new revision. The label
    is read without a lock and written with an update guarded by the revision read; when a
    change made elsewhere (admin, import) slipped in between, the label is read again, locked,
    and the click is judged against it by the same rules. This is the hot path of the
    workspace, so it reads and writes through ``labelrows`` (plain SQL) rather than
    ``label_save``; the rules are the same.
    """
    target = label_target_lock(assignment_id=assignment_id, criterion_id=criterion_id, user=user)
    assignment, criterion = target.assignment, target.criterion
    if assignment.status not in (Assignment.OPEN, Assignment.IN_PROGRESS):
        raise ValidationError({"assignment": "this assignment is submitted and read-only"}, code="read_only")
    if criterion is None:
        raise Http404("No such criterion")
    asked = {"verdict": verdict, "option_label": option_label, "value": value, "rationale": rationale,
             "evidence_add": evidence_add, "evidence_remove": evidence_remove, "expected_revision": expected_revision}
    for _attempt in range(2):
        label = target.label
        changes = _label_changes(target, label, **asked)
        if changes is None:  # a retry of a change that is already stored
            return assignment, criterion, label
        old, new = (label_state(label) if label else None), label_state(SimpleNamespace(**changes))
        if old == new:
            break
        saved = label_row_write(target=target, changes=changes, old=old, new=new, user=user, action="annotate")
        if saved is not None:
            label = saved
            break
        # Changed elsewhere (admin, import) between the read and the write: read it again,
        # locked now, and judge the click against what is really there.
        target.label = label_lock(target=target, user=user)
    else:
        raise LabelConflict(target.label)
    assignment_mark_in_progress(assignment)
    return assignment, criterion, label


def _label_changes(target, label: Label | None, *, verdict, option_label, value, rationale, evidence_add,
                   evidence_remove, expected_revision) -> dict | None:
    """The label's fields after one click from the labeling page, validated; None when the click
    repeats a change already stored; ``LabelConflict`` when it was made against an older label."""
    criterion = target.criterion
    if verdict is None and option_label is None and value is None:
        if label is None:
            raise ValidationError({"verdict": "choose a decision first, then add a rationale or evidence"})
        verdict, option_label = label.verdict, label.option_label
        value = label.value if label.option_label is None and label.verdict is None else None
    try:
        decision = decision_validate(
            kind=criterion.kind, options=criterion.options, verdict=verdict, option_label=option_label, value=value
        )
    except DecisionError as exc:
        raise ValidationError({exc.field: exc.message}) from exc

    evidence = list(label.evidence or []) if label else []
    if evidence_add is not None:
        quote = evidence_add.strip()
        if len(quote) > 2000:
            raise ValidationError({"quote": "a quote can be at most 2,000 characters"})
        if not quote_in_response(quote=quote, text=target.response_text()):
            raise ValidationError({"quote": "the quote is not part of the response text"})
        if quote not in evidence:
            evidence.append(quote)
    if evidence_remove is not None and evidence_remove in evidence:
        evidence.remove(evidence_remove)

    current_revision = label.revision if label else 0
    if expected_revision is not None and expected_revision != current_revision:
        if label is not None and _label_would_be(label, decision, rationale, evidence):
            return None
        raise LabelConflict(label)
    return {
        "verdict": decision.verdict, "option_label": decision.option_label, "value": decision.value,
        "rationale": rationale if rationale is not None else (label.rationale if label else ""),
        "evidence": evidence, "role": CohortMembership.ANNOTATOR,
    }


def _checker_save(*, assignment, criterion, checker, source: Label, action: str, note: str, **decision) -> Label:
    summary = source.verdict or source.option_label or source.value
    return label_save(
        response=assignment.response, criterion=criterion, cohort=assignment.cohort, annotator=checker,
        changed_by=checker, role="checker", rationale=note or source.rationale, evidence=list(source.evidence or []),
        assignment=assignment, action=action,
        note=f"{note}{' — ' if note else ''}annotator {assignment.annotator.username}: {summary}",
        **decision,
    )


@transaction.atomic
def checker_label_record(
    *, assignment_id: int, criterion_id: int, user, confirm: bool, verdict: str | None = None,
    option_label: str | None = None, note: str = "",
) -> tuple[Assignment, Criterion, Label]:
    """A checker confirms the annotator's decision on one criterion or overrides it with a note.

    The result is a label of the checker with role "checker" — the cohort's label (SPEC §2) —
    and every change to it, overrides included, is in its history.
    """
    assignment = assignment_get_for_checker(assignment_id=assignment_id, user=user, for_update=True)
    if assignment.status != Assignment.SUBMITTED:
        raise ValidationError({"assignment": "this assignment is already checked; reopen it to change it"})
    criterion = criterion_get_for_assignment(assignment=assignment, criterion_id=criterion_id)
    source = Label.objects.filter(
        response_id=assignment.response_id, criterion=criterion, annotator_id=assignment.annotator_id
    ).first()
    if source is None:
        raise ValidationError({"criterion": "the annotator has no label for this criterion"})
    note = (note or "").strip()
    if confirm:
        decision = {"verdict": source.verdict, "option_label": source.option_label,
                    "value": source.value if source.option_label is None and source.verdict is None else None}
        label = _checker_save(assignment=assignment, criterion=criterion, checker=user, source=source,
                              action="confirm", note=note, **decision)
    else:
        if not note:
            raise ValidationError({"note": "an override needs a note saying why"})
        if verdict is None and option_label is None:
            raise ValidationError({"verdict": "choose the decision that replaces the annotator's"})
        label = _checker_save(assignment=assignment, criterion=criterion, checker=user, source=source,
                              action="override", note=note, verdict=verdict, option_label=option_label)
    return assignment, criterion, label


@transaction.atomic
def assignment_check_complete(*, assignment_id: int, user) -> Assignment:
    """Confirm every criterion the checker has not yet decided, then mark the assignment checked."""
    assignment = assignment_get_for_checker(assignment_id=assignment_id, user=user, for_update=True)
    if assignment.status != Assignment.SUBMITTED:
        raise ValidationError({"assignment": "this assignment is already checked"})
    checked = set(
        Label.objects.filter(response_id=assignment.response_id, cohort_id=assignment.cohort_id, role="checker")
        .values_list("criterion_id", flat=True)
    )
    sources = {
        label.criterion_id: label
        for label in Label.objects.filter(response_id=assignment.response_id, annotator_id=assignment.annotator_id)
    }
    for criterion in criteria_for_response(response=assignment.response):
        if criterion.pk in checked or criterion.pk not in sources:
            continue
        source = sources[criterion.pk]
        decision = {"verdict": source.verdict, "option_label": source.option_label,
                    "value": source.value if source.option_label is None and source.verdict is None else None}
        _checker_save(assignment=assignment, criterion=criterion, checker=user, source=source,
                      action="confirm", note="", **decision)
    assignment.status = Assignment.CHECKED
    assignment.checked_at = timezone.now()
    assignment.checked_by = user
    assignment.save(update_fields=["status", "checked_at", "checked_by"])
    return assignment
