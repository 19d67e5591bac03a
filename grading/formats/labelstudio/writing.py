"""Writing a project as Label Studio tasks (``tasks.json``) with a generated labeling config
(``config.xml``), from the project's evalsite bundle export so the same labels and judgments go out
(final labels); byte-stable (sorted keys, fixed order).

Labels are annotations (one per annotator and role). Each judge's judgments are Label Studio
``predictions`` (what Label Studio 1.x imports with a task and shows as pre-annotations): one per
judge and sample, ``model_version`` = the judge's name, a Choices result per criterion it decided,
the sample in ``evalsite_sample`` (a key Label Studio ignores). A judgment without a choice to show
(an invalid output, or a bare value) is left out and counted; explanations, evidence and token
counts have no place in a Choices result and stay in evalsite's own bundle."""
import hashlib
import json
import tempfile
from pathlib import Path

from .controls import MODEL_VERSION, SAMPLE_KEY, TO_NAME, USER_PREFIX, USERNAME_KEY, config_xml, verdict_caption


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _prompt_text(case: dict) -> str:
    if "prompt" in case:
        return case["prompt"]
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in case["messages"])


def _user_numbers(usernames: set[str]) -> dict[str, int]:
    """A stable integer per user name: Label Studio's own id back for ``labelstudio-<id>``, the
    others numbered in name order after the highest of those."""
    numbers = {u: int(u[len(USER_PREFIX):]) for u in usernames
               if u.startswith(USER_PREFIX) and u[len(USER_PREFIX):].isdigit()}
    start = max(numbers.values(), default=0)
    for i, username in enumerate(sorted(usernames - numbers.keys()), start=1):
        numbers[username] = start + i
    return numbers


def _word(decision: dict) -> str | None:
    """The Choice a decision shows: its verdict's caption or its option; None for a bare value or
    an invalid output (no decision)."""
    if decision.get("verdict") is not None:
        return verdict_caption(decision["verdict"])
    if decision.get("option") is not None:
        return decision["option"]
    return None


def _result(criterion_id: str, word: str) -> dict:
    return {"from_name": criterion_id, "to_name": TO_NAME, "type": "choices", "value": {"choices": [word]}}


def _predictions(judgments: list[dict]) -> tuple[dict[str, list[dict]], dict[str, int]]:
    """Each response's predictions (one per judge and sample, in judge-name and sample order), and
    how many judgments had no choice to show."""
    grouped: dict[str, dict[tuple, list]] = {}
    left_out = {"invalid_judgments": 0, "value_judgments": 0}
    for judgment in judgments:
        word = _word(judgment)
        if word is None:
            left_out["value_judgments" if judgment.get("value") is not None else "invalid_judgments"] += 1
            continue
        key = (judgment["judge"], judgment.get("sample", 0))
        grouped.setdefault(judgment["response_id"], {}).setdefault(key, []).append(_result(judgment["criterion_id"], word))
    predictions = {response_id: [{MODEL_VERSION: judge, SAMPLE_KEY: sample, "result": results}
                                 for (judge, sample), results in sorted(by_judge.items())]
                   for response_id, by_judge in grouped.items()}
    return predictions, left_out


def _tasks(cases: list[dict], responses: list[dict], labels: list[dict],
           predictions: dict[str, list[dict]]) -> tuple[list[dict], int]:
    """The tasks, one per response in order, and how many labels had no choice to show (a value)."""
    cases_by_id = {case["case_id"]: case for case in cases}
    numbered = all(r["response_id"].isdigit() and str(int(r["response_id"])) == r["response_id"] for r in responses)
    users = _user_numbers({label["annotator"] for label in labels})
    by_response: dict[str, dict[tuple, list]] = {}
    values_left_out = 0
    for label in labels:
        word = _word(label)
        if word is None:
            values_left_out += 1
            continue
        key = (users[label["annotator"]], label["role"] == "checker", label["annotator"])
        annotation = by_response.setdefault(label["response_id"], {}).setdefault(key, [])
        annotation.append((label, word))
    tasks = []
    for position, response in enumerate(responses, start=1):
        case = cases_by_id[response["case_id"]]
        data = {"prompt": _prompt_text(case), "response": response["text"], "model": response["model"],
                "case_id": case["case_id"]}
        if case.get("reference_answer"):
            data["reference_answer"] = case["reference_answer"]
        if not numbered:
            data["response_id"] = response["response_id"]
        annotations = []
        for (number, checker, username), rows in sorted(by_response.get(response["response_id"], {}).items()):
            annotation = {"completed_by": number, USERNAME_KEY: username, "ground_truth": checker, "was_cancelled": False,
                          "result": [_result(label["criterion_id"], word) for label, word in rows]}
            seconds = [label["time_spent_seconds"] for label, _ in rows if label.get("time_spent_seconds") is not None]
            if seconds:
                annotation["lead_time"] = sum(seconds)
            annotations.append(annotation)
        tasks.append({"id": int(response["response_id"]) if numbered else position, "data": data,
                      "annotations": annotations, "predictions": predictions.get(response["response_id"], [])})
    return tasks, values_left_out


def write(*, project, out_dir: Path) -> dict:
    from grading.bundles import gold_export  # lazy: the bundle code brings pandas: loaded when a bundle is written

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="labelstudio-") as work:
        bundle = Path(work)
        gold_export(project=project, out_dir=bundle)  # the one export path: final labels, excluded cases left out
        spec = json.loads((bundle / "project.json").read_text(encoding="utf-8"))
        cases = _jsonl(bundle / "cases.jsonl")
        responses, labels = _jsonl(bundle / "responses.jsonl"), _jsonl(bundle / "labels.jsonl")
        judgments = _jsonl(bundle / "judgments.jsonl")
    criteria = [*spec["rubric"], *(criterion for case in cases for criterion in case.get("criteria") or [])]
    predictions, judgments_left_out = _predictions(judgments)
    tasks, values_left_out = _tasks(cases, responses, labels, predictions)
    texts = {"tasks.json": json.dumps(tasks, ensure_ascii=False, sort_keys=True, indent=2) + "\n",
             "config.xml": config_xml(criteria)}
    files = {}
    for name, text in texts.items():
        data = text.encode("utf-8")
        (out_dir / name).write_bytes(data)
        files[name] = hashlib.sha256(data).hexdigest()
    counts = {"tasks.json": len(tasks), "config.xml": len(criteria),
              "annotations": sum(len(task["annotations"]) for task in tasks),
              "results": sum(len(a["result"]) for task in tasks for a in task["annotations"]),
              "predictions": sum(len(task["predictions"]) for task in tasks),
              "prediction_results": sum(len(p["result"]) for task in tasks for p in task["predictions"]),
              "left_out": {"value_labels": values_left_out, **judgments_left_out}}
    return {"files": files, "counts": counts}
