"""Playwright (Python) driving Debian's Chromium headless against pytest-django's live server.

Browser tests are marked ``browser``; they skip with a clear reason when /usr/bin/chromium is
missing (``.ci/run`` installs it). Playwright's sync API runs an event loop in this thread,
so Django's async-safety check is relaxed for these tests only.
"""
import os
import shutil

import pytest

CHROMIUM = os.environ.get("EVALSITE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    # Leave the page first and give the live server a moment: a page that is left sends its last
    # requests (the labeling page's active-time beacon), and one still being served when the
    # test's database is flushed deadlocks with the flush on PostgreSQL.
    try:
        page.goto("about:blank")
        page.wait_for_timeout(300)
    finally:
        context.close()


@pytest.fixture
def login(page):
    """login(username, password) logs the page in through the real login form."""

    def do_login(username: str, password: str):
        page.goto("/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")
        return page

    return do_login


def scripts_ready(page) -> None:
    """Wait until the page's script has set up its keyboard (``body[data-ready]``): after a click
    that navigates, the elements can be there before the deferred script has run."""
    from playwright.sync_api import expect

    expect(page.locator("body[data-ready=true]")).to_have_count(1)
