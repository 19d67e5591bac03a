"""What a label change does: the caps on what a person typed, the validation of a decision
against its criterion (quotes checked against the response text), and the refusals
(``LabelConflict``, ``BatchRefused``). No database work: the targets come from ``targets``."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from evalsite.codes import CONFLICT

from ..decisions import DecisionError, decision_validate
from ..markdown import quote_in_response
from ..models import Assignment, Criterion, Label

MAX_RATIONALE = 5000  # characters of a rationale
MAX_QUOTE = 2000  # characters of one evidence quote
MAX_QUOTES = 100  # quotes on one label
MAX_SECONDS = 24 * 3600.0  # time spent on one decision
BATCH_MAX = 500  # changes in one interactive batch

FINAL_STATUSES = (Assignment.SUBMITTED, Assignment.CHECKED)
EDITABLE_STATUSES = (Assignment.OPEN, Assignment.IN_PROGRESS)


class LabelConflict(ValidationError):
    """The label changed since the revision the caller saw (another tab, a manager, an import)."""

    def __init__(self, label: Label | None):
        revision = label.revision if label else 0
        super().__init__(
            {"revision": f"changed in another tab or window, or changed elsewhere by a reviewer or manager (now revision"
                         f" {revision}); your change was not applied"},
            code="conflict",
        )
        self.label = label


class BatchRefused(ValidationError):
    """One change of a batch was refused, so none was applied; ``index`` and ``criterion_id``
    name it, ``conflict`` says whether it was a stale revision (``LabelConflict``)."""

    def __init__(self, *, index: int, criterion_id: int, error: ValidationError):
        self.index, self.criterion_id, self.error = index, criterion_id, error
        self.conflict = isinstance(error, LabelConflict)
        inner = [e.code for e in (error.error_list if not hasattr(error, "error_dict")
                                  else [e for items in error.error_dict.values() for e in items])]
        code = CONFLICT if self.conflict else inner[0] if inner and len(set(inner)) == 1 and inner[0] else "invalid"
        self.code_of_refusal = code  # CONFLICT (a stale revision), NOT_FOUND (no such criterion) or "invalid"
        detail = "; ".join(error.messages)
        super().__init__({"labels": ValidationError(
            f"decision {index + 1} (criterion {criterion_id}): {detail}; nothing was saved", code=code)})


@dataclass
class LabelChange:
    """One change asked of a label. A decision (``verdict`` / ``option_label`` / ``value``) or,
    left empty, the stored one kept; ``rationale`` and ``evidence`` None keep the stored ones;
    ``evidence_add`` / ``evidence_remove`` change one quote (the labeling page's clicks).

    On the assignment path (``labels_write(assignment_id=...)``) the label is the assignment
    annotator's own for ``criterion_id``; elsewhere ``response_id``, ``cohort_id``, ``owner_id``
    (the annotator, or for a checker label the checker who records it) and ``role`` name it.
    """

    criterion_id: int
    verdict: str | None = None
    option_label: str | None = None
    value: float | None = None
    rationale: str | None = None
    evidence: list[str] | None = None
    evidence_add: str | None = None
    evidence_remove: str | None = None
    time_spent_seconds: float | None = None
    expected_revision: int | None = None
    response_id: int | None = None
    cohort_id: int | None = None
    owner_id: int | None = None
    role: str = Label.ANNOTATOR_ROLE
    assignment_id: int | None = None


class CriterionRule:
    """What validating a decision needs of its criterion: a batch that answers rows
    (``labels_write(rows=True)``) reads no more of it than this, in ``CRITERION_RULE_COLUMNS``
    order (the options as the database gives them: JSON text, or already decoded)."""

    __slots__ = ("pk", "rubric_version_id", "kind", "options", "external_id")

    def __init__(self, pk: int, rubric_version_id: int, kind: str, options, external_id: str):
        self.pk, self.rubric_version_id, self.kind, self.external_id = pk, rubric_version_id, kind, external_id
        self.options = json.loads(options) if isinstance(options, (str, bytes)) else options


@dataclass(slots=True)
class LabelRow:
    """A label as the write service left it, for a caller that answers some of its fields (the
    batch API) rather than rendering a ``Label``: the same attribute names, no model instance."""

    id: int
    criterion_id: int
    verdict: str | None
    option_label: str | None
    value: float | None
    rationale: str
    evidence: list
    revision: int

    @property
    def pk(self) -> int:
        return self.id


@dataclass
class Target:
    change: LabelChange
    project_id: int
    response_id: int
    cohort_id: int
    owner_id: int
    role: str
    assignment_id: int | None
    criterion: Criterion | CriterionRule
    label: Label | None = None
    new: dict = field(default_factory=dict)


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


def label_input_check(*, rationale: str | None = None, quotes: Sequence[str] = (),
                      time_spent_seconds: float | None = None) -> None:
    """The caps every path applies to what a person typed (the importer calls it per line too)."""
    if rationale is not None and len(rationale) > MAX_RATIONALE:
        raise ValidationError({"rationale": f"a rationale can be at most {MAX_RATIONALE:,} characters"})
    if len(quotes) > MAX_QUOTES:
        raise ValidationError({"evidence": f"at most {MAX_QUOTES} quotes on one decision"})
    for quote in quotes:
        if len(quote) > MAX_QUOTE:
            raise ValidationError({"quote": f"a quote can be at most {MAX_QUOTE:,} characters"})
    if time_spent_seconds is not None and not (0 <= time_spent_seconds <= MAX_SECONDS):
        raise ValidationError({"time_spent_seconds": f"time spent must be between 0 and {MAX_SECONDS:,.0f} seconds"})


def would_be(label: Label, new: dict) -> bool:
    return (
        (label.verdict, label.option_label, label.value) == (new["verdict"], new["option_label"], new["value"])
        and new["rationale"] == label.rationale
        and list(label.evidence or []) == new["evidence"]
    )


def new_state(target: Target, texts: dict[int, str] | None) -> dict:
    """The label's fields after the change, validated (``ValidationError`` naming the field)."""
    change, label, criterion = target.change, target.label, target.criterion
    verdict, option_label, value = change.verdict, change.option_label, change.value
    if verdict is None and option_label is None and value is None:
        if label is None:
            raise ValidationError({"verdict": "choose a decision first, then add a rationale or evidence"})
        verdict, option_label = label.verdict, label.option_label
        value = label.value if label.option_label is None and label.verdict is None else None
    try:
        decision = decision_validate(kind=criterion.kind, options=criterion.options, verdict=verdict,
                                     option_label=option_label, value=value)
    except DecisionError as exc:
        raise ValidationError({exc.field: exc.message}) from exc
    if change.evidence is not None:
        evidence = [str(q).strip() for q in change.evidence]
        evidence = list(dict.fromkeys(q for q in evidence if q))
        fresh = [q for q in evidence if label is None or q not in (label.evidence or [])]
    else:
        evidence = list(label.evidence or []) if label else []
        fresh = []
    if change.evidence_add is not None:
        quote = change.evidence_add.strip()
        if quote not in evidence:
            evidence.append(quote)
            fresh.append(quote)
    if change.evidence_remove is not None and change.evidence_remove in evidence:
        evidence.remove(change.evidence_remove)
    rationale = change.rationale if change.rationale is not None else (label.rationale if label else "")
    label_input_check(rationale=rationale, quotes=fresh, time_spent_seconds=change.time_spent_seconds)
    if fresh:
        text = texts[target.response_id]
        for quote in fresh:
            if not quote_in_response(quote=quote, text=text):
                raise ValidationError({"quote": f"the quote is not part of the response text: {quote[:60]!r}"})
    return {
        "verdict": decision.verdict, "option_label": decision.option_label, "value": decision.value,
        "rationale": rationale, "evidence": evidence, "role": target.role,
        "time_spent_seconds": change.time_spent_seconds if change.time_spent_seconds is not None
        else (label.time_spent_seconds if label else None),
    }

