"""The plan is streamed a chunk of responses at a time (issue 11, point 6): the same calls in the
same order whatever the chunk, counted by the database, and a run resumed chunk by chunk makes
only the calls it had not answered."""
from grading.judges import plan
from grading.judges.runner import judge_run_execute
from grading.judges.services import judge_run_create, judge_run_resume
from grading.models import JudgeRun, Judgment

ITEMS = 11


def _keys(project, scope=None, chunk=plan.PLAN_CHUNK):
    return [(i.response_pk, i.criterion_pk) for items in plan.plan_items(project=project, scope=scope, chunk=chunk)
            for i in items]


def test_chunks_do_not_change_the_plan(mini_project):
    whole = _keys(mini_project)
    assert len(whole) == ITEMS == len(set(whole))
    for chunk in (1, 2, 3):
        assert _keys(mini_project, chunk=chunk) == whole
    assert [len(items) for items in plan.plan_items(project=mini_project, scope=None, chunk=1)][:2] == [3, 3]
    for samples in (1, 3):
        assert plan.plan_count(project=mini_project, scope=None, samples=samples) == ITEMS * samples
    scope = {"cases": ["c1"], "criteria": ["c1-ecg", "c1-abx"]}
    assert plan.plan_count(project=mini_project, scope=scope, samples=2) == len(_keys(mini_project, scope, chunk=1)) * 2 == 12


def test_a_run_planned_one_response_at_a_time_resumes_without_repeating(make_judge, chat_server, monkeypatch):
    monkeypatch.setattr(plan, "PLAN_CHUNK", 1)
    monkeypatch.setattr(plan.plan_items, "__kwdefaults__", {"chunk": 1})
    chat_server.latency = 0.06  # 22 calls take longer than a flush interval: the stop lands mid-run
    judge = make_judge(samples=2, concurrency=1)
    run = judge_run_create(judge=judge)

    def stop_after_the_first_batch(current):
        JudgeRun.objects.filter(pk=current.pk, status=JudgeRun.RUNNING).update(status=JudgeRun.STOPPING)

    judge_run_execute(run=run, on_flush=stop_after_the_first_batch)
    run.refresh_from_db()
    done = Judgment.objects.filter(run=run).count()
    assert run.status == JudgeRun.STOPPED and 0 < done < 2 * ITEMS and run.total_calls == 2 * ITEMS
    judge_run_execute(run=judge_run_resume(run=run, enqueue=False))
    run.refresh_from_db()
    assert (run.status, run.done_calls) == (JudgeRun.FINISHED, 2 * ITEMS)
    assert len(chat_server.requests) == 2 * ITEMS  # every call once over both executions
