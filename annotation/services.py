"""Writes of the annotation app: recording labels with their history.

Every change of a label (creation, edit, checker override, re-import) appends one
``LabelHistory`` row with who, when, the old and the new state, inside the same transaction
as the change, so no change can be stored without its history.
"""
from django.core.exceptions import ValidationError
from django.db import transaction

from .decisions import DecisionError, decision_validate
from .models import Assignment, Cohort, Criterion, Label, LabelHistory, Response


def label_state(label: Label) -> dict:
    """The part of a label its history records."""
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

    label = (
        Label.objects.select_for_update()
        .filter(response=response, criterion=criterion, annotator=annotator)
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
