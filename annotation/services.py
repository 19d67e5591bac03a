"""Writes of labels as the entry points call them: ``label_record`` and ``labels_record_batch``
(the labeling page and the API: the annotator's own assignment) and ``label_save`` (the checker
review, the admin, re-imports: a label named by response, criterion, cohort and owner). All three
are one call of ``labels.labels_write``, the one write service, so validation, the revision
check and the history row are the same on every path.
"""
from django.utils import timezone

from .labels import BATCH_MAX, BatchRefused, LabelChange, LabelConflict, LabelRow, label_state, labels_delete, labels_write
from .models import Assignment, Cohort, Criterion, Label, Project, Response

__all__ = [
    "BATCH_MAX", "BatchRefused", "LabelConflict", "label_record", "label_save", "label_state", "labels_delete",
    "labels_record_batch", "project_data_touch",
]


def project_data_touch(*, project_ids) -> None:
    """Record that the data of these projects changed outside the services that leave their own
    trace (an admin edit or deletion): their cached reports go stale, other projects' stay."""
    ids = {pk for pk in project_ids if pk is not None}
    if ids:
        Project.objects.filter(pk__in=ids).update(data_changed_at=timezone.now())


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
    time_spent_seconds: float | None = None,
    assignment: Assignment | None = None,
    expected_revision: int | None = None,
    replace: bool = False,
    action: str = "set",
    note: str = "",
) -> Label:
    """Create or change one label outside the labeling page (checker review, admin, re-import).

    ``role="annotator"``: the label of ``annotator`` for (response, criterion). ``role="checker"``:
    the cohort's checker label for (response, criterion), recorded by ``annotator`` (a checker).
    ``rationale`` / ``evidence`` left as None keep their stored value. ``expected_revision`` is the
    revision the change was made against (0: no label yet): a label changed since is refused
    (``LabelConflict``) instead of silently overwritten; ``replace=True`` overwrites whatever is
    stored, and the history row says so.
    """
    change = LabelChange(
        criterion_id=criterion.pk, response_id=response.pk, cohort_id=cohort.pk, owner_id=annotator.pk, role=role,
        verdict=verdict, option_label=option_label, value=value, rationale=rationale, evidence=evidence,
        time_spent_seconds=time_spent_seconds, expected_revision=expected_revision,
        assignment_id=assignment.pk if assignment is not None else None,
    )
    _, [label] = labels_write(changes=[change], user=changed_by, action=action, note=note, replace=replace)
    return label


def _change(criterion_id: int, *, verdict=None, option_label=None, value=None, rationale=None, evidence_add=None,
            evidence_remove=None, expected_revision=None) -> LabelChange:
    return LabelChange(criterion_id=criterion_id, verdict=verdict, option_label=option_label, value=value,
                       rationale=rationale, evidence_add=evidence_add, evidence_remove=evidence_remove,
                       expected_revision=expected_revision)


def label_record(*, assignment_id: int, criterion_id: int, user, expected_revision: int | None = None,
                 **decision) -> tuple[Assignment, Criterion, Label]:
    """One save from the labeling page or the API: a decision, a rationale, or one evidence quote
    added or removed, on the user's own assignment (404 for anybody else's). ``expected_revision``
    (0 = no label yet) refuses a stale change with ``LabelConflict``, except that repeating a change
    already stored (a retry whose first attempt did arrive) succeeds without a new revision. The
    page's form and the API require it; a caller that leaves it out (a script) builds on whatever
    is stored."""
    change = _change(criterion_id, expected_revision=expected_revision, **decision)
    assignment, [label] = labels_write(changes=[change], user=user, action="annotate", assignment_id=assignment_id)
    return assignment, label.criterion, label


def labels_record_batch(*, assignment_id: int, user, decisions: list[dict], rows: bool = False) -> list[Label] | list[LabelRow]:
    """Several saves of one assignment at once, all or none: each decision is ``label_record``'s
    keyword arguments for one criterion (``criterion_id``, a decision and/or a rationale, quotes,
    ``expected_revision``). The first refused one (a stale revision, an invalid decision, an
    unknown criterion) raises ``BatchRefused`` naming it, and every label stays as it was. A
    criterion may appear once. It costs the same few statements whatever the number of decisions.
    The labels come back as ``Label``s, or with ``rows=True`` as ``LabelRow``s (the API's answer
    needs no model instances)."""
    changes = [_change(**decision) for decision in decisions]
    _, labels = labels_write(changes=changes, user=user, action="annotate", assignment_id=assignment_id, batch=True,
                             rows=rows)
    return labels
