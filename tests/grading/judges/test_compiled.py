"""A judge in RULERS compiled mode against the loopback Chat Completions server (issue 13,
point 3): one call per (response, trait) with the locked checklist, the rubric version's hash and
the response as its numbered sentence bank; quotes anchored to sentence ids are kept only when
verbatim in that sentence, so an altered quote is rejected (and said so) and gates the trait."""
import io
import json

from django.core.management import call_command

from annotation.models import RubricVersion
from grading.bundles import bundle_import
from grading.models import Judge, JudgeRun, Judgment
from tests.bundles import write_bundle
from tests.grading.judges.chat_server import Reply, answer
from tests.grading.reports.test_traits import parts

ANSWERS = {
    "[1] Call now.": {"items": [
        {"id": 1, "decision": 2, "quotes": [{"sentence": 1, "text": "Call  now."}]},  # spacing differs: still verbatim
        {"id": 2, "decision": 2, "quotes": [{"sentence": 2, "text": "Take aspirin daily."}]},  # altered
        {"id": 3, "decision": 1, "quotes": [{"sentence": 1, "text": "Take aspirin."}]},  # from another sentence
    ], "explanation": "Clear enough."},
    "[1] Rest at home.": {"items": [
        {"id": 1, "decision": 2, "quotes": [{"sentence": 2, "text": "Drink juice."}]},
        {"id": 2, "decision": 2}, {"id": 3, "decision": 2, "quotes": [{"sentence": 9, "text": "Rest at home."}]},
    ], "explanation": "All there."},
}


def script(body: dict, index: int) -> Reply:
    user = body["messages"][-1]["content"]
    for marker, obj in ANSWERS.items():
        if marker in user:
            return answer(obj)
    return Reply(content="I would rather not say.")


def test_a_compiled_judge_scores_traits_with_anchored_quotes(db, tmp_path, chat_server):
    bundle_import(path=write_bundle(tmp_path / "ruler", parts()))
    chat_server.script = script
    judge = Judge.objects.create(project_id=RubricVersion.objects.first().project_id, name="rulers", backend=Judge.OPENAI,
                                 model="m", base_url=chat_server.url, settings={"compiled": True},
                                 condition=Judge.ANONYMIZED)
    out = io.StringIO()
    call_command("run_judge", "--project", "ruler", "--judge", "rulers", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert (result["calls"], result["judgments"], result["invalid"]) == (3, 9, 3)  # r3's answer is no JSON

    digest = RubricVersion.objects.get(project__slug="ruler", case__isnull=True, is_current=True).content_hash
    first = chat_server.requests[0]["messages"][-1]["content"]
    assert f'<rubric version="{digest}" locked="true">' in first and "<trait>Clarity, 1-5</trait>" in first
    assert "1. Clarity item a\n2. Clarity item b\n3. Clarity item c" in first
    users = {r["messages"][-1]["content"] for r in chat_server.requests}
    assert any("[1] Call now.\n[2] Take aspirin." in u for u in users)
    assert len(chat_server.requests) == 3

    stored = {(j.response.external_id, j.criterion.external_id): j for j in Judgment.objects.filter(judge=judge)
              .select_related("response", "criterion")}
    assert stored[("r1", "clarity-a")].evidence == ["Call  now."] and stored[("r1", "clarity-a")].option_label == "clear"
    assert stored[("r1", "clarity-b")].evidence == []
    assert "rejected quote (1): sentence 2 does not contain 'Take aspirin daily.'" in stored[("r1", "clarity-b")].explanation
    assert "rejected quote (1): sentence 1 does not contain 'Take aspirin.'" in stored[("r1", "clarity-c")].explanation
    assert "sentence 9 is not one of the answer's 2 sentences" in stored[("r2", "clarity-c")].explanation
    assert not stored[("r3", "clarity-a")].valid
    from grading.judges.compiled import rejected_quotes

    assert [rejected_quotes(stored[("r1", k)].explanation) for k in ("clarity-a", "clarity-b", "clarity-c")] == [0, 1, 1]
    run = JudgeRun.objects.get(judge=judge)
    assert (run.total_calls, run.done_calls, run.invalid_count) == (9, 9, 3)

    scores = io.StringIO()
    call_command("trait_scores", "--project", "ruler", "--source", "judge:rulers", "--json", stdout=scores)
    # r1: items 2, 2, 1 -> mu 5/6 -> 4.33 -> 4, one quote kept (>= min_evidence 1); r2: 2, 2, 2 -> 5, but
    # every quote was rejected: gated to gate - 1 = 2; r3: no valid output, no score
    assert json.loads(scores.getvalue())["responses"] == {"r1": {"clarity": 4}, "r2": {"clarity": 2}}

    again = io.StringIO()
    call_command("run_judge", "--project", "ruler", "--judge", "rulers", "--json", stdout=again)
    rerun = json.loads(again.getvalue())  # a new run answers every trait from the cache: no call
    assert (rerun["calls"], rerun["cache_hits"], rerun["judgments"]) == (0, 9, 9) and len(chat_server.requests) == 3
