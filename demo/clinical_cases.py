"""Case drafting for the synthetic clinical study (:mod:`demo.clinical`).

Picks a case's specialties, register, difficulty, themes and patient, renders
its prompt or chat through :mod:`demo.clinical_text`, and selects its rubric
from :mod:`demo.clinical_templates`: specialty items (a second specialty adds at
most four), general items and 3-5 penalty items per 30 criteria. The result is a
:class:`CaseDraft` holding the case row plus what the response, label and
judgment writers need (criterion ids, the quotable sentence of each item, which
items are positive). Deterministic given the ``random.Random`` passed in.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from demo.clinical_templates import GENERIC_CRITERIA, GENERIC_PENALTIES, SETTINGS, SPECIALTIES, TASK_THEMES
from demo.clinical_text import case_input, person_context, render_reference_answer

SPECIALTY_NAMES = tuple(SPECIALTIES)
# Smallest pool a case can draw from: one specialty's positive items, every
# general item and the general plus that specialty's penalty items.
MAX_CRITERIA = len(GENERIC_CRITERIA) + len(GENERIC_PENALTIES) + min(
    len(s["criteria"]) for s in SPECIALTIES.values()
)


def _criterion(criterion_id: str, template: tuple, tag: str, min_evidence: int) -> dict:
    text, _sentence, weight, axis = template
    return {
        "criterion_id": criterion_id,
        "text": text,
        "kind": "binary",
        "weight": float(weight),
        "options": [],
        "tags": [axis, tag],
        "min_evidence": min_evidence,
    }


def select_rubric(rng: random.Random, primary: str, second: str | None, n_criteria: int) -> list[tuple]:
    """Choose ``n_criteria`` items: specialty items, general items, then penalties.

    Returns ``(template, tag)`` pairs in rubric order.
    """
    spec_pos, spec_pen = [], []
    for name, limit in ((primary, None), (second, 4)):
        if name is None:
            continue
        items = list(SPECIALTIES[name]["criteria"])
        rng.shuffle(items)
        pos = [(t, f"specialty:{name}") for t in items if t[2] > 0][:limit]
        pen = [(t, f"specialty:{name}") for t in items if t[2] < 0]
        spec_pos += pos
        spec_pen += pen
    generic = [(t, "general") for t in GENERIC_CRITERIA]
    rng.shuffle(generic)
    penalties = spec_pen + [(t, "general") for t in GENERIC_PENALTIES]
    rng.shuffle(penalties)

    n_pen = min(len(penalties), max(1, round(n_criteria * rng.randint(3, 5) / 30)))
    n_spec = min(len(spec_pos), round(n_criteria * 0.45))
    n_generic = n_criteria - n_pen - n_spec
    # Large rubrics: once the general items run out, take more specialty
    # items, then more penalties.
    for pool_size, attr in ((len(spec_pos), "spec"), (len(penalties), "pen")):
        if n_generic > len(generic):
            have = n_spec if attr == "spec" else n_pen
            extra = min(n_generic - len(generic), pool_size - have)
            n_generic -= extra
            if attr == "spec":
                n_spec += extra
            else:
                n_pen += extra
    if n_generic > len(generic):
        raise ValueError(f"n_criteria={n_criteria} is more than the templates can fill")
    chosen = spec_pos[:n_spec] + generic[:n_generic] + penalties[:n_pen]
    return [(template, tag) for template, tag in chosen]


@dataclass
class CaseDraft:
    """What the response, label and judgment writers need to know about a case."""

    row: dict
    topic: str
    register: str
    difficulty: str
    criterion_ids: list[str]
    sentences: list[str]
    positive: np.ndarray
    is_action: list[bool]


def build_case(text_rng: random.Random, case_id: str, n_criteria: int) -> CaseDraft:
    """Draw one case (vignette, metadata, rubric) from the templates."""
    primary = SPECIALTY_NAMES[text_rng.randrange(len(SPECIALTY_NAMES))]
    spec = SPECIALTIES[primary]
    second_name = text_rng.choice(spec["partners"]) if text_rng.random() < 0.4 else None
    second = SPECIALTIES[second_name] if second_name else None
    register = "lay" if text_rng.random() < 0.5 else "professional"
    difficulty = text_rng.choices(("low", "medium", "high"), weights=(3, 5, 2))[0]
    themes = list(spec["themes"])
    text_rng.shuffle(themes)
    themes = themes[: text_rng.randint(1, min(3, len(themes)))]
    if len(themes) < 3 and text_rng.random() < 0.2:
        extra_theme = text_rng.choice(TASK_THEMES)
        if extra_theme not in themes:
            themes.append(extra_theme)
    context = person_context(text_rng, spec)
    multi_turn = text_rng.random() < 0.25
    row = {"case_id": case_id}
    row.update(case_input(text_rng, specialty=spec, second=second, register=register,
                          context=context, multi_turn=multi_turn))
    rubric = select_rubric(text_rng, primary, second_name, n_criteria)
    criterion_ids = [f"{case_id}-c{j + 1:02d}" for j in range(len(rubric))]
    evidence_slots = 0
    criteria = []
    for cid, (template, tag) in zip(criterion_ids, rubric):
        needs_evidence = template[2] == 3 and tag != "general" and evidence_slots < 3
        evidence_slots += needs_evidence
        criteria.append(_criterion(cid, template, tag, 1 if needs_evidence else 0))
    row["criteria"] = criteria
    sentences = [template[1] for template, _ in rubric]
    positive = np.array([template[2] > 0 for template, _ in rubric])
    # Specialty items and penalty advice go in the "next steps" list.
    is_action = [tag != "general" or template[2] < 0 for template, tag in rubric]
    if text_rng.random() < 0.3:
        row["reference_answer"] = render_reference_answer(
            topic=spec["topic"],
            action_sentences=[s for s, a, p in zip(sentences, is_action, positive) if a and p],
            note_sentences=[s for s, a, p in zip(sentences, is_action, positive) if not a and p],
        )
    row["metadata"] = {
        "task_themes": themes,
        "specialties": [primary] + ([second_name] if second_name else []),
        "difficulty": difficulty,
        "register": register,
        "setting": text_rng.choice(SETTINGS),
        "patient_age": context["age"],
        "patient_sex": context["sex"],
    }
    return CaseDraft(row=row, topic=spec["topic"], register=register, difficulty=difficulty,
                      criterion_ids=criterion_ids, sentences=sentences, positive=positive, is_action=is_action)
