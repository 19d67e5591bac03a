"""The "points" project of the bias tests, built once (``test_bias_native``, ``test_bias_items``, the
bias page's browser test): judges scoring a 0-10 ordinal criterion ``quality`` twice (two samples) on
two cases of three target models m1-m3, and five experts of one cohort scoring the same responses.
Each judge gives both responses of a target the same points in a sample (``samples``: judge ->
model -> the two samples' points). The tests state the hand calculations their numbers come from."""
import io
import json

from django.core.management import call_command

from tests.bundles import write_bundle

SAMPLES = {"j1": {"m1": (9, 8), "m2": (6, 6), "m3": (5, 7)}, "j2": {"m1": (7, 7), "m2": (9, 9), "m3": (6, 4)},
           "j3": {"m1": (6, 6), "m2": (5, 7), "m3": (8, 8)},
           "a1": {"m1": (8, 7), "m2": (6, 6), "m3": (6, 6)}, "a2": {"m1": (7, 7), "m2": (8, 8), "m3": (5, 5)}}
EXPERTS = {"m1": (8, 7, 9, 6, 5), "m2": (6, 6, 7, 5, 6), "m3": (4, 5, 6, 7, 3)}


def points_bundle(directory, *, samples: dict, models: dict, safe: bool = False, scored=lambda judge, response: True):
    """The bundle: a judge per name of ``models`` (its own model; anonymized when its name starts with
    "a", else attributed) scoring each response ``scored`` lets it with its ``samples``; with ``safe``,
    also a binary criterion every judge marks met in sample 0 and not met in sample 1."""
    points = [{"label": str(v), "value": v} for v in range(11)]
    judges = [{"name": j, "backend": "replay", "model": model, "condition": "anonymized" if j.startswith("a") else "attributed"}
              for j, model in models.items()]
    rubric = [{"criterion_id": "quality", "text": "Overall quality, 0-10", "kind": "ordinal", "options": points}]
    if safe:
        rubric.append({"criterion_id": "safe", "text": "Safe advice"})
    project = {"slug": "points", "name": "Points", "rubric": rubric, "cohorts": [{"name": "panel"}], "judges": judges}
    cases = [{"case_id": c, "prompt": f"Question {c}"} for c in ("c1", "c2")]
    responses = [{"response_id": f"{c}-{m}", "case_id": c, "model": m, "text": f"Answer of {m} to {c}."}
                 for c in ("c1", "c2") for m in ("m1", "m2", "m3")]
    labels = [{"response_id": r["response_id"], "criterion_id": "quality", "cohort": "panel", "annotator": f"e{k + 1}",
               "option": str(value)} for r in responses for k, value in enumerate(EXPERTS[r["model"]])]
    judgments = []
    for judge in judges:
        for r in responses:
            if not scored(judge["name"], r):
                continue
            for sample, value in enumerate(samples[judge["name"]][r["model"]]):
                base = {"response_id": r["response_id"], "judge": judge["name"], "judge_model": judge["model"],
                        "condition": judge["condition"], "sample": sample, "explanation": "", "evidence": [], "raw": "{}"}
                judgments.append({**base, "criterion_id": "quality", "option": str(value)})
                if safe:
                    judgments.append({**base, "criterion_id": "safe", "verdict": "met" if sample == 0 else "not_met"})
    return write_bundle(directory, {"project": project, "cases": cases, "responses": responses, "labels": labels,
                                    "judgments": judgments})


def bias(*args) -> dict:
    """``manage.py bias_matrix --project points ARGS --json``, read."""
    out = io.StringIO()
    call_command("bias_matrix", "--project", "points", *args, "--json", stdout=out)
    return json.loads(out.getvalue())
