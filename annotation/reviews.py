"""Writes of the checker review: the cohort's decision on one criterion of one response, and
completing the review of that response.

The checker label belongs to (response, criterion, cohort) — not to one annotator's
assignment — and is the cohort's decision (SPEC §2). A checker confirms a decision the
annotators share (a note is optional), chooses one where they disagree (a note is optional),
or overrides a unanimous decision (a note is required). Completing the review confirms every
criterion the annotators agree on that the checker left alone, refuses while a disagreement
is undecided, and marks every assignment of the response in the cohort checked. Every change
of the checker label goes through ``services.label_save`` and so into the label's history.
"""
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from .decisions import DecisionError, decision_validate
from .models import Assignment, Criterion, Label
from .selectors import (
    ReviewItem,
    ReviewRow,
    criterion_get_for_response,
    decision_display,
    review_item_get_for_checker,
    review_rows,
)
from .services import label_save

MAX_NOTE = 5000


def _describe(label: Label | None) -> str:
    return decision_display(label, none="undecided")


def _editable(item: ReviewItem) -> None:
    if item.checked:
        raise ValidationError({"review": "this item is checked; reopen an annotator's assignment to change it"})
    if not item.ready:
        names = ", ".join(a.annotator.username for a in item.waiting)
        raise ValidationError({"review": f"waiting for {names} to submit"})


def _record(*, item: ReviewItem, row: ReviewRow, user, decision, action: str, note: str,
            expected_revision: int | None) -> Label:
    """Write the cohort's checker label for ``row`` with ``decision``: the note as its rationale
    and, as its evidence, the quotes of the annotators who decided the same way."""
    same = [label for _, label in row.votes
            if label is not None and (label.verdict, label.option_label, label.value) == decision]
    evidence = list(dict.fromkeys(q for label in same for q in (label.evidence or [])))
    said = "; ".join(f"{name}: {_describe(label)}" for name, label in row.votes)
    return label_save(
        response=item.response, criterion=row.criterion, cohort=item.cohort, annotator=user, changed_by=user,
        role=Label.CHECKER_ROLE, verdict=decision[0], option_label=decision[1],
        value=decision[2] if decision[0] is None and decision[1] is None else None,
        rationale=note, evidence=evidence, action=action, note=f"{note}{' — ' if note else ''}annotators: {said}",
        expected_revision=expected_revision if expected_revision is not None else (row.label.revision if row.label else 0),
    )


@transaction.atomic
def review_decision_record(
    *, response_id: int, criterion_id: int, user, verdict: str | None = None, option_label: str | None = None,
    value: float | None = None, note: str = "", expected_revision: int | None = None,
) -> tuple[ReviewItem, Criterion, Label]:
    """Record the cohort's decision on one criterion of one response. ``expected_revision`` is the
    revision of the cohort's checker label the checker saw (0: none yet; the review page sends it):
    a decision another checker of the cohort recorded since is refused, not overwritten.

    With no decision given, confirm the annotators' shared decision (refused when they
    disagree). With a decision: where they disagree it resolves the disagreement; where they
    agree on another decision it overrides them and needs a note saying why.
    """
    item = review_item_get_for_checker(response_id=response_id, user=user, for_update=True)
    _editable(item)
    criterion = criterion_get_for_response(response=item.response, criterion_id=criterion_id)
    row = next(r for r in review_rows(item=item) if r.criterion.pk == criterion.pk)
    note = (note or "").strip()
    if len(note) > MAX_NOTE:
        raise ValidationError({"note": f"a note can be at most {MAX_NOTE:,} characters"})
    shared = row.shared
    if verdict is None and option_label is None and value is None:
        if shared is None:
            said = ", ".join(f"{name} {_describe(label)}" for name, label in row.votes)
            raise ValidationError({"choice": f"the annotators disagree ({said}): choose the cohort's decision"})
        decision, action = (shared.verdict, shared.option_label, shared.value), "confirm"
    else:
        try:
            chosen = decision_validate(kind=criterion.kind, options=criterion.options, verdict=verdict,
                                       option_label=option_label, value=value)
        except DecisionError as exc:
            raise ValidationError({"choice": exc.message}) from exc
        decision = (chosen.verdict, chosen.option_label, chosen.value)
        if shared is None:
            action = "resolve"
        elif (shared.verdict, shared.option_label, shared.value) == decision:
            action = "confirm"
        else:
            if not note:
                raise ValidationError({"note": f"the annotators agree on {_describe(shared)}: overriding them needs a note saying why"})
            action = "override"
    label = _record(item=item, row=row, user=user, decision=decision, action=action, note=note,
                    expected_revision=expected_revision)
    return item, criterion, label


@transaction.atomic
def review_complete(*, response_id: int, user) -> ReviewItem:
    """Finish the review of one response: confirm every shared decision the checker left alone,
    then mark every assignment of the response in the cohort checked. Refused (nothing
    written) while a criterion the annotators disagree on has no decision of the checker."""
    item = review_item_get_for_checker(response_id=response_id, user=user, for_update=True)
    _editable(item)
    rows = review_rows(item=item)
    undecided = [row for row in rows if row.needs_choice]
    if undecided:
        numbers = ", ".join(f"#{row.number}" for row in undecided)
        raise ValidationError({"review": f"the annotators disagree on {len(undecided)} criteria that still need your "
                                         f"decision: {numbers}"})
    for row in rows:
        if row.label is None:
            shared = row.shared
            _record(item=item, row=row, user=user, decision=(shared.verdict, shared.option_label, shared.value),
                    action="confirm", note="", expected_revision=0)
    now = timezone.now()
    Assignment.objects.filter(pk__in=[a.pk for a in item.assignments if a.status == Assignment.SUBMITTED]).update(
        status=Assignment.CHECKED, checked_at=now, checked_by=user,
    )
    for assignment in item.assignments:
        if assignment.status == Assignment.SUBMITTED:
            assignment.status, assignment.checked_at, assignment.checked_by = Assignment.CHECKED, now, user
    # Hidden check items are never reviewed, yet an annotator's items must not stay "submitted" forever
    # where the rest turn "checked": the cohort's submitted check items are checked as its reviews go on.
    Assignment.objects.filter(cohort=item.cohort, is_check=True, status=Assignment.SUBMITTED).update(
        status=Assignment.CHECKED, checked_at=now, checked_by=user)
    return item
