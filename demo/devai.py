"""Convert the DevAI benchmark judgments (Agent-as-a-Judge) into an evalsite bundle.

DevAI has 55 AI-development tasks, each with hierarchical requirements, and
records for three developer agents (MetaGPT, GPT-Pilot, OpenHands) whether a
human panel and the gray-box Agent-as-a-Judge found each requirement
satisfied. The vendored copy lives in ``demo/vendor/devai/`` (MIT License,
Copyright (c) 2024 metauto.ai; see its NOTICE.md and SHA256SUMS).
:func:`convert_devai` writes the bundle ``devai``:

- ``cases.jsonl``: one case per task, ``prompt`` = the task ``query`` from
  ``benchmark/devai/instances``; metadata ``task_themes`` = the task ``tags``,
  ``category`` (deep learning / machine learning / reinforcement learning /
  other, from the task name), the task flags, preferences, hint/resource and
  the generic constraints the agents were given;
- case-specific binary criteria, one per requirement, ``criterion_id``
  ``devai-NN-R<requirement_id>``, text = ``criteria``, tags = the requirement
  category and ``requires:<criterion_id>`` per prerequisite (also kept as
  ``metadata.prerequisites``). The requirements are read from the judgment
  files, not the instance files, because they are what was judged: task 52
  has five requirements there and four in the current instance file, and a
  few texts differ in punctuation. The first agent's human file (MetaGPT) is
  the reference; a missing category is filled from another judgment file
  (else "Other") and the typo "Performence Metrics" is corrected;
- ``responses.jsonl``: three responses per case, one per developer agent.
  **The dataset contains no response text** (the agents' workspaces are not
  part of the release), so each response text is a short placeholder saying
  which agent produced the workspace; grade from the recorded decisions;
- ``labels.jsonl``: ``human_as_a_judge`` ``satisfied`` as labels of cohort
  ``human-panel`` by annotator ``devai-panel`` (one per judged requirement,
  null as cannot_assess), so label count = human judgment entries (1,098);
- ``judgments.jsonl``: ``agent_as_a_judge/gray_box`` ``satisfied`` as
  judgments of the replay judge ``agent-as-a-judge``; a missing or non-boolean
  value becomes an invalid judgment (``verdict`` null, the entry as ``raw``).

Preferences are all unjudged (null) in the release and are kept only as
metadata. Run ``python -m demo.devai --out DIR``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from demo.bundle_io import write_bundle

VENDORED_SOURCE = Path(__file__).resolve().parent / "vendor" / "devai"
SLUG = "devai"
AGENTS = ("MetaGPT", "GPT-Pilot", "OpenHands")
COHORT = "human-panel"
ANNOTATOR = "devai-panel"
JUDGE = {
    "name": "agent-as-a-judge",
    "backend": "replay",
    # The release does not name the judge's backbone LLM per file.
    "model": "agent-as-a-judge-gray-box",
    "condition": "anonymized",
    "temperature": 0.0,
    "samples": 1,
}
_CATEGORY_FIXES = {"Performence Metrics": "Performance Metrics"}
_DOMAINS = {"DL": "deep learning", "ML": "machine learning", "RL": "reinforcement learning"}


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _category(requirement_id: int, files: list[dict]) -> str:
    for data in files:
        for requirement in data["requirements"]:
            if requirement["requirement_id"] == requirement_id and requirement.get("category"):
                return _CATEGORY_FIXES.get(requirement["category"], requirement["category"])
    return "Other"


def _constraints(constraints: dict, task: dict) -> list[str]:
    texts = [constraints["generic"]]
    for flag in ("is_training_needed", "is_kaggle_api_needed"):
        if task.get(flag) and flag in constraints:
            texts.append(constraints[flag])
    return texts


def _verdict(value) -> str | None:
    if value is True:
        return "met"
    if value is False:
        return "not_met"
    return None


def convert_devai(out_dir, *, source: str | Path = VENDORED_SOURCE) -> dict:
    """Write the ``devai`` bundle to ``out_dir`` and return its row counts."""
    root = Path(source) / "benchmark"
    constraints = _read(root / "devai" / "constraints.json")
    task_files = sorted((root / "devai" / "instances").glob("*.json"))
    if not task_files:
        raise ValueError(f"no DevAI instances under {root / 'devai' / 'instances'}")
    cases, responses, labels, judgments = [], [], [], []
    for task_file in task_files:
        task = _read(task_file)
        number = task_file.name.split("_", 1)[0]
        case_id = f"{SLUG}-{number}"
        human = {agent: _read(root / "judgment" / agent / "human_as_a_judge" / task_file.name) for agent in AGENTS}
        gray = {agent: _read(root / "judgment" / agent / "agent_as_a_judge" / "gray_box" / task_file.name)
                for agent in AGENTS}
        reference = human[AGENTS[0]]["requirements"]
        reference_ids = [r["requirement_id"] for r in reference]
        for agent in AGENTS:
            for kind, data in (("human", human[agent]), ("gray-box", gray[agent])):
                if [r["requirement_id"] for r in data["requirements"]] != reference_ids:
                    raise ValueError(f"{task_file.name}: {agent} {kind} judged other requirements")
        all_files = [human[a] for a in AGENTS] + [gray[a] for a in AGENTS] + [task]

        def cid(requirement_id: int) -> str:
            return f"{case_id}-R{requirement_id}"

        criteria, prerequisites = [], {}
        for requirement in reference:
            rid = requirement["requirement_id"]
            needs = [cid(p) for p in requirement.get("prerequisites") or []]
            prerequisites[cid(rid)] = needs
            criteria.append({
                "criterion_id": cid(rid),
                "text": requirement["criteria"],
                "kind": "binary",
                "weight": 1.0,
                "options": [],
                "tags": [_category(rid, all_files)] + [f"requires:{n}" for n in needs],
                "min_evidence": 0,
            })
        name = task["name"]
        suffix = name.rsplit("_", 1)[-1]
        metadata = {
            "task_themes": list(task.get("tags") or []),
            "specialties": [],
            "category": _DOMAINS.get(suffix, "other"),
            "task_name": name,
            "is_training_needed": bool(task.get("is_training_needed")),
            "is_kaggle_api_needed": bool(task.get("is_kaggle_api_needed")),
            "is_web_navigation_needed": bool(task.get("is_web_navigation_needed")),
            "preferences": [p["criteria"] for p in task.get("preferences") or []],
            "constraints": _constraints(constraints, task),
            "prerequisites": prerequisites,
        }
        for key in ("hint", "resource"):
            if task.get(key):
                metadata[key] = task[key]
        cases.append({"case_id": case_id, "prompt": task["query"], "metadata": metadata, "criteria": criteria})

        for agent in AGENTS:
            response_id = f"{case_id}-{agent.lower()}"
            responses.append({
                "response_id": response_id,
                "case_id": case_id,
                "model": agent,
                "author_kind": "model",
                "text": (
                    f"Workspace produced by {agent} for DevAI task {name}.\n\n"
                    "The DevAI release records how this workspace was judged but does not include the "
                    "workspace itself, so this text is a placeholder, not the agent's output."
                ),
            })
            for requirement in human[agent]["requirements"]:
                verdict = _verdict(requirement.get("satisfied")) or "cannot_assess"
                labels.append({"response_id": response_id, "criterion_id": cid(requirement["requirement_id"]),
                               "cohort": COHORT, "annotator": ANNOTATOR, "role": "annotator",
                               "verdict": verdict})
            for requirement in gray[agent]["requirements"]:
                verdict = _verdict(requirement.get("satisfied"))
                raw = {"requirement_id": requirement["requirement_id"]}
                if "satisfied" in requirement:
                    raw["satisfied"] = requirement["satisfied"]
                judgments.append({
                    "response_id": response_id,
                    "criterion_id": cid(requirement["requirement_id"]),
                    "judge": JUDGE["name"],
                    "judge_model": JUDGE["model"],
                    "condition": JUDGE["condition"],
                    "sample": 0,
                    "verdict": verdict,
                    "explanation": "" if verdict is None else "Gray-box Agent-as-a-Judge decision from the DevAI release.",
                    "evidence": [],
                    "raw": json.dumps(raw, sort_keys=True),
                })
    project = {
        "slug": SLUG,
        "name": "DevAI (Agent-as-a-Judge)",
        "description": (
            f"{len(cases)} AI-development tasks with {sum(len(c['criteria']) for c in cases)} judged requirements; "
            f"{len(AGENTS)} developer agents judged by a human "
            "panel and by the gray-box Agent-as-a-Judge (Zhuge et al., ICML 2025). Response texts are "
            "placeholders: the release holds the judgments, not the workspaces. MIT License, "
            "Copyright (c) 2024 metauto.ai."
        ),
        "blind": False,
        # k may not exceed the smallest rubric (3 requirements) or CACS@k is undefined there.
        "coverage_k": 3,
        "rubric": [],
        "cohorts": [{"name": COHORT}],
        "judges": [dict(JUDGE)],
    }
    return write_bundle(out_dir, project=project, cases=cases, responses=responses, labels=labels,
                        judgments=judgments)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo.devai", description="Convert DevAI judgments to a bundle.")
    parser.add_argument("--out", required=True, help="bundle directory to write")
    parser.add_argument("--source", default=str(VENDORED_SOURCE), help="DevAI root (default: vendored copy)")
    args = parser.parse_args(argv)
    print(json.dumps(convert_devai(args.out, source=args.source), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
