"""Guidelines in Chromium (issue 12, point 4): a manager writes the project's on the project page;
the annotator opens and closes them with g above the rubric (not while typing), rendered and
sanitized; a criterion's guidance shows on hover, opens with i on the selected criterion or with
Enter on its focused summary, and stays open across the saves that re-render its row.
Screenshot: guidelines.png in the screenshots folder."""
import re

from playwright.sync_api import expect

from tests.annotation.conftest import PASSWORD, build_study
from tests.roles import grant


def test_a_manager_writes_guidelines_and_an_annotator_reads_them_with_g(page, login, transactional_db, django_user_model, screenshots):
    study = build_study(slug="guide", n_cases=1, n_criteria=2, annotators=(("a1",),))
    grant(django_user_model.objects.create_user("boss", password="pw-boss-1"), study.project, "manager")
    login("boss", "pw-boss-1")
    page.goto("/projects/guide/#project-guidelines")  # the link to a part opens its tab
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
    page.screenshot(path=str(screenshots / "guidelines.png"))
    page.keyboard.press("y")
    expect(page.locator("#pending-saves")).to_have_text("")
    page.keyboard.press("e")  # the rationale has focus: g is a letter there
    page.keyboard.type("going")
    expect(guide).to_have_attribute("open", "")
    page.keyboard.press("Escape")
    page.keyboard.press("g")
    expect(guide).not_to_have_attribute("open", "")


def test_an_annotator_opens_a_criterions_guidance_with_i_and_it_stays_open_while_deciding(page, login, transactional_db):
    from annotation.models import Criterion

    build_study(slug="howto", n_cases=1, n_criteria=2, annotators=(("a1",),))
    Criterion.objects.filter(external_id="howto-c0-1").update(guidance="Met only if the **dose** is named.")
    login("a1", PASSWORD)
    page.goto("/work/next/")
    rows = page.locator("#rubric form.crit")
    guide = rows.nth(1).locator("details[data-guidance]")
    expect(rows.nth(0).locator("details[data-guidance]")).to_have_count(0)
    expect(guide.locator("summary")).to_have_attribute("title", "Met only if the **dose** is named.")  # on hover
    page.keyboard.press("i")  # criterion 1 is selected and has none
    expect(page.locator("#key-hint")).to_have_text("Criterion 1 has no guidance.")
    page.keyboard.press("j")
    page.keyboard.press("i")
    expect(guide).to_have_attribute("open", "")
    expect(guide.locator("strong")).to_have_text("dose")
    page.keyboard.press("y")  # the decision re-renders the row: the guidance stays open
    expect(page.locator("#pending-saves")).to_have_text("")
    expect(rows.nth(1)).to_have_class(re.compile(r"(^|\s)decided(\s|$)"))
    expect(rows.nth(1).locator("details[data-guidance]")).to_have_attribute("open", "")
    page.keyboard.press("e")  # typing "i" in the rationale is a letter
    page.keyboard.type("it is")
    page.keyboard.press("Escape")
    expect(rows.nth(1).locator("details[data-guidance]")).to_have_attribute("open", "")
    page.keyboard.press("i")
    expect(rows.nth(1).locator("details[data-guidance]")).not_to_have_attribute("open", "")
    rows.nth(1).locator("details[data-guidance] summary").focus()  # reachable by Tab, opened by Enter
    page.keyboard.press("Enter")
    expect(rows.nth(1).locator("details[data-guidance]")).to_have_attribute("open", "")
