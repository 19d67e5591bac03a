"""Few-shot examples on case-specific rubrics (issue 25, "figures that mislead").

A case-specific criterion exists in one case, so outside the few-shot split it has no labelled
answers of its own: before, every call on it ran without examples. Now its examples are the
cohort's decisions on criteria of other (split) cases that share one of its tags (and its kind
and options), each shown with its own rubric item; a run where a case-specific criterion would
still get none is refused before any call is made.

Three cases: c1 (in the split) has ``c1-ecg`` tagged ``workup``; c2 has ``c2-temp`` tagged
``workup`` and ``c2-odd`` with no tag; c3 has ``c3-xray`` tagged ``workup``. The cohort labels
c1-ecg: r1 met, r2 not met.
"""
import re

import pytest
from django.core.exceptions import ValidationError

from grading.bundles import bundle_import
from grading.models import Judge, JudgeRun
from tests.bundles import write_bundle

SETTINGS = {"few_shot": {"cohort": "docs", "k": 2, "seed": 1, "split": {"cases": ["c1"]}}}


def _bundle(directory):
    cases = [
        {"case_id": "c1", "prompt": "Chest pain?", "criteria": [
            {"criterion_id": "c1-ecg", "text": "Recommends an ECG", "tags": ["workup"]}]},
        {"case_id": "c2", "prompt": "Fever?", "criteria": [
            {"criterion_id": "c2-temp", "text": "Checks the temperature", "tags": ["workup"]},
            {"criterion_id": "c2-odd", "text": "Mentions the weather"}]},
        {"case_id": "c3", "prompt": "Fall?", "criteria": [
            {"criterion_id": "c3-xray", "text": "Orders an X-ray", "tags": ["workup", "imaging"]}]},
    ]
    responses = [{"response_id": r, "case_id": c, "model": "m", "text": f"Answer {r}."}
                 for r, c in (("r1", "c1"), ("r2", "c1"), ("r3", "c2"), ("r4", "c3"))]
    labels = [{"response_id": r, "criterion_id": "c1-ecg", "cohort": "docs", "annotator": "d1", "verdict": v}
              for r, v in (("r1", "met"), ("r2", "not_met"))]
    project = {"slug": "tagged", "name": "Tagged", "cohorts": [{"name": "docs"}], "rubric": []}
    return write_bundle(directory, {"project": project, "cases": cases, "responses": responses, "labels": labels,
                                    "judgments": []})


@pytest.fixture
def tagged(db, tmp_path, chat_server):
    bundle_import(path=_bundle(tmp_path / "tagged"))
    from annotation.models import Project

    return Judge.objects.create(project=Project.objects.get(slug="tagged"), name="llm", backend=Judge.OPENAI,
                                model="judge-model", base_url=chat_server.url, concurrency=2, max_retries=1,
                                settings=SETTINGS)


def test_a_case_specific_criterion_borrows_examples_of_criteria_with_its_tag(tagged, run_judge, chat_server):
    run, _ = run_judge(tagged, scope={"cases": ["c3"]})
    assert run.done_calls == 1 and len(chat_server.requests) == 1
    user = chat_server.requests[0]["messages"][-1]["content"]
    block = user.split("<examples>", 1)[1].split("</examples>", 1)[0]
    assert "related rubric items of other cases" in block
    shown = re.findall(r"Rubric item: (.*?)\n<answer>\n(.*?)\n</answer>\nGrade: \{(.*?)\}", block)
    assert sorted(shown) == [("Recommends an ECG", "Answer r1.", '"criteria_met": true'),
                             ("Recommends an ECG", "Answer r2.", '"criteria_met": false')]


def test_a_run_whose_case_specific_criteria_would_get_no_example_is_refused_before_any_call(tagged, run_judge,
                                                                                           chat_server):
    with pytest.raises(ValidationError) as refused:
        run_judge(tagged, scope={"cases": ["c2"]})
    message = str(refused.value)
    assert "c2-odd (case c2)" in message and "c2-temp" not in message and "without examples" in message
    assert chat_server.requests == [] and not JudgeRun.objects.filter(judge=tagged).exists()
    # without few-shot examples the same run goes ahead
    tagged.settings = {}
    tagged.save()
    run, _ = run_judge(tagged, scope={"cases": ["c2"]})
    assert run.done_calls == 2
