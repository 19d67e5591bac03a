"""A manager opens a finished judge run from the project page's runs table and reads its page
(issue 11, point 8); a screenshot is kept for looking at (run_page.png in the screenshots
folder)."""

import pytest

from annotation.models import Project
from grading.bundles import bundle_import
from grading.judges.runner import judge_run_execute
from grading.judges.services import judge_run_create
from grading.models import Judge
from tests.grading.judges.chat_server import ChatServer
from tests.roles import grant

ITEMS = 11


@pytest.fixture
def chat_server():
    server = ChatServer().start()
    yield server
    server.stop()


def test_a_manager_opens_a_run_from_the_runs_table(page, login, transactional_db, mini_bundle, chat_server,
                                                    django_user_model, screenshots):
    bundle_import(path=mini_bundle)
    mini_project = Project.objects.get(slug="mini")
    grant(django_user_model.objects.create_user("boss", password="pw-boss-1"), mini_project, "manager")
    judge = Judge.objects.create(project=mini_project, name="llm", backend=Judge.OPENAI, model="judge-model",
                                 base_url=chat_server.url, concurrency=1, price_in_per_mtok=100, settings={"max_tokens": 256})
    run = judge_run_create(judge=judge, budget_usd="0.005")
    judge_run_execute(run=run)
    login("boss", "pw-boss-1")
    page.goto(f"/projects/{mini_project.slug}/")
    row = page.locator(f"#run-{run.pk}")
    assert "paused at its budget" in row.inner_text() and row.locator("input[name=budget_usd]").is_visible()
    page.locator("#judge-runs").screenshot(path=str(screenshots / "runs_table.png"))
    page.click(f"#run-{run.pk} a")
    page.wait_for_url(f"**/judges/runs/{run.pk}/")
    assert page.locator(".run-status strong").inner_text() == "paused"
    assert "paused at its budget" in page.locator(".run-status").inner_text()
    figures = page.locator("table.run-figures").inner_text()
    assert f"5 of {ITEMS} answered" in figures and "$0.0050 of a $0.0050 budget" in figures
    assert page.locator("td.template").inner_text() == "clinconsensus-rubric-item v1"
    page.screenshot(path=str(screenshots / "run_page.png"), full_page=True)
