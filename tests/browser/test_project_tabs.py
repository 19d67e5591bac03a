"""The project page in parts (issue 25, point 5): one part at a time, chosen by tab or arrow keys;
the URL keeps the part, so a reload or a shared link opens it; a link into a part opens its tab."""
from playwright.sync_api import expect

from annotation.models import Project
from grading.bundles import bundle_import
from tests.roles import grant


def test_tabs_show_one_part_and_the_url_keeps_it(page, login, transactional_db, mini_bundle, django_user_model,
                                                   screenshots):
    bundle_import(path=mini_bundle)
    grant(django_user_model.objects.create_user("boss", password="pw-boss-1"), Project.objects.get(slug="mini"),
          "manager")
    login("boss", "pw-boss-1")
    page.goto("/projects/mini/")
    tabs = page.get_by_role("tab")
    expect(tabs).to_have_text(["Work", "Reports", "Judges", "Data", "People and settings"])
    expect(page.get_by_role("tab", name="Work")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#project-assignments")).to_be_visible()
    expect(page.locator("#project-data")).to_be_hidden()

    page.get_by_role("tab", name="Data").click()
    expect(page.locator("#project-data")).to_be_visible()
    expect(page.locator("#project-assignments")).to_be_hidden()
    assert page.url.endswith("#tab-data")
    page.screenshot(path=str(screenshots / "project_tab_data.png"), full_page=True)
    page.reload()
    expect(page.get_by_role("tab", name="Data")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#project-data")).to_be_visible()

    page.get_by_role("tab", name="Data").press("ArrowRight")  # the keyboard moves between tabs
    expect(page.get_by_role("tab", name="People and settings")).to_be_focused()
    expect(page.locator("#project-roles")).to_be_visible()

    page.goto("/projects/mini/#project-judges")  # a link to a part of the page opens its tab
    expect(page.get_by_role("tab", name="Judges")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#project-judges")).to_be_visible()
    page.screenshot(path=str(screenshots / "project_tab_judges.png"), full_page=True)


def test_without_the_script_every_part_shows(browser, live_server, live_server_activity, transactional_db, mini_bundle,
                                             django_user_model):
    from tests.browser.conftest import IDLE_TIMEOUT_SECONDS, settled

    bundle_import(path=mini_bundle)
    grant(django_user_model.objects.create_user("boss", password="pw-boss-1"), Project.objects.get(slug="mini"),
          "manager")
    context = browser.new_context(java_script_enabled=False, base_url=live_server.url)
    try:
        page = context.new_page()
        page.goto("/accounts/login/")
        page.fill("input[name=username]", "boss")
        page.fill("input[name=password]", "pw-boss-1")
        page.click("button[type=submit]")
        settled(page)
        page.goto("/projects/mini/")
        for part in ("#project-assignments", "#project-reports", "#project-judges", "#project-data", "#project-roles"):
            expect(page.locator(part)).to_be_visible()
        expect(page.locator(".tab-list")).to_be_hidden()
    finally:
        context.close()
        live_server_activity.wait_idle(IDLE_TIMEOUT_SECONDS)
