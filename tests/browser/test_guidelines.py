"""Project guidelines in Chromium (issue 12, point 4, the project part): a manager writes them on
the project page; the annotator opens and closes them with g above the rubric (not while typing),
rendered and sanitized. Screenshot: var/screenshots/guidelines.png."""
from pathlib import Path

from django.conf import settings
from playwright.sync_api import expect

from tests.annotation.conftest import PASSWORD, build_study
from tests.roles import grant


def test_a_manager_writes_guidelines_and_an_annotator_reads_them_with_g(page, login, transactional_db, django_user_model):
    study = build_study(slug="guide", n_cases=1, n_criteria=2, annotators=(("a1",),))
    grant(django_user_model.objects.create_user("boss", password="pw-boss-1"), study.project, "manager")
    login("boss", "pw-boss-1")
    page.goto("/projects/guide/")
    page.locator("#guidelines-text").fill("Mark **met** only when the response says it.\n\n<img src=x onerror=alert(1)>")
    with page.expect_navigation():
        page.get_by_role("button", name="Save guidelines").click()
    expect(page.locator(".messages")).to_contain_text("Guidelines saved.")

    page.context.clear_cookies()
    login("a1", PASSWORD)
    page.goto("/work/next/")
    guide = page.locator("#guidelines")
    expect(guide).not_to_have_attribute("open", "")
    page.keyboard.press("g")
    expect(guide).to_have_attribute("open", "")
    expect(guide.locator("strong")).to_have_text("met")
    assert guide.locator("img[onerror]").count() == 0
    shots = Path(settings.BASE_DIR) / "var" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "guidelines.png"))
    page.keyboard.press("y")
    expect(page.locator("#pending-saves")).to_have_text("")
    page.keyboard.press("e")  # the rationale has focus: g is a letter there
    page.keyboard.type("going")
    expect(guide).to_have_attribute("open", "")
    page.keyboard.press("Escape")
    page.keyboard.press("g")
    expect(guide).not_to_have_attribute("open", "")
