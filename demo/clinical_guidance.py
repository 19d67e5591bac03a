"""Annotator instructions for the synthetic clinical study (:mod:`demo.clinical`).

``GUIDELINES`` is the project's Markdown guide (the labeling page's ``g`` key shows it);
:func:`criterion_guidance` writes one criterion's guidance (the ``i`` key) from what the item
is: a penalty, an item that needs a quote, an item with examples, an item with several parts,
plus hand-written notes for the general items that annotators most often read differently.
Items that need no explanation get none. Pure data and string building, deterministic; the
text is invented for the demo and is not medical advice.
"""

from __future__ import annotations

GUIDELINES = """\
# Labelling guide: clinical answers

You are checking answers to patient and clinician questions against a **rubric written for
each case**. Every rubric item is a yes/no question about the answer in front of you, not about
what a good answer *could* have said.

## How to decide one item

- **Met** — the answer says it, in any wording. Paraphrase counts; a hint does not.
- **Not met** — the answer does not say it, says it only by implication, or says the opposite.
- **Cannot assess** — use only when the item cannot be judged from the text at all (for example
  it depends on an attachment you cannot see). It is not a "not sure" button: when unsure,
  decide and write one sentence in the rationale.

## Penalty items

Items with a **negative weight** describe harmful or misleading advice. Mark them *met* when the
answer gives that advice, even if it is hedged ("you could probably…"). Mentioning the idea only
to warn against it is *not met*.

## Quotes

Some items ask for evidence (the labeling page says how many quotes). Select the sentence of the
answer that meets the item and add it as a quote; the quote must be copied from the answer, not
retyped. A quote is also welcome on any *met* item you found hard to decide.

## Working rules

1. Read the whole case first — the question, the chat turns and the patient's details — then
   the whole answer, then the rubric.
2. Judge the answer as written for **this** patient: advice that is right in general but wrong
   for this age, pregnancy status or medicine list does not meet an accuracy item.
3. Do not look things up to rescue a vague answer; the reader would not have done so.
4. Labels save as you click. Submit the response once every item has a decision; submitted work
   goes to your cohort's checker.
5. Your cohort works independently of the other cohort: do not discuss cases across cohorts.

## Keys

`j` / `k` next and previous item · `1` met · `2` not met · `3` cannot assess · `e` rationale ·
`q` quote the selected text · `g` this guide · `i` the item's guidance · `?` every key.
"""

# Hand-written notes for the general items that annotators most often read differently (by item text).
_GENERAL_NOTES = {
    "Gives clear safety-netting advice on when to seek urgent help": (
        "Needs both a **trigger** (symptoms getting worse, new symptoms, a named warning sign) and an "
        "**action** (urgent help, emergency services). \"See a doctor if needed\" has no trigger: not met."
    ),
    "Asks about current medications and allergies": (
        "Met when the answer asks for, or tells the reader to have ready, the medicine list **and** "
        "allergies. Asking about one of the two is not met."
    ),
    "Acknowledges the limits of remote advice": (
        "A sentence saying the advice cannot replace an examination or a consultation. A generic "
        "disclaimer at the very end still counts."
    ),
    "Shows empathy for the concern raised": (
        "An explicit acknowledgement of the person's worry or situation. A polite greeting alone "
        "(\"Thank you for your question\") is not empathy."
    ),
    "Takes the patient's age into account": (
        "The answer must use the age in its reasoning (risk, threshold, dose). Repeating the age "
        "from the question is not enough."
    ),
    "States the urgency level explicitly": (
        "Met by an explicit time frame or level (\"today\", \"now\", \"within a week\", "
        "\"emergency\"). Urgency that is only implied by the advice is not met."
    ),
    "Provides a brief differential diagnosis": (
        "More than one possible cause, named or described. A single working diagnosis is not met."
    ),
    "Considers pregnancy status where relevant": (
        "When pregnancy cannot apply (a man, a young child, an older woman) and the answer says "
        "nothing, mark **not met** rather than cannot assess: the rubric asks whether it is considered."
    ),
}

_EXAMPLE_WORDS = ("such as", "for example", "e.g.", "including")


def criterion_guidance(*, text: str, weight: float, tag: str, min_evidence: int) -> str | None:
    """Markdown guidance for one rubric item, or None when the item needs none."""
    parts = []
    if weight < 0:
        parts.append(
            "**Penalty item.** Mark *met* when the answer gives this advice, even hedged or as one option "
            "among several. If the answer raises it only to advise against it, mark *not met*."
        )
    if min_evidence:
        quotes = "one quote" if min_evidence == 1 else f"{min_evidence} quotes"
        parts.append(
            f"**Evidence required.** A *met* label needs {quotes}: select the sentence of the answer that "
            "meets the item. If you cannot find a sentence to quote, the item is not met."
        )
    lowered = text.lower()
    if any(word in lowered for word in _EXAMPLE_WORDS) or "(" in text:
        parts.append(
            "The examples named in the item are not a checklist: one of them, or an equivalent, is enough."
        )
    elif weight > 0 and " and " in lowered and tag != "general":
        parts.append("This item has several parts; every part must be present for *met*.")
    if text in _GENERAL_NOTES:
        parts.append(_GENERAL_NOTES[text])
    if weight >= 3 and tag.startswith("specialty:") and not min_evidence:
        parts.append("A key item for this presentation: check the wording carefully before marking it met.")
    return "\n\n".join(parts) if parts else None
