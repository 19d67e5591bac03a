"""Recording an adjudicator's final decision for (response, criterion) (issue 10, point 3).

The adjudication row is locked, the decision validated against the criterion like every other
decision (``annotation.decisions.decision_validate``), a stale revision refused instead of
overwritten, and every change appends one ``AdjudicationHistory`` row in the same transaction.
"""
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.decisions import DecisionError, decision_validate
from annotation.models import Case, Criterion, Response

from ..models import Adjudication, AdjudicationHistory

CONFIDENCES = tuple(c for c, _ in Adjudication.CONFIDENCES)
CATEGORIES = tuple(c for c, _ in Adjudication.CATEGORIES)
MAX_NOTE = 5000


class AdjudicationConflict(ValidationError):
    """The adjudication changed since the revision the page showed (another adjudicator or tab)."""

    def __init__(self, adjudication: Adjudication):
        super().__init__({"revision": f"changed by someone else meanwhile (now revision {adjudication.revision}); "
                                      "the page shows the latest, decide again if you still disagree"},
                         code="conflict")
        self.adjudication = adjudication


def adjudication_state(adjudication: Adjudication | None) -> dict | None:
    """What an adjudication's history records."""
    if adjudication is None:
        return None
    return {"verdict": adjudication.verdict, "option": adjudication.option_label, "value": adjudication.value,
            "confidence": adjudication.confidence, "category": adjudication.category, "note": adjudication.note,
            "adjudicator": adjudication.adjudicator.username if adjudication.adjudicator_id and adjudication.adjudicator else None}


@transaction.atomic
def adjudication_record(
    *, response: Response, criterion: Criterion, user, verdict: str | None = None, option_label: str | None = None,
    value: float | None = None, confidence: str | None = None, category: str | None = None, note: str | None = None,
    expected_revision: int | None = None, action: str = "adjudicate",
) -> Adjudication:
    """Create or change the adjudication of (response, criterion).

    A decision (verdict, option or value) is required for a new adjudication; on an existing one,
    leaving it out keeps the decision and changes only what is given (confidence, category,
    note). ``expected_revision`` (0 = "none yet") refuses a stale change with
    ``AdjudicationConflict``. The caller has checked the user's role (``annotation.access``).
    """
    if not Case.objects.filter(pk=response.case_id, rubric_version_id=criterion.rubric_version_id).exists():
        raise ValidationError({"criterion": f"criterion {criterion.external_id!r} is not in the rubric of this response"})
    if confidence not in (None, "") and confidence not in CONFIDENCES:
        raise ValidationError({"confidence": f"confidence {confidence!r} is not one of {', '.join(CONFIDENCES)}"})
    if category not in (None, "") and category not in CATEGORIES:
        raise ValidationError({"category": f"category {category!r} is not one of {', '.join(CATEGORIES)}"})
    if note is not None and len(note) > MAX_NOTE:
        raise ValidationError({"note": f"a note can be at most {MAX_NOTE:,} characters"})
    current = (
        Adjudication.objects.select_for_update().filter(response=response, criterion=criterion).order_by("pk").first()
    )
    revision = current.revision if current else 0
    if expected_revision is not None and expected_revision != revision:
        raise AdjudicationConflict(current) if current else ValidationError(
            {"revision": "this adjudication was removed meanwhile; reload the page"})
    given = verdict is not None or option_label is not None or value is not None
    if not given and current is None:
        raise ValidationError({"decision": "choose the final decision first, then its confidence, category or note"})
    if given:
        try:
            decision = decision_validate(kind=criterion.kind, options=criterion.options, verdict=verdict,
                                         option_label=option_label, value=value)
        except DecisionError as exc:
            raise ValidationError({"decision": exc.message}) from exc
    old = adjudication_state(current)
    adjudication = current or Adjudication(project_id=response.project_id, response=response, criterion=criterion,
                                           revision=0)
    if given:
        adjudication.verdict, adjudication.option_label, adjudication.value = decision.verdict, decision.option_label, decision.value
    if confidence is not None:
        adjudication.confidence = confidence
    if category is not None:
        adjudication.category = category
    if note is not None:
        adjudication.note = note.strip()
    adjudication.adjudicator = user if user is not None and user.pk else None
    new = adjudication_state(adjudication)
    if old == new:
        return adjudication
    adjudication.revision += 1
    adjudication.save()
    AdjudicationHistory.objects.create(adjudication=adjudication, project_id=adjudication.project_id,
                                       changed_by=adjudication.adjudicator, action=action, old=old, new=new)
    return adjudication
