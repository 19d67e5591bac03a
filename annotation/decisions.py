"""Validation of one decision against its criterion, shared by the importer, the labeling
views and the judges, so that every entry point accepts and rejects exactly the same things.

A decision is a verdict (binary criteria; ``cannot_assess`` is allowed for every kind), an
option label (ordinal / nominal), or a value (ordinal only: any number between the lowest
and the highest option value, e.g. a mean over repeated runs). The names of the verdicts, and
how a decision is shown and encoded in a form, are the vocabulary's (``annotation.vocabulary``).
"""
from dataclasses import dataclass

from .vocabulary import CANNOT_ASSESS, MET, VERDICTS, DecisionError

__all__ = ["Decision", "DecisionError", "decision_validate", "quotes_missing"]


@dataclass(frozen=True)
class Decision:
    verdict: str | None = None
    option_label: str | None = None
    value: float | None = None

    @property
    def is_empty(self) -> bool:
        return self.verdict is None and self.option_label is None and self.value is None


def decision_validate(
    *,
    kind: str,
    options: list[dict],
    verdict: object = None,
    option_label: object = None,
    value: object = None,
    allow_invalid: bool = False,
) -> Decision:
    """Check one decision against a criterion's kind and options and return it normalized.

    For an option, ``value`` becomes that option's value. ``allow_invalid`` accepts an empty
    decision (a judge output that could not be parsed), which is stored and counted invalid.
    """
    given = [name for name, v in (("verdict", verdict), ("option", option_label), ("value", value)) if v is not None]
    if len(given) > 1:
        raise DecisionError(given[1], f"give one of verdict, option or value, not {' and '.join(given)}")
    if not given:
        if allow_invalid:
            return Decision()
        raise DecisionError("verdict", "a decision is required (verdict, option or value)")
    if verdict is not None:
        if verdict not in VERDICTS:
            raise DecisionError("verdict", f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
        if kind != "binary" and verdict != CANNOT_ASSESS:
            raise DecisionError("verdict", f"verdict {verdict!r} given for a {kind} criterion (use option)")
        return Decision(verdict=str(verdict))
    if kind == "binary":
        raise DecisionError(given[0], f"{given[0]} given for a binary criterion (use verdict)")
    if option_label is not None:
        option = next((o for o in options if o["label"] == option_label), None)
        if option is None:
            labels = ", ".join(repr(o["label"]) for o in options)
            raise DecisionError("option", f"option {option_label!r} is not among the options ({labels})")
        return Decision(option_label=str(option_label), value=float(option["value"]))
    if kind != "ordinal":
        raise DecisionError("value", f"value given for a {kind} criterion (use option)")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DecisionError("value", f"value {value!r} is not a number")
    scored = [float(o["value"]) for o in options if not o.get("na")]
    low, high = min(scored), max(scored)
    if not low <= float(value) <= high:
        raise DecisionError("value", f"value {value} is outside the option range {low}..{high}")
    return Decision(value=float(value))


def quotes_missing(*, min_evidence: int, verdict: str | None, quotes: list[str], is_valid) -> int:
    """How many more quotes a decision needs before it may be handed in (issue 12): a criterion
    that requires ``min_evidence`` quotes, marked met, needs that many valid ones (``is_valid``:
    the quote occurs in the response text, checked again now). Other decisions need none."""
    if min_evidence <= 0 or verdict != MET:
        return 0
    return max(0, min_evidence - sum(1 for quote in quotes if is_valid(quote)))

