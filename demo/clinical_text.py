"""Text rendering for the synthetic clinical study (:mod:`demo.clinical`).

Turns the templates of :mod:`demo.clinical_templates` into case prompts
(single prompts or multi-turn chats, lay or professional register), Markdown
responses and reference answers. A response is assembled from the sentences of
the rubric items it meets, so each met item is quotable verbatim; the writing
style (headings, list markers, openings, verbosity) depends on the source
model so that different models read differently. All randomness comes from the
``random.Random`` passed in, which keeps the output deterministic.
"""

from __future__ import annotations

import random
import zlib

from demo.clinical_templates import (
    CHILD_NOUNS,
    CHILD_PEOPLE,
    CLARIFYING_QUESTIONS,
    LAY_PEOPLE,
    LAY_QUESTIONS,
    NOUNS,
    PRO_QUESTIONS,
    PRONOUNS,
)

# Style knobs per model; a model's style is picked from its name's CRC32 so that
# the same model always writes the same way, independent of the seed.
_HEADINGS = ("## ", "### ", "#### ")
_MARKERS = ("- ", "* ", "1. ")
_FILLERS = (
    "Every situation is a little different.",
    "The details below are general guidance.",
    "It helps to have the key information ready.",
    "Clinicians will tailor this to the individual.",
)
_LAY_TITLES = ("What to do now", "My advice", "Next steps for you", "What I would suggest")
_PRO_TITLES = ("Assessment", "Initial approach", "Clinical reasoning", "Management outline")
_LAY_INTROS = (
    "Thank you for getting in touch about {topic}.",
    "I'm sorry you are dealing with {topic}; here is how to think about it.",
    "This sounds worrying, so let's go through {topic} step by step.",
)
_PRO_INTROS = (
    "This presentation of {topic} needs a structured approach.",
    "Summary: {topic}, with the priorities set out below.",
    "Working impression: {topic}; the plan follows.",
)
_BOLD_PHRASES = ("**Key point:**", "**Bottom line:**", "**Most important:**")
_CLOSINGS = (
    "I hope this helps.",
    "Take care, and do not hesitate to seek help.",
    "Please act on the most urgent points first.",
    "Happy to clarify any of this.",
)


def model_style(model: str) -> dict:
    """Return the deterministic writing style of a source model."""
    code = zlib.crc32(model.encode("utf-8"))
    return {
        "heading": _HEADINGS[code % len(_HEADINGS)],
        "marker": _MARKERS[(code // 3) % len(_MARKERS)],
        "verbosity": (code // 9) % 4,
        "paragraph_notes": (code // 36) % 2 == 1,
        "bold": _BOLD_PHRASES[(code // 72) % len(_BOLD_PHRASES)],
    }


PHYSICIAN_STYLE = {"heading": "### ", "marker": "- ", "verbosity": 0, "paragraph_notes": True, "bold": "**Plan:**"}


def person_context(rng: random.Random, specialty: dict) -> dict:
    """Pick sex, age and the placeholder values used by the vignettes."""
    sex = rng.choice(specialty.get("sexes", ("male", "female")))
    low, high = specialty["ages"]
    age = rng.randint(low, high)
    if specialty.get("child"):
        person = rng.choice(CHILD_PEOPLE[sex])
        noun = CHILD_NOUNS[sex]
    else:
        person = rng.choice(LAY_PEOPLE[sex])
        noun = NOUNS[sex]
    context = {
        "age": age,
        "sex": sex,
        "person": person,
        "Person": person[0].upper() + person[1:],
        "noun": noun,
        "duration": rng.choice(specialty["durations"]),
    }
    context.update(PRONOUNS[sex])
    return context


def case_input(rng: random.Random, *, specialty: dict, second: dict | None, register: str, context: dict,
               multi_turn: bool) -> dict:
    """Return ``{"prompt": ...}`` or ``{"messages": [...]}`` for one case."""
    index = 0 if register == "lay" else 1
    vignette = rng.choice(specialty["vignettes"])[index].format(**context)
    extra = specialty["extra"][index].format(**context)
    comorbidity = second["comorbidity"][index].format(**context) if second else ""
    question = rng.choice(LAY_QUESTIONS if register == "lay" else PRO_QUESTIONS)
    if not multi_turn:
        parts = [vignette, comorbidity, extra if rng.random() < 0.5 else "", question]
        return {"prompt": " ".join(p for p in parts if p)}
    first = " ".join(p for p in (vignette, question) if p)
    clarify = rng.choice(CLARIFYING_QUESTIONS).format(**context)
    second_turn = " ".join(p for p in (extra, comorbidity) if p)
    return {
        "messages": [
            {"role": "user", "content": first},
            {"role": "assistant", "content": clarify},
            {"role": "user", "content": second_turn},
        ]
    }


def _list_block(items: list[str], marker: str) -> str:
    if marker == "1. ":
        return "\n".join(f"{n}. {item}" for n, item in enumerate(items, start=1))
    return "\n".join(marker + item for item in items)


def render_response(rng: random.Random, *, style: dict, register: str, topic: str,
                    action_sentences: list[str], note_sentences: list[str]) -> str:
    """Render a Markdown answer containing every given sentence verbatim.

    ``action_sentences`` (specialty items and any penalty advice) become the
    next-steps list; ``note_sentences`` (general items) become a second list
    or a paragraph. Filler sentences never coincide with rubric sentences.
    """
    heading = style["heading"]
    lay = register == "lay"
    title = rng.choice(_LAY_TITLES if lay else _PRO_TITLES)
    intro = rng.choice(_LAY_INTROS if lay else _PRO_INTROS).format(topic=topic)
    fillers = rng.sample(_FILLERS, style["verbosity"]) if style["verbosity"] else []
    blocks = [f"{heading}{title}", " ".join([intro, *fillers])]
    actions = action_sentences or ["Discuss these symptoms with a clinician."]
    blocks.append(f"{heading}{'Next steps' if lay else 'Plan'}")
    blocks.append(_list_block(actions, style["marker"]))
    if note_sentences:
        blocks.append(f"{heading}{'Good to know' if lay else 'Additional considerations'}")
        if style["paragraph_notes"]:
            blocks.append(" ".join(note_sentences))
        else:
            blocks.append(_list_block(note_sentences, style["marker"]))
    blocks.append(f"{style['bold']} {rng.choice(_CLOSINGS)}")
    return "\n\n".join(blocks) + "\n"


def render_reference_answer(*, topic: str, action_sentences: list[str], note_sentences: list[str]) -> str:
    """Render the ideal answer: every positive rubric sentence, no penalties."""
    blocks = [
        "## Reference answer",
        f"Key priorities for {topic}:",
        _list_block(action_sentences, "- "),
    ]
    if note_sentences:
        blocks += ["## Also cover", _list_block(note_sentences, "- ")]
    return "\n\n".join(blocks) + "\n"
