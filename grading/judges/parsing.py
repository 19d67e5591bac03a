"""Strict parsing of judge output and the evidence check (SPEC §3, §7).

A judge answer is accepted when the whole text is one JSON object, or when it holds one
fenced code block (```json ... ```) that is one JSON object. Anything else — prose, several
objects, a missing or mistyped field, an option that is not among the criterion's options —
is invalid: it is stored with its raw text, counted, and treated as not met. It is never
retried into a different answer. Decisions are checked with ``annotation.decisions`` so a
judge is held to exactly the rules a human label is.

Evidence check: a quote is valid when, after whitespace normalization, it is a substring of
the response. With fewer valid quotes than required, a binary met is capped at not_met and an
ordinal top option at the option just below the top, and the judgment is flagged; an answer the
cap does not change (already not met, already below the top) is not flagged.
"""
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache

from annotation.decisions import DecisionError, decision_validate
from annotation.vocabulary import CANNOT_ASSESS, MET, NOT_MET

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Outcome:
    """What one call decided, ready to store as a judgment."""

    valid: bool
    verdict: str | None = None
    option_label: str | None = None
    value: float | None = None
    explanation: str = ""
    evidence: list[str] = field(default_factory=list)
    evidence_capped: bool = False
    problem: str = ""  # why an output is invalid


def _json_object(text: str) -> dict | None:
    stripped = text.strip()
    candidates = [stripped]
    fences = _FENCE.findall(stripped)
    if len(fences) == 1:
        candidates.append(fences[0].strip())
    for candidate in candidates:
        try:
            obj = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            return obj
    return None


def output_parse(*, text: str | None, kind: str, options: list[dict]) -> Outcome:
    """Parse one judge answer for a criterion of ``kind`` with ``options``."""
    if not text or not text.strip():
        return Outcome(valid=False, problem="empty output")
    obj = _json_object(text)
    if obj is None:
        return Outcome(valid=False, problem="output is not one JSON object")
    explanation = obj.get("explanation")
    if not isinstance(explanation, str):
        return Outcome(valid=False, problem="missing or non-string field 'explanation'")
    evidence = obj.get("evidence", [])
    if evidence is None:
        evidence = []
    if not isinstance(evidence, list) or not all(isinstance(q, str) for q in evidence):
        return Outcome(valid=False, explanation=explanation, problem="field 'evidence' is not a list of strings")
    try:
        if kind == "binary":
            met = obj.get("criteria_met", "missing")
            if not isinstance(met, bool):
                raise DecisionError("criteria_met", "missing or non-boolean field 'criteria_met'")
            decision = decision_validate(kind=kind, options=options, verdict=MET if met else NOT_MET)
        else:
            label = obj.get("option")
            if not isinstance(label, str):
                raise DecisionError("option", "missing or non-string field 'option'")
            label = _match_label(label, options)
            decision = decision_validate(kind=kind, options=options, option_label=label)
    except DecisionError as exc:
        return Outcome(valid=False, explanation=explanation, evidence=evidence, problem=exc.message)
    return Outcome(
        valid=True, verdict=decision.verdict, option_label=decision.option_label, value=decision.value,
        explanation=explanation, evidence=evidence,
    )


def _match_label(answer: str, options: list[dict]) -> str:
    """The option whose label equals the answer (exactly, else ignoring case and outer space)."""
    if any(o["label"] == answer for o in options):
        return answer
    folded = answer.strip().casefold()
    matches = [o["label"] for o in options if o["label"].strip().casefold() == folded]
    return matches[0] if len(matches) == 1 else answer


def whitespace_normalize(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@lru_cache(maxsize=8)
def _haystack(response_text: str) -> str:
    """The normalized response, kept for the next quotes: a page checks hundreds of quotes
    against the same response, and normalizing it each time was most of the page's cost."""
    return whitespace_normalize(response_text)


def evidence_valid_quotes(*, quotes: list[str], response_text: str) -> list[str]:
    """The quotes that occur verbatim (after whitespace normalization) in the response."""
    haystack = _haystack(response_text)
    return [q for q in quotes if whitespace_normalize(q) and whitespace_normalize(q) in haystack]


def evidence_apply(*, outcome: Outcome, response_text: str, min_quotes: int, kind: str, options: list[dict]) -> Outcome:
    """Cap a valid decision that lacks the required evidence and flag it. Only an answer the cap
    changes is flagged: a binary met becomes not met, an ordinal top option the one just below
    it; an answer already not met or below the top (or a nominal one, which has no top) is left
    as it is and unflagged, so ``evidence_capped`` counts the decisions the evidence rule changed."""
    if not outcome.valid or min_quotes <= 0 or outcome.verdict == CANNOT_ASSESS:
        return outcome
    if len(evidence_valid_quotes(quotes=outcome.evidence, response_text=response_text)) >= min_quotes:
        return outcome
    fields = dict(outcome.__dict__)
    if kind == "binary" and outcome.verdict == MET:
        fields["verdict"] = NOT_MET
    elif kind == "ordinal":
        scored = sorted((o for o in options if not o.get("na")), key=lambda o: float(o["value"]))
        chosen = next((o for o in options if o["label"] == outcome.option_label), None)
        if len(scored) >= 2 and chosen is not None and float(chosen["value"]) >= float(scored[-1]["value"]):
            below = [o for o in scored if float(o["value"]) < float(scored[-1]["value"])][-1]
            fields["option_label"], fields["value"] = below["label"], float(below["value"])
    if (fields["verdict"], fields["option_label"], fields["value"]) == (outcome.verdict, outcome.option_label, outcome.value):
        return outcome
    return Outcome(**{**fields, "evidence_capped": True})
