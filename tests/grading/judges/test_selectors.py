"""Side-by-side aggregation: Monte Carlo samples (majority, invalid = not met; ordinal mean) and panels."""
from annotation.models import Response
from grading.judges.selectors import side_by_side
from grading.models import Judge
from tests.grading.judges.chat_server import Reply, answer


def test_samples_are_aggregated_per_criterion_and_panels_vote(make_judge, run_judge, chat_server, mini_project):
    def script(body, index):
        user = body["messages"][-1]["content"]
        if "<options>" in user:
            return answer({"explanation": "tone", "option": ["good", "ok", "poor"][index % 3]}) if "- good" in user else answer(
                {"explanation": "len", "option": "right"})
        if "Recommends an ECG" in user and "Call emergency" in user:
            return Reply(content="not json") if index % 3 == 0 else answer({"explanation": "ecg", "criteria_met": True})
        return answer({"explanation": "no", "criteria_met": False})

    chat_server.script = script
    judge = make_judge(concurrency=1, samples=3)
    run_judge(judge)
    Judge.objects.create(project=mini_project, name="pair", backend=Judge.PANEL,
                         settings={"members": ["llm", "judge-a"], "vote": "unanimous"})
    r1 = side_by_side(response=Response.objects.get(external_id="r1"))
    cells = {(c.external_id, col.key): cell for c, row in r1.rows() for col, cell in row}
    ecg = cells[("c1-ecg", "judge:llm")]
    assert (ecg.decision, ecg.detail, ecg.invalid) == ("met", "2 of 3 samples; 1 invalid", 1)
    assert cells[("c1-call", "judge:llm")].decision == "not met"
    assert cells[("c1-ecg", "judge:pair")].decision == "met"  # llm met, judge-a met: unanimous
    assert cells[("c1-call", "judge:pair")].decision == "not met"  # judge-a did not judge it: llm alone
    r3 = side_by_side(response=Response.objects.get(external_id="r3"))
    cells = {(c.external_id, col.key): cell for c, row in r3.rows() for col, cell in row}
    assert (cells[("tone", "judge:llm")].decision, cells[("tone", "judge:llm")].detail) == ("value 0.5", "mean of 3 samples")
    assert cells[("length", "judge:llm")].decision == "right"
    assert cells[("tone", "cohort:group-1")].decision == "good"
