"""A small, complete bundle for tests, and a writer for variations of it."""
import copy
import json
from pathlib import Path

PROJECT = {
    "slug": "mini",
    "name": "Mini study",
    "description": "Two cases, two models, two cohorts.",
    "blind": True,
    "coverage_k": 2,
    "rubric": [
        {"criterion_id": "tone", "text": "Tone fits the patient", "kind": "ordinal",
         "options": [{"label": "poor", "value": 0}, {"label": "ok", "value": 0.5}, {"label": "good", "value": 1},
                     {"label": "n/a", "value": 0, "na": True}]},
        {"criterion_id": "length", "text": "Length is right", "kind": "nominal",
         "options": [{"label": "short", "value": 0}, {"label": "right", "value": 1}, {"label": "long", "value": 0}]},
    ],
    "cohorts": [{"name": "group-1"}, {"name": "group-2"}],
    "judges": [{"name": "judge-a", "backend": "replay", "model": "gpt-x", "condition": "anonymized"}],
}

CASES = [
    {"case_id": "c1", "prompt": "Chest pain for two hours, what should I do?",
     "metadata": {"difficulty": "high", "register": "lay", "task_themes": ["emergency"], "specialties": ["cardiology"]},
     "criteria": [
         {"criterion_id": "c1-ecg", "text": "Recommends an ECG", "weight": 2},
         {"criterion_id": "c1-call", "text": "Advises calling emergency services", "weight": 3, "min_evidence": 1},
         {"criterion_id": "c1-abx", "text": "Recommends antibiotics", "weight": -2, "tags": ["penalty"]},
     ]},
    {"case_id": "c2", "messages": [{"role": "user", "content": "My child has a fever."}],
     "reference_answer": "Check temperature, fluids, see a doctor if > 3 days.",
     "metadata": {"difficulty": "low", "register": "lay", "task_themes": ["triage"], "specialties": ["pediatrics"]}},
]

RESPONSES = [
    {"response_id": "r1", "case_id": "c1", "model": "model-a", "text": "Call emergency services now. An ECG is needed."},
    {"response_id": "r2", "case_id": "c1", "model": "model-b", "text": "Rest and take antibiotics."},
    {"response_id": "r3", "case_id": "c2", "model": "model-a", "text": "Give fluids and check the temperature."},
    {"response_id": "r4", "case_id": "c1", "model": "physician", "text": "Call 911; ECG on arrival.", "author_kind": "human"},
]


def _labels() -> list[dict]:
    rows = []
    verdicts = {"r1": ("met", "met", "not_met"), "r2": ("not_met", "not_met", "met"), "r4": ("met", "met", "not_met")}
    for cohort, annotators in (("group-1", ("ann1", "ann2")), ("group-2", ("ann3",))):
        for response_id, triple in verdicts.items():
            for criterion_id, verdict in zip(("c1-ecg", "c1-call", "c1-abx"), triple):
                for annotator in annotators:
                    flipped = verdict
                    if cohort == "group-2" and response_id == "r2" and criterion_id == "c1-ecg":
                        flipped = "met"
                    rows.append({"response_id": response_id, "criterion_id": criterion_id, "cohort": cohort,
                                 "annotator": annotator, "role": "annotator", "verdict": flipped})
        for annotator in annotators:
            rows.append({"response_id": "r3", "criterion_id": "tone", "cohort": cohort, "annotator": annotator,
                         "option": "good", "rationale": "Warm and clear.", "evidence": ["Give fluids"]})
            rows.append({"response_id": "r3", "criterion_id": "length", "cohort": cohort, "annotator": annotator,
                         "option": "right"})
    rows.append({"response_id": "r1", "criterion_id": "c1-abx", "cohort": "group-1", "annotator": "chk1",
                 "role": "checker", "verdict": "not_met"})
    return rows


JUDGMENTS = [
    {"response_id": "r1", "criterion_id": "c1-ecg", "judge": "judge-a", "judge_model": "gpt-x", "condition": "anonymized",
     "sample": 0, "verdict": "met", "explanation": "Mentions ECG.", "evidence": ["An ECG is needed."], "raw": "{}"},
    {"response_id": "r2", "criterion_id": "c1-ecg", "judge": "judge-a", "judge_model": "gpt-x", "condition": "anonymized",
     "sample": 0, "verdict": None, "explanation": "", "evidence": [], "raw": "garbage"},
    {"response_id": "r3", "criterion_id": "tone", "judge": "judge-a", "judge_model": "gpt-x", "condition": "anonymized",
     "sample": 0, "value": 0.75, "explanation": "Mostly fine.", "evidence": [], "raw": "{}"},
]


def bundle_parts() -> dict:
    return copy.deepcopy({"project": PROJECT, "cases": CASES, "responses": RESPONSES, "labels": _labels(),
                          "judgments": JUDGMENTS})


def write_bundle(directory: Path, parts: dict | None = None, *, raw: dict[str, str] | None = None) -> Path:
    """Write a bundle; ``raw`` replaces a file's text outright (for malformed-input tests)."""
    parts = parts or bundle_parts()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "project.json").write_text(json.dumps(parts["project"]), encoding="utf-8")
    for name in ("cases", "responses", "labels", "judgments"):
        lines = "".join(json.dumps(obj) + "\n" for obj in parts[name])
        (directory / f"{name}.jsonl").write_text(lines, encoding="utf-8")
    for name, text in (raw or {}).items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory
