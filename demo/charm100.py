"""Convert the CHARM-100 dataset (Autorubric) into an evalsite bundle.

CHARM-100 holds 100 synthetic single-turn chatbot conversations graded on six
project-wide criteria of mixed kinds (ordinal, nominal, binary, one ordinal
criterion with a not-applicable option). The vendored copy lives in
``demo/vendor/charm100/`` with its NOTICE and MIT licence (Copyright (c) 2025
Delip Rao). :func:`convert_charm100` writes the bundle ``charm-100``:

- ``project.json``: the six criteria as the project rubric (``name`` becomes
  ``criterion_id``, ``requirement`` the text, ``scale_type`` the kind; a
  criterion without options is binary; option labels, values and ``na`` flags
  are kept as given, ``na`` defaulting to false);
- ``cases.jsonl``: one case per item, ``messages`` = the system and user turns
  of ``items[].submission`` (a JSON-encoded message list);
- ``responses.jsonl``: the assistant turn, model ``charm-100-assistant``;
- ``labels.jsonl``: ``ground_truth`` as one label per (item, criterion) in
  cohort ``ground-truth`` by annotator ``charm100-reference``: the option label
  for ordinal / nominal criteria, ``MET`` / ``UNMET`` as met / not_met for the
  binary one. The item's ``description`` (the dataset author's note on why the
  answer is good or bad) becomes the label rationale of the first criterion
  only, so it is never shown next to the case. A ``null`` ground truth entry is
  skipped (no label: the reference made no decision); ``"N/A"``, ``"NA"`` or
  ``"CANNOT_ASSESS"`` for the binary criterion become ``cannot_assess``. The
  shipped file has no null entries, so the bundle has 600 labels; the N/A
  option of ``specificity`` (9 items) is an ordinary option label whose option
  carries ``"na": true``.

Run ``python -m demo.charm100 --out DIR``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from demo.bundle_io import write_bundle

VENDORED_SOURCE = Path(__file__).resolve().parent / "vendor" / "charm100" / "charm100.json"
SLUG = "charm-100"
COHORT = "ground-truth"
ANNOTATOR = "charm100-reference"
MODEL = "charm-100-assistant"

_BINARY_VERDICTS = {"MET": "met", "UNMET": "not_met", "N/A": "cannot_assess", "NA": "cannot_assess",
                    "CANNOT_ASSESS": "cannot_assess"}


def _criterion(source: dict) -> dict:
    options = source.get("options") or []
    kind = source.get("scale_type") or ("binary" if not options else "ordinal")
    return {
        "criterion_id": source["name"],
        "text": source["requirement"],
        "kind": kind,
        "weight": float(source.get("weight", 1.0)),
        "options": [
            {"label": option["label"], "value": float(option["value"]), "na": bool(option.get("na", False))}
            for option in options
        ],
        "tags": ["charm-100"],
        "min_evidence": 0,
    }


def _label_decision(criterion: dict, value: str, *, item_number: int) -> dict:
    """Return ``{"verdict": ...}`` or ``{"option": ...}`` for one ground-truth entry."""
    if criterion["kind"] == "binary":
        verdict = _BINARY_VERDICTS.get(str(value).strip().upper())
        if verdict is None:
            raise ValueError(f"item {item_number}: {criterion['criterion_id']} has unknown verdict {value!r}")
        return {"verdict": verdict}
    labels = [option["label"] for option in criterion["options"]]
    if value not in labels:
        raise ValueError(f"item {item_number}: {criterion['criterion_id']} has unknown option {value!r}")
    return {"option": value}


def load_charm100(source: str | Path = VENDORED_SOURCE) -> dict:
    """Parse the CHARM-100 JSON file."""
    return json.loads(Path(source).read_text(encoding="utf-8"))


def convert_charm100(out_dir, *, source: str | Path = VENDORED_SOURCE) -> dict:
    """Write the ``charm-100`` bundle to ``out_dir`` and return its row counts."""
    data = load_charm100(source)
    rubric = [_criterion(c) for c in data["rubric"]]
    cases, responses, labels = [], [], []
    for number, item in enumerate(data["items"], start=1):
        case_id = f"charm-{number:03d}"
        messages = json.loads(item["submission"])
        prompt_turns = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "assistant"]
        answers = [m["content"] for m in messages if m["role"] == "assistant"]
        if len(answers) != 1 or not prompt_turns:
            raise ValueError(f"item {number}: expected system/user turns and exactly one assistant turn")
        cases.append({
            "case_id": case_id,
            "messages": prompt_turns,
            "metadata": {"task_themes": [], "specialties": [], "source": SLUG, "item_index": number - 1},
        })
        response_id = f"{case_id}-assistant"
        responses.append({"response_id": response_id, "case_id": case_id, "model": MODEL,
                          "text": answers[0], "author_kind": "model"})
        truth = item["ground_truth"]
        if len(truth) != len(rubric):
            raise ValueError(f"item {number}: {len(truth)} ground-truth entries for {len(rubric)} criteria")
        rationale_given = False
        for criterion, value in zip(rubric, truth):
            if value is None:
                continue
            label = {"response_id": response_id, "criterion_id": criterion["criterion_id"], "cohort": COHORT,
                     "annotator": ANNOTATOR, "role": "annotator"}
            label.update(_label_decision(criterion, value, item_number=number))
            if not rationale_given and item.get("description"):
                label["rationale"] = item["description"]
                rationale_given = True
            labels.append(label)
    project = {
        "slug": SLUG,
        "name": "CHARM-100",
        "description": (
            f"{data.get('prompt', '')} 100 synthetic chatbot conversations with reference labels on six "
            "mixed-kind criteria, from the Autorubric project (Rao & Callison-Burch). MIT License, "
            "Copyright (c) 2025 Delip Rao."
        ).strip(),
        "blind": False,
        # One binary criterion: coverage figures are over factual_accuracy alone.
        "coverage_k": 1,
        "rubric": rubric,
        "cohorts": [{"name": COHORT}],
        "judges": [],
    }
    return write_bundle(out_dir, project=project, cases=cases, responses=responses, labels=labels, judgments=[])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo.charm100", description="Convert CHARM-100 to a bundle.")
    parser.add_argument("--out", required=True, help="bundle directory to write")
    parser.add_argument("--source", default=str(VENDORED_SOURCE), help="charm100.json (default: vendored copy)")
    args = parser.parse_args(argv)
    print(json.dumps(convert_charm100(args.out, source=args.source), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
