"""The offline baseline judge (SPEC §7): deterministic lexical coverage of a criterion's key
terms in the response, aware of negation. It needs no network and no model, so every
installation can run a judge end to end; it is a floor to compare LLM judges against, not a
grader, and the UI labels it so.

Key terms are the criterion's content words (stop words and rubric verbs such as
"recommends" removed, crude suffix stemming). A term counts as present when it occurs in
the response outside the scope of a negation cue ("no", "not", "avoid", ...; three words
back, within the sentence). A criterion that is itself negated ("Does not recommend
antibiotics") is met when its terms are absent. Met when coverage >= threshold (0.5).
Ordinal criteria map coverage onto the scale; nominal ones cannot be assessed.
"""
import re

from annotation.vocabulary import CANNOT_ASSESS, MET, NOT_MET

from .parsing import Outcome

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
NEGATIONS = frozenset(
    "no not never without avoid avoids avoiding don't doesn't didn't isn't aren't shouldn't cannot can't "
    "won't neither nor none against stop refrain".split()
)
STOP_WORDS = frozenset(
    """a an the and or of to in on for with by at from as is are be been being was were it its this that these
    those which who whom whose what when where why how if then than so such e g eg i e ie etc any all each
    every some more most other into about over under after before during while may might can could should
    would will must do does did has have had their there they them he she his her you your we our us also
    only very per via based one two three response answer model patient patients user""".split()
)
RUBRIC_VERBS = frozenset(
    """recommend recommends recommended recommending advise advises advised advising mention mentions mentioned
    mentioning state states stated stating suggest suggests suggested suggesting include includes included
    including explain explains explained explaining describe describes described provide provides provided
    discuss discusses discussed note notes noted identify identifies identified ask asks asked asking
    tell tells told say says said encourage encourages encouraged appropriately appropriate clearly correctly
    correct""".split()
)
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def key_terms(criterion_text: str) -> tuple[list[str], bool]:
    """The stemmed key terms of a criterion and whether the criterion itself is negated."""
    words = _WORD.findall(criterion_text.lower())
    negated = any(w in NEGATIONS for w in words)
    terms: list[str] = []
    for w in words:
        if w in STOP_WORDS or w in RUBRIC_VERBS or w in NEGATIONS or len(w) < 2:
            continue
        stem = _stem(w)
        if stem not in terms:
            terms.append(stem)
    return terms, negated


def _find_terms(terms: list[str], response_text: str) -> tuple[set[str], set[str], list[str]]:
    """(present, negated-only, evidence sentences) for the terms in the response."""
    present: set[str] = set()
    negated: set[str] = set()
    evidence: list[str] = []
    for match in _SENTENCE.finditer(response_text):
        sentence = match.group(0).strip()
        words = _WORD.findall(sentence.lower())
        hit = False
        for i, w in enumerate(words):
            stem = _stem(w)
            if stem not in terms:
                continue
            if any(x in NEGATIONS for x in words[max(0, i - 3):i]):
                negated.add(stem)
            else:
                present.add(stem)
                hit = True
        if hit and sentence and sentence not in evidence:
            evidence.append(sentence)
    return present, negated - present, evidence


def baseline_judge(*, criterion_text: str, response_text: str, kind: str, options: list[dict], threshold: float = 0.5) -> Outcome:
    terms, criterion_negated = key_terms(criterion_text)
    if not terms:
        return Outcome(valid=True, verdict=CANNOT_ASSESS, explanation="Baseline: the criterion has no key terms to look for.")
    present, negated, evidence = _find_terms(terms, response_text)
    coverage = len(present) / len(terms)
    detail = f"found {len(present)}/{len(terms)} key terms ({', '.join(sorted(present)) or 'none'})"
    if negated:
        detail += f"; negated: {', '.join(sorted(negated))}"
    if kind == "binary":
        met = coverage >= threshold
        if criterion_negated:
            met = not met
            detail += "; the criterion is negated, so it is met when its terms are absent"
        verdict = MET if met else NOT_MET
        return Outcome(valid=True, verdict=verdict, explanation=f"Baseline (lexical coverage): {detail}.",
                       evidence=evidence[:3] if verdict == MET and not criterion_negated else [])
    scored = sorted((o for o in options if not o.get("na")), key=lambda o: float(o["value"]))
    if kind != "ordinal" or not scored:
        return Outcome(valid=True, verdict=CANNOT_ASSESS, explanation=f"Baseline: cannot grade a {kind} criterion; {detail}.")
    position = min(len(scored) - 1, int(round(coverage * (len(scored) - 1))))
    chosen = scored[position]
    return Outcome(valid=True, option_label=chosen["label"], value=float(chosen["value"]),
                   explanation=f"Baseline (lexical coverage {coverage:.0%} mapped onto the scale): {detail}.",
                   evidence=evidence[:3])
