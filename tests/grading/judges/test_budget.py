"""A run's budget (issue 11, point 5): the run pauses when its cost reaches the cap, says so,
and resumes only after the budget is raised, without repeating a call. Against the loopback
Chat Completions server, which answers every call with 10 prompt tokens: at $100 per million
prompt tokens each call costs $0.001."""
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from grading.judges.runner import judge_run_execute
from grading.judges.services import judge_run_create, judge_run_resume
from grading.models import JudgeRun, Judgment
from tests.roles import grant

ITEMS = 11
PER_CALL = Decimal("0.001")


@pytest.fixture
def priced(make_judge):
    return make_judge(price_in_per_mtok=100, price_out_per_mtok=0, concurrency=1)


def test_a_run_pauses_at_its_budget_and_resumes_when_it_is_raised(priced, chat_server):
    run = judge_run_create(judge=priced, budget_usd="0.005")
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.PAUSED and run.cost_usd == 5 * PER_CALL
    assert "paused at its budget: $0.0050 spent of $0.0050" in run.error
    assert run.done_calls == 5 == len(chat_server.requests)

    with pytest.raises(ValidationError, match="raise the budget above what it has spent"):
        judge_run_resume(run=run, enqueue=False)  # the same budget: still paused
    with pytest.raises(ValidationError, match="raise the budget"):
        judge_run_resume(run=run, enqueue=False, budget_usd="0.004")
    run.refresh_from_db()
    assert run.status == JudgeRun.PAUSED

    run = judge_run_resume(run=run, enqueue=False, budget_usd="1")
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert (run.status, run.done_calls, run.error) == (JudgeRun.FINISHED, ITEMS, "")
    assert len(chat_server.requests) == ITEMS and run.cost_usd == ITEMS * PER_CALL  # no call made twice
    assert Judgment.objects.filter(run=run).count() == ITEMS


def test_calls_in_flight_are_all_the_overrun(make_judge, chat_server):
    judge = make_judge(price_in_per_mtok=100, price_out_per_mtok=0, concurrency=4)
    run = judge_run_create(judge=judge, budget_usd="0.003")
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.PAUSED
    assert Decimal("0.003") <= run.cost_usd <= Decimal("0.003") + judge.concurrency * PER_CALL
    assert len(chat_server.requests) == run.done_calls < ITEMS


def test_no_budget_means_no_cap_and_a_bad_budget_is_refused(priced, chat_server):
    run = judge_run_create(judge=priced)
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert (run.status, run.budget_usd, run.done_calls) == (JudgeRun.FINISHED, None, ITEMS)
    # Beyond what the column holds (12 digits, 4 after the point): refused on every database, not
    # sent to PostgreSQL as a numeric overflow (issue 27, point 7).
    for bad in ("-1", "lots", "NaN", "Infinity", "1e400", "9223372036854775808", "100000000", "0.00001"):
        with pytest.raises(ValidationError, match="budget"):
            judge_run_create(judge=priced, budget_usd=bad)
    assert JudgeRun.objects.filter(judge=priced).count() == 1
    with pytest.raises(CommandError, match=r"budget 1e400: Ensure that there are no more than 12 digits in total"):
        call_command("run_judge", "--project", "mini", "--judge", priced.name, "--budget", "1e400")
    assert JudgeRun.objects.filter(judge=priced).count() == 1


def test_the_command_says_the_run_paused_at_its_budget(priced, chat_server):
    with pytest.raises(CommandError, match=r"ended paused: paused at its budget: \$0.0020 spent of \$0.0020"):
        call_command("run_judge", "--project", "mini", "--judge", priced.name, "--budget", "0.002")
    run = JudgeRun.objects.get(judge=priced)
    call_command("run_judge", "--project", "mini", "--judge", priced.name, "--resume", str(run.pk), "--budget", "0.1")
    run.refresh_from_db()
    assert (run.status, run.done_calls, len(chat_server.requests)) == (JudgeRun.FINISHED, ITEMS, ITEMS)


def test_the_runs_table_offers_to_raise_the_budget(priced, client, mini_project, django_user_model, chat_server,
                                                    django_capture_on_commit_callbacks):
    client.force_login(grant(django_user_model.objects.create_user("boss", password="pw"), mini_project, "manager"))
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/projects/{mini_project.slug}/judges/runs/start/", {"judge": priced.pk, "budget_usd": "0.004"})
    run = JudgeRun.objects.get(judge=priced)
    assert (run.status, run.budget_usd, run.done_calls) == (JudgeRun.PAUSED, Decimal("0.004"), 4)
    page = client.get(f"/projects/{mini_project.slug}/judges/runs/").content.decode()
    assert "Raise budget and resume" in page and "paused at its budget" in page
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/projects/{mini_project.slug}/judges/runs/{run.pk}/resume/", {"budget_usd": "0.05"})
    run.refresh_from_db()
    assert (run.status, run.budget_usd, run.done_calls) == (JudgeRun.FINISHED, Decimal("0.05"), ITEMS)


@pytest.mark.parametrize("budget", ["9223372036854775808", "1e400", "NaN", "-1", "0.00001", "lots"])
def test_resuming_on_the_runs_table_with_a_budget_out_of_range_is_a_form_error(priced, client, mini_project, django_user_model,
                                                                                 chat_server, budget):
    """Issue 27, point 7: the resume button's budget went to the service as typed, past the form's
    field, and PostgreSQL answered a numeric overflow (a 500). Now the form's field reads it."""
    client.force_login(grant(django_user_model.objects.create_user("boss", password="pw"), mini_project, "manager"))
    run = judge_run_create(judge=priced, budget_usd="0.002")
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.PAUSED
    answer = client.post(f"/projects/{mini_project.slug}/judges/runs/{run.pk}/resume/", {"budget_usd": budget}, follow=True)
    assert answer.status_code == 200
    assert f"Run {run.pk} not resumed: Budget (USD): " in answer.content.decode()
    run.refresh_from_db()
    assert (run.status, run.budget_usd, run.done_calls) == (JudgeRun.PAUSED, Decimal("0.002"), 2)
    partial = client.post(f"/projects/{mini_project.slug}/judges/runs/{run.pk}/resume/", {"budget_usd": budget},
                          HTTP_HX_REQUEST="true")
    assert partial.status_code == 200
