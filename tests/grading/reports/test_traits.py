"""RULERS compiled rubrics (issue 13, point 3): the trait score formula pinned at its boundaries,
checklist items and trait rules checked on import, and ``trait_scores`` by hand for a cohort
(with its quotes and the gate), a judge (sample by sample, then averaged half up), a cohort that
scores the trait directly, and QWK against a reference."""
import io
import json
import re

import pytest
from django.core.management import call_command

from grading.bundles import BundleError, bundle_import
from grading.metrics import round_half_up, samples_trait_score, trait_score
from tests.bundles import write_bundle


@pytest.mark.parametrize("decisions, lo, hi, quotes, expected", [
    ([0, 0, 0], 1, 5, 9, 1),          # all absent: the bottom of the scale
    ([2, 2, 2], 1, 5, 9, 5),          # all clear: the top
    ([2, 0], 0, 5, 9, 3),             # half: 2.5 rounds half up to 3 (never to the even 2)
    ([1, 1, 1, 1], 0, 7, 9, 4),       # 3.5 -> 4
    ([2, 1, None], 0, 10, 9, 8),      # an item without a decision is left out: mu = 0.75 -> 7.5 -> 8
    ([2, 2, 2], 1, 5, 0, 2),          # the gate: fewer than 1 valid quote -> at most gate - 1 = 2
    ([0, 0, 0], 1, 5, 0, 1),          # already below the gate
    ([None], 1, 5, 9, None),          # nothing decided: no score
])
def test_the_trait_score_formula(decisions, lo, hi, quotes, expected):
    assert trait_score(decisions=decisions, lo=lo, hi=hi, valid_quotes=quotes, min_evidence=1, gate=3) == expected


def test_rounding_half_up_and_samples():
    assert [round_half_up(x) for x in (0.5, 1.5, 2.5, 2.49, -0.5)] == [1, 2, 3, 2, 0]
    assert samples_trait_score([4, 5]) == 5 and samples_trait_score([2, 3, None]) == 3 and samples_trait_score([None]) is None
    with pytest.raises(Exception, match="checklist decisions are 0, 1 or 2"):
        trait_score(decisions=[3], lo=0, hi=10)


LEVELS = [{"label": "absent", "value": 0}, {"label": "partial", "value": 1}, {"label": "clear", "value": 2}]
LABEL = {0: "absent", 1: "partial", 2: "clear"}
TEXTS = {"r1": "Call now. Take aspirin.", "r2": "Rest at home. Drink water.", "r3": "It depends. Maybe."}
COHORT = {"r1": ([2, 2, 2], ["Call now."]), "r2": ([2, 1, 0], []), "r3": ([1, 1, 2], [])}
JUDGE = {  # response: [(items, quotes) per sample]
    "r1": [([2, 2, 2], ["Take aspirin."]), ([2, 2, 1], ["Call now."])],
    "r2": [([2, 1, 0], ["Drink water."]), ([1, 1, 0], [])],
    "r3": [([0, 0, 0], []), ([0, 0, 0], [])],
}


def parts():
    items = [{"criterion_id": f"clarity-{k}", "text": f"Clarity item {k}", "kind": "ordinal", "options": [*LEVELS],
              "checklist_of": "clarity"} for k in "abc"]
    rubric = [{"criterion_id": "clarity", "text": "Clarity, 1-5", "kind": "ordinal",
               "options": [{"label": str(v), "value": v} for v in range(1, 6)]}, *items]
    project = {"slug": "ruler", "name": "Ruler", "rubric": rubric, "cohorts": [{"name": "docs"}, {"name": "direct"}],
               "traits": [{"trait": "clarity", "min_evidence": 1, "gate": 3}],
               "judges": [{"name": "j", "backend": "replay", "model": "m-j", "condition": "anonymized", "samples": 2}]}
    responses = [{"response_id": r, "case_id": "c1", "model": f"m-{r}", "text": t} for r, t in TEXTS.items()]
    labels = []
    for r, (decisions, quotes) in COHORT.items():
        for k, d in zip("abc", decisions):
            labels.append({"response_id": r, "criterion_id": f"clarity-{k}", "cohort": "docs", "annotator": "d1",
                           "option": LABEL[d], **({"evidence": quotes} if k == "a" and quotes else {})})
    labels.append({"response_id": "r3", "criterion_id": "clarity", "cohort": "direct", "annotator": "d2", "option": "4"})
    judgments = []
    for r, samples in JUDGE.items():
        for sample, (decisions, quotes) in enumerate(samples):
            for k, d in zip("abc", decisions):
                judgments.append({"response_id": r, "criterion_id": f"clarity-{k}", "judge": "j", "judge_model": "m-j",
                                  "condition": "anonymized", "sample": sample, "option": LABEL[d], "explanation": "",
                                  "evidence": quotes if k == "b" else [], "raw": "{}"})
    return {"project": project, "cases": [{"case_id": "c1", "prompt": "Chest pain?"}], "responses": responses,
            "labels": labels, "judgments": judgments}


def trait_scores(*args):
    out = io.StringIO()
    call_command("trait_scores", "--project", "ruler", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_trait_scores_by_hand(db, tmp_path):
    bundle_import(path=write_bundle(tmp_path / "ruler", parts()))
    cohort = trait_scores("--source", "cohort:docs")
    # r1: mu 1 -> 5, one valid quote; r2: mu 0.5 -> 3, no quote: gated to 2; r3: mu 2/3 -> 3.67 -> 4,
    # no quote (an import refuses a quote that is not in the response): gated to 2
    assert cohort["responses"] == {"r1": {"clarity": 5}, "r2": {"clarity": 2}, "r3": {"clarity": 2}}
    assert cohort["traits"] == {"clarity": {"lo": 1.0, "hi": 5.0, "items": 3, "min_evidence": 1, "gate": 3, "n_scored": 3}}

    judge = trait_scores("--source", "judge:j", "--reference", "cohort:docs")
    # r1: samples 5 and 4 (mu 5/6 -> 4.33) -> 4.5 -> 5; r2: 3 (quoted) and 2 (mu 1/3 -> 2.33, no quote) -> 2.5 -> 3;
    # r3: 1 and 1 -> 1
    assert judge["responses"] == {"r1": {"clarity": 5}, "r2": {"clarity": 3}, "r3": {"clarity": 1}}
    from sklearn.metrics import cohen_kappa_score

    expected = cohen_kappa_score([5, 3, 1], [5, 2, 2], weights="quadratic", labels=[1, 2, 3, 4, 5])
    assert judge["qwk"] == {"clarity": pytest.approx(expected)} and judge["reference"] == "cohort:docs"

    direct = trait_scores("--source", "cohort:direct")  # the trait scored directly, no checklist
    assert direct["responses"] == {"r3": {"clarity": 4}}


@pytest.mark.parametrize("change, where, message", [
    (lambda p: p["project"]["rubric"][1]["options"].pop(), "project.json",
     "a checklist item is an ordinal criterion with the options 0, 1 and 2"),
    (lambda p: p["project"]["rubric"][1].update(checklist_of="nope"), "project.json",
     "names 'nope', which is not an ordinal criterion of the same rubric"),
    (lambda p: p["project"]["traits"].append({"trait": "clarity-a"}), "project.json", "trait 'clarity-a' has no checklist items"),
    (lambda p: p["project"]["traits"][0].pop("gate"), "project.json", "traits[0].gate: a trait with min_evidence needs a gate"),
])
def test_bad_compiled_rubrics_are_refused(db, tmp_path, change, where, message):
    bundle = parts()
    change(bundle)
    with pytest.raises(BundleError, match=re.escape(message)) as caught:
        bundle_import(path=write_bundle(tmp_path / "bad", bundle))
    assert where in str(caught.value)


def test_a_compiled_rubric_round_trips(db, tmp_path):
    from annotation.models import Project
    from grading.bundles import gold_export

    bundle_import(path=write_bundle(tmp_path / "ruler", parts()))
    gold_export(project=Project.objects.get(slug="ruler"), out_dir=tmp_path / "out")
    exported = json.loads((tmp_path / "out" / "project.json").read_text())
    assert exported["traits"] == [{"trait": "clarity", "min_evidence": 1, "gate": 3}]
    assert [c.get("checklist_of") for c in exported["rubric"]] == [None, "clarity", "clarity", "clarity"]
