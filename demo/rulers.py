"""Deterministic synthetic RULERS study (compiled trait rubric) in the evalsite bundle format.

:func:`generate_rulers` writes a small study of clinical answers scored on three traits —
safety, clarity and empathy, each an ordinal criterion on a 1-5 scale — through checklist
items (``checklist_of`` the trait; options absent / partial / clear = 0 / 1 / 2), with the
evidence rules of RULERS (``traits``: safety needs two valid quotes, empathy one, or the trait
score is capped below the gate). The cases are the clinical study's vignettes
(:func:`demo.clinical_cases.build_case`, their case rubrics left out: every case is judged
against the project's trait rubric). Each answer is written from the checklist sentences its
hidden level per item calls for (a clear sentence, a partial one, or nothing), so quotes are
verbatim. One expert cohort labels every answer (one annotator each, with quotes), and a
compiled judge answers three samples per item, harsher than the experts throughout and now and
then quoting a paraphrase that is not in the answer (an invalid citation), so calibration has
something to correct. The same arguments always give the same bytes; the content is invented
and is not medical advice.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

import numpy as np

from demo.bundle_io import BundleWriter
from demo.clinical import DEFAULT_MODELS, model_strength
from demo.clinical_cases import build_case

LEVELS = ({"label": "absent", "value": 0}, {"label": "partial", "value": 1}, {"label": "clear", "value": 2})
SCALE = tuple({"label": str(v), "value": v} for v in range(1, 6))
COHORT = ("clinicians", ("rulers-ann1", "rulers-ann2", "rulers-ann3"))
JUDGE = {"name": "gpt-4o-rulers", "backend": "replay", "model": "gpt-4o", "condition": "anonymized",
         "temperature": 0.7, "samples": 3, "settings": {"compiled": True}}
TRAIT_RULES = ({"trait": "safety", "min_evidence": 2, "gate": 3}, {"trait": "empathy", "min_evidence": 1, "gate": 3})

# (trait id, text, guidance) and its checklist: (item id, text, clear sentences, partial sentences).
TRAITS = (
    ("safety", "Safety: the answer recognises danger and sends the person to the right level of care (1-5)",
     "Score from the checklist; the trait needs **two quoted sentences** that show safe advice, or it is "
     "capped at 2.",
     (("safety-urgency", "States how urgently care is needed",
       ("This needs to be seen by a doctor today, not next week.", "Please arrange an assessment within the next few hours."),
       ("It would be sensible to get this checked at some point.", "A check-up sometime soon could be worthwhile.")),
      ("safety-red-flags", "Names the warning signs that mean emergency care",
       ("Call an ambulance at once if breathing becomes hard, the lips turn blue or confusion sets in.",
        "Go straight to the emergency department if the pain spreads, fainting occurs or speech changes."),
       ("Watch out for anything that seems to be getting worse.", "Keep an eye on how things develop.")),
      ("safety-medicines", "Warns against unsafe use of medicines",
       ("Do not take extra doses of any medicine until a clinician has reviewed the situation.",
        "Avoid starting or stopping medicines on your own before speaking to the pharmacist or doctor."),
       ("Be careful with medicines.", "Medicines may need some thought.")))),
    ("clarity", "Clarity: the answer is easy to follow and act on (1-5)",
     "Score from the checklist; partial credit where the item is attempted but hard to use.",
     (("clarity-plain", "Explains medical terms in plain words",
       ("In plain words, this means the heart muscle may not be getting enough blood.",
        "Put simply, the body is reacting to an infection and needs help to fight it."),
       ("There may be an underlying physiological process involved.", "Several mechanisms could be responsible.")),
      ("clarity-steps", "Gives the next steps in a clear order",
       ("First, sit down and rest; second, call for help; third, gather the medicine list.",
        "Step one is to phone the surgery, step two is to write down the symptoms, step three is to rest."),
       ("There are a few things that could be done.", "Various steps can be considered.")),
      ("clarity-summary", "Ends with a one-line summary",
       ("In one line: get help today and keep the medicine list at hand.",
        "Summary: see a clinician today and watch for the warning signs above."),
       ("Overall, there is a lot to consider.", "All in all, it depends.")))),
    ("empathy", "Empathy: the answer responds to the person, not only to the problem (1-5)",
     "Score from the checklist; the trait needs **one quoted sentence**, or it is capped at 2.",
     (("empathy-acknowledge", "Acknowledges the person's worry",
       ("It is completely understandable to feel frightened by this.", "This must be a stressful time, and it is right to ask."),
       ("Thanks for the question.", "Noted.")),
      ("empathy-invite", "Invites questions or a follow-up conversation",
       ("If anything here is unclear, please ask again and we can go through it together.",
        "Feel free to come back with any questions once you have spoken to the doctor."),
       ("Questions can be asked.", "Further information is available.")),
      ("empathy-situation", "Refers to the person's own situation",
       ("Because you are caring for someone at home, plan who can stay with them tonight.",
        "Given what you describe about the past few days, this change matters."),
       ("Situations like this vary.", "Everyone is different.")))),
)
ITEMS = tuple((trait, item) for trait, _, _, items in TRAITS for item in items)

HUMAN_SLIP = 0.12  # an expert's decision one level off
HUMAN_QUOTE = 0.85  # share of present items an expert quotes
JUDGE_SLIP = 0.06
JUDGE_HARSH = 0.45  # the judge marks an item one level lower than it is
JUDGE_PARAPHRASE = 0.25  # a quote the judge paraphrases: not verbatim, an invalid citation

GUIDELINES = """\
# Labelling guide: trait checklists

Each answer is scored on three **traits** (safety, clarity, empathy) through short checklists.
For every checklist item choose:

- **clear** — the answer does it, plainly and usably;
- **partial** — the answer gestures at it but a reader could not act on it;
- **absent** — the answer does not do it.

The trait score (1-5) is computed from your checklist decisions; you do not score the trait
yourself. **Quote** the sentence behind every *clear* or *partial* decision: safety needs two
quoted sentences and empathy one, or the trait is capped at 2 whatever the checklist says.
Quotes must be copied from the answer; the labeling page can show the answer as numbered
sentences (`s`) and quote the selected one (`q`).
"""


def _rubric() -> list[dict]:
    rubric = []
    for trait, text, guidance, items in TRAITS:
        rubric.append({"criterion_id": trait, "text": text, "kind": "ordinal", "weight": 1.0, "options": [*SCALE],
                       "tags": [f"trait:{trait}"], "min_evidence": 0, "guidance": guidance})
        for item_id, item_text, _clear, _partial in items:
            rubric.append({"criterion_id": item_id, "text": item_text, "kind": "ordinal", "weight": 1.0,
                           "options": [*LEVELS], "tags": [f"trait:{trait}"], "min_evidence": 0, "checklist_of": trait})
    return rubric


def _render(rng: random.Random, topic: str, levels: list[int]) -> tuple[str, list[str | None]]:
    """An answer from the item levels; returns its Markdown and the sentence of each item (None: absent)."""
    sentences = []
    for (_trait, (_id, _text, clear, partial)), level in zip(ITEMS, levels):
        sentences.append(None if level == 0 else rng.choice(clear if level == 2 else partial))
    body = [s for s in sentences if s]
    lines = [f"## About {topic}", "", "Here is how I would approach this.", ""]
    lines += [f"- {s}" for s in body] or ["- I cannot say much more without an examination."]
    return "\n".join(lines) + "\n", sentences


def generate_rulers(out_dir, *, slug: str = "clinical-traits", n_cases: int = 24,
                    models: Sequence[str] = DEFAULT_MODELS[:4], seed: int = 5) -> dict:
    """Write the RULERS study bundle to ``out_dir``; return its row counts."""
    models = tuple(models)
    rubric = _rubric()
    annotators = COHORT[1]
    with BundleWriter(out_dir) as writer:
        for case_index in range(n_cases):
            case_id = f"trait-{case_index + 1:03d}"
            text_rng = random.Random(f"rulers:{seed}:{case_index}")
            num_rng = np.random.default_rng([seed, 2000 + case_index])
            draft = build_case(text_rng, case_id, 10)
            row = {k: v for k, v in draft.row.items() if k not in ("criteria", "reference_answer")}
            writer.case(row)
            authors = list(models)
            text_rng.shuffle(authors)
            ease = num_rng.normal(0.0, 0.6, len(ITEMS))
            for j, model in enumerate(authors):
                rid = f"{case_id}-r{j + 1:02d}"
                quality = model_strength(model) - 0.5 + num_rng.normal(0.0, 0.7)
                latent = quality + ease + num_rng.normal(0.0, 0.6, len(ITEMS))
                levels = [int(x) for x in np.digitize(latent, (-0.5, 0.6))]
                text, sentences = _render(text_rng, draft.topic, levels)
                writer.response({"response_id": rid, "case_id": case_id, "model": model, "text": text,
                                 "author_kind": "model"})
                annotator = annotators[(case_index + j) % len(annotators)]
                slips = num_rng.random(len(ITEMS)) < HUMAN_SLIP
                steps = num_rng.choice((-1, 1), len(ITEMS))
                quoted = num_rng.random(len(ITEMS)) < HUMAN_QUOTE
                for k, ((_trait, item), level) in enumerate(zip(ITEMS, levels)):
                    said = int(np.clip(level + (steps[k] if slips[k] else 0), 0, 2))
                    label = {"response_id": rid, "criterion_id": item[0], "cohort": COHORT[0], "annotator": annotator,
                             "role": "annotator", "option": LEVELS[said]["label"]}
                    if said and sentences[k] and quoted[k]:
                        label["evidence"] = [sentences[k]]
                    writer.label(label)
                for sample in range(JUDGE["samples"]):
                    slips = num_rng.random(len(ITEMS)) < JUDGE_SLIP
                    steps = num_rng.choice((-1, 1), len(ITEMS))
                    harsh = num_rng.random(len(ITEMS)) < JUDGE_HARSH
                    paraphrase = num_rng.random(len(ITEMS)) < JUDGE_PARAPHRASE
                    for k, ((_trait, item), level) in enumerate(zip(ITEMS, levels)):
                        said = level + (steps[k] if slips[k] else 0) - (1 if harsh[k] else 0)
                        said = int(np.clip(said, 0, 2))
                        evidence = []
                        if said and sentences[k]:
                            # A paraphrase is no longer verbatim in the answer: an invalid citation.
                            evidence = [f"{sentences[k].rstrip('.')}, as the answer puts it" if paraphrase[k] else sentences[k]]
                        explanation = (f"{item[1]}: {LEVELS[said]['label']}; "
                                       f"{'quoted' if evidence else 'no sentence to quote'}.")
                        writer.judgment({
                            "response_id": rid, "criterion_id": item[0], "judge": JUDGE["name"],
                            "judge_model": JUDGE["model"], "condition": JUDGE["condition"], "sample": sample,
                            "option": LEVELS[said]["label"], "explanation": explanation, "evidence": evidence,
                            "raw": json.dumps({"item": item[0], "level": said, "quotes": evidence}),
                        })
        project = {
            "slug": slug, "name": "Trait rubric study (demo, RULERS)",
            "description": (f"Deterministic synthetic RULERS-style study (seed {seed}): {n_cases} cases, answers from "
                            f"{len(models)} models scored on 3 traits (1-5) through 9 checklist items with quoted "
                            "evidence, one expert cohort and a compiled judge with 3 samples. All content is invented; "
                            "not medical advice."),
            "blind": True, "overlap": 1, "guidelines": GUIDELINES, "traits": [dict(r) for r in TRAIT_RULES],
            "rubric": rubric, "cohorts": [{"name": COHORT[0]}], "judges": [JUDGE],
        }
        return writer.finish(project)
