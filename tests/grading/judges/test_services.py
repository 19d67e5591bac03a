"""Judge configuration rules: settings, API key variable names, panels, cross-evaluation pairs."""
import pytest
from django.core.exceptions import ValidationError

from grading.judges.services import (
    judge_cross_evaluation_create,
    judge_panel_create,
    judge_run_create,
    judge_run_resume,
    judge_run_stop,
    judge_save,
)
from grading.judges.settings import SettingsError, judge_settings_parse
from grading.models import Judge, JudgeRun


def test_settings_are_parsed_with_defaults_and_typos_are_errors():
    s = judge_settings_parse({"few_shot": {"cohort": "group-1"}, "shuffle_options": True})
    assert (s.few_shot_k, s.shuffle_options, s.timeout_seconds, s.json_mode) == (4, True, 60.0, True)
    for bad, key in [({"shufle_options": True}, "shufle_options"), ({"timeout_seconds": "x"}, "timeout_seconds"),
                     ({"few_shot": {"k": 3}}, "few_shot.cohort"), ({"vote": "plurality"}, "vote"),
                     ({"json_mode": "yes"}, "json_mode")]:
        with pytest.raises(SettingsError) as exc:
            judge_settings_parse(bad)
        assert exc.value.key == key


def test_api_key_env_must_be_a_variable_name(mini_project):
    judge = Judge(project=mini_project, name="j", backend=Judge.OPENAI, model="m", base_url="http://127.0.0.1:1/v1",
                  api_key_env="sk-live-abc123")
    with pytest.raises(ValidationError) as exc:
        judge_save(judge=judge)
    assert "api_key_env" in exc.value.message_dict
    judge.api_key_env = "OPENAI_API_KEY"
    assert judge_save(judge=judge).pk


def test_few_shot_cohort_must_exist(mini_project):
    judge = Judge(project=mini_project, name="j", backend=Judge.BASELINE, settings={"few_shot": {"cohort": "nobody", "k": 2}})
    with pytest.raises(ValidationError, match="no cohort 'nobody'"):
        judge_save(judge=judge)


def test_panels_are_validated(mini_project):
    Judge.objects.create(project=mini_project, name="b1", backend=Judge.BASELINE)
    panel = judge_panel_create(project=mini_project, name="panel", members=["judge-a", "b1"], vote="majority")
    assert (panel.backend, panel.settings) == ("panel", {"members": ["judge-a", "b1"], "vote": "majority"})
    weighted = judge_panel_create(project=mini_project, name="w", members=["judge-a", "b1"], vote="weighted",
                                  weights={"judge-a": 2, "b1": 1})
    assert weighted.settings["weights"] == {"judge-a": 2, "b1": 1}
    cases = [
        (dict(members=["judge-a"]), "at least two"),
        (dict(members=["judge-a", "ghost"]), "no judge 'ghost'"),
        (dict(members=["judge-a", "panel"]), "panels do not nest"),
        (dict(members=["judge-a", "b1"], vote="weighted", weights={"judge-a": 1}), "weight for 'b1'"),
        (dict(members=["judge-a", "b1"], vote="weighted", weights={"judge-a": 1, "b1": 1, "x": 1}), "'x' is not a member"),
        (dict(members=["judge-a", "judge-a"]), "listed twice"),
    ]
    for i, (kwargs, message) in enumerate(cases):
        with pytest.raises(ValidationError, match=message):
            judge_panel_create(project=mini_project, name=f"bad{i}", **kwargs)
    with pytest.raises(ValidationError, match="is a panel"):
        judge_run_create(judge=panel)


def test_cross_evaluation_creates_an_attributed_and_an_anonymized_judge_per_model(mini_project):
    judges = judge_cross_evaluation_create(project=mini_project, models=["model-a", "model-b"], base_url="http://127.0.0.1:9/v1",
                                           api_key_env="LOCAL_KEY", temperature=0.7, samples=10)
    assert [(j.name, j.model, j.condition) for j in judges] == [
        ("model-a-attributed", "model-a", "attributed"), ("model-a-anonymized", "model-a", "anonymized"),
        ("model-b-attributed", "model-b", "attributed"), ("model-b-anonymized", "model-b", "anonymized"),
    ]
    assert {(j.backend, j.samples, j.temperature) for j in judges} == {("openai", 10, 0.7)}
    again = judge_cross_evaluation_create(project=mini_project, models=["model-a"], base_url="http://127.0.0.1:9/v1", samples=3)
    assert Judge.objects.filter(project=mini_project, name__startswith="model-a-").count() == 2 and again[0].samples == 3
    with pytest.raises(ValidationError, match="wrote no response"):
        judge_cross_evaluation_create(project=mini_project, models=["gpt-judge"], base_url="http://x/v1")


def test_stop_and_resume_transitions(mini_project):
    judge = Judge.objects.create(project=mini_project, name="b", backend=Judge.BASELINE)
    queued = judge_run_create(judge=judge)
    assert judge_run_stop(run=queued).status == "stopped"
    running = JudgeRun.objects.create(judge=judge, status=JudgeRun.RUNNING)
    assert judge_run_stop(run=running).status == "stopping"
    finished = JudgeRun.objects.create(judge=judge, status=JudgeRun.FINISHED)
    with pytest.raises(ValidationError, match="cannot be resumed"):
        judge_run_resume(run=finished)
    assert judge_run_resume(run=queued, enqueue=False).status == "queued"
    with pytest.raises(ValidationError, match="unknown scope key"):
        judge_run_create(judge=judge, scope={"case": ["c1"]})


def test_starting_a_run_queues_the_task_after_commit(mini_project, django_capture_on_commit_callbacks):
    from grading.judges.services import judge_run_start

    judge = Judge.objects.create(project=mini_project, name="b", backend=Judge.BASELINE)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        run = judge_run_start(judge=judge, scope={"cases": ["c1"]})
    assert len(callbacks) == 1  # Celery runs eagerly in tests
    run.refresh_from_db()
    assert (run.status, run.done_calls, run.total_calls) == ("finished", 9, 9)


def test_baseline_run_for_demo_loading(mini_project):
    from grading.judges import judge_baseline_run

    summary = judge_baseline_run(project=mini_project)
    assert (summary.status, summary.judgments, summary.calls) == ("finished", 11, 0)
    judge = Judge.objects.get(project=mini_project, name="baseline-lexical")
    assert judge.backend == "baseline" and judge.runs.count() == 1
    assert judge_baseline_run(project=mini_project).judgments == 11  # idempotent: same judge, a new run
    assert Judge.objects.filter(project=mini_project, backend="baseline").count() == 1


def test_a_running_run_without_heartbeat_is_stale_and_resumable(mini_project):
    from datetime import timedelta

    from django.utils import timezone

    from grading.judges.selectors import judge_run_resumable, judge_run_stale

    judge = Judge.objects.create(project=mini_project, name="b", backend=Judge.BASELINE)
    alive = JudgeRun.objects.create(judge=judge, status=JudgeRun.RUNNING, heartbeat_at=timezone.now())
    lost = JudgeRun.objects.create(judge=judge, status=JudgeRun.RUNNING, heartbeat_at=timezone.now() - timedelta(minutes=10))
    assert not judge_run_stale(run=alive) and not judge_run_resumable(run=alive)
    assert judge_run_stale(run=lost) and judge_run_resumable(run=lost)
    assert judge_run_resume(run=lost, enqueue=False).status == "queued"
    with pytest.raises(ValidationError):
        judge_run_resume(run=alive, enqueue=False)
