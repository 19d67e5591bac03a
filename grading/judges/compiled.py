"""RULERS compiled mode of a chat judge (SPEC §3 "Trait score"; issue 13, point 3).

One call per (response, trait, sample) instead of one per criterion: the prompt carries the
trait's locked checklist (its items numbered 1..k, the rubric version's hash, so the judge sees
the rubric it is held to), and the response as its sentence bank (``annotation.sentences``:
the sentences numbered as annotators see them). The judge answers a decision 0 / 1 / 2 per item
and quotes anchored to sentence ids; each quote is kept only when its text, whitespace
normalized, is in the sentence it names (an altered quote, or one from another sentence, is
rejected and said so in the item's explanation). Each item's answer becomes that checklist
criterion's judgment; the trait score is derived from them by ``metrics.trait_score`` (its
evidence gate counts the quotes kept here) when reports read them.
"""
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from annotation.models import Criterion, RubricVersion
from annotation.sentences import Sentence, sentence_bank

from .calls import Call, Item, criterion_text
from .parsing import Outcome, _json_object, whitespace_normalize

SYSTEM = (
    "You are a careful physician scoring a written answer against a locked checklist. You judge only what the "
    "answer actually says, you quote it word for word with the number of the sentence each quote comes from, and "
    "you reply with one JSON object and nothing else."
)
DECISIONS = {0: "not present", 1: "partially present", 2: "clearly present"}


@dataclass(frozen=True)
class CompiledCall:
    """The checklist items of one trait for one response, answered by one call."""

    items: tuple[Item, ...]
    trait: str  # the trait criterion's external id
    sample: int

    @property
    def item(self) -> Item:
        """The first item: what the response, case and rubric version of the call are read from."""
        return self.items[0]

    @property
    def keys(self) -> list[tuple[int, int, int]]:
        return [(i.response_pk, i.criterion_pk, self.sample) for i in self.items]

    def calls(self) -> list[Call]:
        return [Call(i, self.sample) for i in self.items]


def compiled_calls(*, items: Iterable[Item], samples: int, reverse: bool = False) -> Iterator[CompiledCall]:
    """The items of a plan chunk grouped per (response, trait), in rubric order (reversed in a
    ``reversed`` rubric-perturbation run), × samples."""
    groups: dict[tuple[int, str], list[Item]] = {}
    for item in items:
        if item.checklist_of:
            groups.setdefault((item.response_pk, item.checklist_of), []).append(item)
    for (_, trait), listed in groups.items():
        ordered = tuple(reversed(listed)) if reverse else tuple(listed)
        for s in range(max(1, samples)):
            yield CompiledCall(ordered, trait, s)


class CompiledPrompts:
    """The traits' texts and the rubric versions' hashes of a project, read once per run."""

    def __init__(self, project):
        self.traits = {(version, ext): text for version, ext, text in Criterion.objects.filter(project=project)
                       .values_list("rubric_version_id", "external_id", "text")}
        self.hashes = dict(RubricVersion.objects.filter(project=project).values_list("pk", "content_hash"))

    def messages(self, call: CompiledCall, *, conversation: str, author: str, settings=None) -> list[dict]:
        item = call.item
        checklist = "\n".join(f"{n}. {criterion_text(i, settings) if settings else i.criterion_text}"
                               for n, i in enumerate(call.items, 1))
        bank = "\n".join(f"[{s.id}] {s.text}" for s in sentence_bank(item.response_text))
        user = (
            f"<conversation>\n{conversation}\n</conversation>\n\n"
            f'<rubric version="{self.hashes.get(item.rubric_version_id, "")}" locked="true">\n'
            f"<trait>{self.traits.get((item.rubric_version_id, call.trait), call.trait)}</trait>\n"
            f"<checklist>\n{checklist}\n</checklist>\n</rubric>\n\n"
            f'<answer author="{author}">\n{bank}\n</answer>\n\n'
            "The answer is given as numbered sentences. For each checklist item decide 0 (not present), 1 (partially "
            "present) or 2 (clearly present), judging the answer as written. Support every decision above 0 with quotes "
            "copied word for word from the answer, each with the number of the sentence it comes from; a quote that is not "
            "in its sentence word for word does not count.\n"
            "Reply with one JSON object of exactly this form, one entry per checklist item:\n"
            '{"items": [{"id": 1, "decision": 0, "quotes": [{"sentence": 3, "text": "<words of sentence 3>"}]}], '
            '"explanation": "<one or two sentences>"}\n'
        )
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


_REJECTED = re.compile(r"\[rejected quotes? \((\d+)\): ")


def rejected_quotes(explanation: str | None) -> int:
    """How many quotes ``compiled_parse`` rejected for an item (it says so in the explanation)."""
    found = _REJECTED.search(explanation or "")
    return int(found.group(1)) if found else 0


def quote_anchored(*, quote: object, sentences: list[Sentence]) -> tuple[str | None, str]:
    """(the quote's text, "") when it is verbatim (whitespace normalized) in the sentence it
    names; (None, why) otherwise."""
    if not isinstance(quote, dict) or not isinstance(quote.get("text"), str):
        return None, "a quote is not {\"sentence\": N, \"text\": \"...\"}"
    number, text = quote.get("sentence"), quote["text"]
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(sentences):
        return None, f"sentence {number!r} is not one of the answer's {len(sentences)} sentences"
    needle = whitespace_normalize(text)
    if not needle or needle not in whitespace_normalize(sentences[number - 1].text):
        return None, f"sentence {number} does not contain {text[:80]!r}"
    return text, ""


def compiled_parse(*, text: str | None, call: CompiledCall) -> list[Outcome]:
    """One outcome per checklist item of ``call`` (in its order)."""
    n = len(call.items)
    obj = _json_object(text) if text and text.strip() else None
    if obj is None:
        problem = "empty output" if not text or not text.strip() else "output is not one JSON object"
        return [Outcome(valid=False, problem=problem)] * n
    explanation = obj.get("explanation") if isinstance(obj.get("explanation"), str) else ""
    entries = obj.get("items")
    if not isinstance(entries, list):
        return [Outcome(valid=False, explanation=explanation, problem="missing list 'items'")] * n
    by_id = {}
    for entry in entries:
        if isinstance(entry, dict) and str(entry.get("id")) not in by_id:
            by_id[str(entry.get("id"))] = entry
    sentences = sentence_bank(call.item.response_text)
    outcomes = []
    for number, item in enumerate(call.items, 1):
        entry = by_id.get(str(number))
        decision = entry.get("decision") if entry else None
        if entry is None or isinstance(decision, bool) or decision not in DECISIONS:
            problem = f"no decision 0, 1 or 2 for checklist item {number}"
            outcomes.append(Outcome(valid=False, explanation=explanation, problem=problem))
            continue
        option = next((o for o in item.options if not o.get("na") and float(o["value"]) == decision), None)
        if option is None:
            outcomes.append(Outcome(valid=False, explanation=explanation, problem=f"item {number} has no option {decision}"))
            continue
        kept, rejected = [], []
        quotes = entry.get("quotes") or []
        for quote in quotes if isinstance(quotes, list) else [quotes]:
            found, why = quote_anchored(quote=quote, sentences=sentences)
            if found is not None and found not in kept:
                kept.append(found)
            elif found is None:
                rejected.append(why)
        note = f" [rejected quote{'s' if len(rejected) > 1 else ''} ({len(rejected)}): {'; '.join(rejected)}]" if rejected else ""
        outcomes.append(Outcome(valid=True, option_label=option["label"], value=float(option["value"]),
                                explanation=f"{explanation}{note}".strip(), evidence=kept))
    return outcomes
