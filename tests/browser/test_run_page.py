"""The judge run page keeps up (issue 25 point 5): while a run is queued, running or stopping the
page follows it without a reload until it ends, and it offers Stop (and Resume once stopped) on
the page itself."""
import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation.models import Project
from grading.bundles import bundle_import
from grading.models import Judge, JudgeRun
from tests.roles import grant

FOLLOW = 20_000  # ms: a bound on waiting for the page's next poll (it polls every second), never a sleep


@pytest.fixture
def running(transactional_db, mini_bundle, django_user_model):
    bundle_import(path=mini_bundle)
    project = Project.objects.get(slug="mini")
    grant(django_user_model.objects.create_user("boss", password="pw-boss-1"), project, "manager")
    judge = Judge.objects.create(project=project, name="watched", backend="replay", model="m")
    return JudgeRun.objects.create(judge=judge, status=JudgeRun.RUNNING, total_calls=10, done_calls=3, calls_made=3,
                                   started_at=timezone.now(), heartbeat_at=timezone.now())


def test_the_run_page_follows_a_run_to_its_end_without_a_reload(page, login, running, screenshots):
    login("boss", "pw-boss-1")
    page.goto(f"/projects/mini/judges/runs/{running.pk}/")
    expect(page.locator(".run-status")).to_have_attribute("data-status", "running")
    expect(page.locator("#run-live")).to_contain_text("3 of 10 answered")
    page.evaluate("window.__same_page = true")  # gone if the page were reloaded
    JudgeRun.objects.filter(pk=running.pk).update(done_calls=7, calls_made=7)
    expect(page.locator("#run-live")).to_contain_text("7 of 10 answered", timeout=FOLLOW)
    JudgeRun.objects.filter(pk=running.pk).update(done_calls=10, calls_made=10, status=JudgeRun.FINISHED,
                                                  finished_at=timezone.now())
    expect(page.locator(".run-status")).to_have_attribute("data-status", "finished", timeout=FOLLOW)
    expect(page.locator("#run-live")).to_contain_text("10 of 10 answered")
    assert page.evaluate("window.__same_page") is True
    expect(page.locator("#run-live-note")).to_have_count(0)  # a finished run is no longer followed
    page.screenshot(path=str(screenshots / "run_finished.png"), full_page=True)


def test_stop_and_resume_from_the_run_page(page, login, running):
    login("boss", "pw-boss-1")
    page.goto(f"/projects/mini/judges/runs/{running.pk}/")
    page.get_by_role("button", name="Stop").click()
    expect(page.locator(".run-status")).to_have_attribute("data-status", "stopping")
    assert page.url.endswith(f"/judges/runs/{running.pk}/")  # back on the run's own page
    JudgeRun.objects.filter(pk=running.pk).update(status=JudgeRun.STOPPED)  # its worker answered its in-flight calls
    expect(page.locator(".run-status")).to_have_attribute("data-status", "stopped", timeout=FOLLOW)
    expect(page.get_by_role("button", name="Resume")).to_be_visible()
