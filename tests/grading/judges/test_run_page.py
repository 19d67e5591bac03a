"""The run page (issue 11, point 8): when the run ran, what it did and cost, and the judge
configuration and prompt template version it used — recorded when a worker starts it, so a
later edit of the judge does not rewrite the history of its runs."""
from html import unescape

from grading.judges.runner import judge_run_execute
from grading.judges.services import judge_run_create, judge_save
from tests.roles import grant

ITEMS = 11


def _page(client, run) -> str:
    page = client.get(f"/projects/{run.judge.project.slug}/judges/runs/{run.pk}/")
    assert page.status_code == 200
    return page.content.decode()


def test_a_finished_run_shows_its_figures_and_configuration(make_judge, chat_server, client, mini_project,
                                                            django_user_model):
    client.force_login(grant(django_user_model.objects.create_user("boss", password="pw"), mini_project, "manager"))
    judge = make_judge(price_in_per_mtok=100, settings={"max_tokens": 333, "reasoning_effort": "low"})
    run = judge_run_create(judge=judge, budget_usd="1")
    queued = _page(client, run)
    assert "Not started yet" in queued and "<strong>queued</strong>" in queued
    judge_run_execute(run=run)
    run.refresh_from_db()
    judge.temperature = 0.9  # changed afterwards: the run keeps what it used
    judge_save(judge=judge)

    html = _page(client, run)
    assert "<strong>finished</strong>" in html
    assert f"{ITEMS} of {ITEMS} answered · {ITEMS} made to the server" in html
    assert "$0.0110 of a $1.0000 budget" in html and "110 in · 55 out" in html
    assert '<td class="template">clinconsensus-rubric-item v1</td>' in html
    assert "<th>temperature</th><td>0.0</td>" in html and "<th>model</th><td>judge-model</td>" in html
    assert '"max_tokens": 333' in unescape(html) and '"reasoning_effort": "low"' in unescape(html)
    assert "Retries</th><td>0" in html and "Cache hits</th><td>0" in html
    assert run.started_at and run.finished_at and "Duration</th><td>" in html


def test_the_runs_table_links_each_run_to_its_page(make_judge, client, mini_project, django_user_model):
    client.force_login(grant(django_user_model.objects.create_user("boss", password="pw"), mini_project, "manager"))
    run = judge_run_create(judge=make_judge())
    table = client.get(f"/projects/{mini_project.slug}/judges/runs/", HTTP_HX_REQUEST="true").content.decode()
    assert f'href="/projects/{mini_project.slug}/judges/runs/{run.pk}/">#{run.pk}</a>' in table
