"""Writes of labels: from the labeling page (``label_record``, the hot path) and from
everywhere else (``label_save``: the checker review, the admin, re-imports).

Both go through ``labelrows.label_row_write``, which appends one ``LabelHistory`` row with who,
when, the old and the new state to every change, inside the same transaction as the change,
so no change can be stored without its history.
"""
from types import SimpleNamespace

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from .decisions import DecisionError, decision_validate
from .labelrows import LabelTarget, assignment_mark_in_progress, label_lock, label_row_write, label_target_lock
from .markdown import quote_in_response
from .models import Assignment, Case, Cohort, CohortMembership, Criterion, Label, Project, Response


def project_data_touch(*, project_ids) -> None:
    """Record that the data of these projects changed outside the services that leave their own
    trace (an admin edit or deletion): their cached reports go stale, other projects' stay."""
    ids = {pk for pk in project_ids if pk is not None}
    if ids:
        Project.objects.filter(pk__in=ids).update(data_changed_at=timezone.now())


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
    """Create or change a label outside the labeling page (admin, re-import, checker review)
    and log it, through the one write path (``labelrows.label_row_write``).

    ``role="annotator"``: the label of ``annotator`` for (response, criterion). ``role="checker"``:
    the cohort's checker label for (response, criterion), recorded by ``annotator`` (a checker).
    ``rationale`` / ``evidence`` left as None keep their stored value. With ``expected_revision``
    the change is refused (ValidationError) when somebody else changed the label since that
    revision, instead of silently overwriting their work. The label is read locked first.
    """
    try:
        decision = decision_validate(
            kind=criterion.kind, options=criterion.options, verdict=verdict, option_label=option_label, value=value
        )
    except DecisionError as exc:
        raise ValidationError({exc.field: exc.message}) from exc
    if role not in (Label.ANNOTATOR_ROLE, Label.CHECKER_ROLE):
        raise ValidationError({"role": f"role {role!r} is not annotator or checker"})
    if not Case.objects.filter(pk=response.case_id, rubric_version_id=criterion.rubric_version_id).exists():
        raise ValidationError({"criterion": f"criterion {criterion.external_id!r} is not in the rubric of this response"})
    target = LabelTarget(
        project_id=response.project_id, response_id=response.pk, criterion=criterion, cohort_id=cohort.pk,
        owner_id=annotator.pk, role=role, label=None,
        assignment_id=assignment.pk if assignment is not None and role == Label.ANNOTATOR_ROLE else None,
    )
    for _attempt in range(2):
        target.label = label = label_lock(target=target)
        if label is not None and expected_revision is not None and label.revision != expected_revision:
            raise ValidationError(
                {"revision": f"this label was changed elsewhere (now revision {label.revision}); reload to see it"}
            )
        changes = {
            "verdict": decision.verdict, "option_label": decision.option_label, "value": decision.value,
            "rationale": rationale if rationale is not None else (label.rationale if label else ""),
            "evidence": list(evidence) if evidence is not None else list(label.evidence or []) if label else [],
            "role": role,
        }
        old, new = (label_state(label) if label else None), label_state(SimpleNamespace(**changes))
        # A cohort's checker label also changes when another checker records it (who is in the history row).
        if old == new and (label is None or label.annotator_id == target.owner_id):
            return label
        saved = label_row_write(target=target, changes=changes, old=old, new=new, user=changed_by, action=action, note=note)
        if saved is not None:
            return saved
        # Only an insert can race with the lock held: somebody created the label meanwhile.
    raise LabelConflict(target.label)


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
        target.label = label_lock(target=target)
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


BATCH_MAX = 500  # decisions in one batch save


class BatchRefused(ValidationError):
    """One decision of a batch was refused, so none was applied; ``index`` and ``criterion_id``
    name it, ``conflict`` says whether it was a stale revision (``LabelConflict``)."""

    def __init__(self, *, index: int, criterion_id: int, error: ValidationError):
        self.index, self.criterion_id, self.error = index, criterion_id, error
        self.conflict = isinstance(error, LabelConflict)
        detail = "; ".join(error.messages)
        super().__init__({"labels": f"decision {index + 1} (criterion {criterion_id}): {detail}; nothing was saved"},
                         code="conflict" if self.conflict else "invalid")


@transaction.atomic
def labels_record_batch(*, assignment_id: int, user, decisions: list[dict]) -> list[Label]:
    """Several saves of one assignment at once, all or none (issue 12, point 7): each decision is
    ``label_record``'s keyword arguments for one criterion (``criterion_id``, a decision and/or a
    rationale, quotes, ``expected_revision``), applied in order by ``label_record`` itself, so
    the rules, the revisions and the history rows are the single saves'. The first refused one
    (a stale revision, an invalid decision, an unknown criterion) raises ``BatchRefused`` naming
    it, and the transaction leaves every label as it was. A criterion may appear once."""
    if not decisions:
        raise ValidationError({"labels": "send at least one decision"})
    if len(decisions) > BATCH_MAX:
        raise ValidationError({"labels": f"at most {BATCH_MAX} decisions per batch, not {len(decisions)}"})
    seen: set[int] = set()
    for index, decision in enumerate(decisions):
        if decision["criterion_id"] in seen:
            raise ValidationError({"labels": f"decision {index + 1}: criterion {decision['criterion_id']} appears twice; "
                                             "send one decision per criterion"})
        seen.add(decision["criterion_id"])
    labels = []
    for index, decision in enumerate(decisions):
        try:
            _, _, label = label_record(assignment_id=assignment_id, user=user, **decision)
        except Http404:
            raise BatchRefused(index=index, criterion_id=decision["criterion_id"],
                               error=ValidationError({"criterion": "not a criterion of this assignment"})) from None
        except ValidationError as exc:
            if index == 0 and getattr(exc, "code", None) == "read_only":
                raise
            raise BatchRefused(index=index, criterion_id=decision["criterion_id"], error=exc) from None
        labels.append(label)
    return labels

