"""The annotator workspace in real Chromium: log in, open the queue, label a whole response with
the mouse and another with the keyboard only, attach an evidence quote from the response, reload
mid-way and find every decision, submit; a failed save is shown and retried; a stale second tab
is told instead of overwriting; a blind project shows no model name in its source."""
import re

import pytest
from playwright.sync_api import expect

from tests.annotation.conftest import MODELS, PASSWORD, build_study
from tests.browser.conftest import scripts_ready

SELECT_IN_RESPONSE = """(text) => {
  const body = document.getElementById('response-body');
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.textContent.indexOf(text);
    if (at >= 0) {
      const range = document.createRange();
      range.setStart(node, at); range.setEnd(node, at + text.length);
      const selection = window.getSelection(); selection.removeAllRanges(); selection.addRange(range);
      return true;
    }
  }
  return false;
}"""


@pytest.fixture
def workspace(transactional_db):
    # one case, two responses, both assigned to a1; 4 binary criteria + 1 ordinal
    return build_study(slug="ward", n_cases=1, n_criteria=4, annotators=(("a1",), ("b1",)))


def _rows(page):
    return page.locator("#rubric form.crit")


def _wait_saved(page, n):
    expect(page.locator(".counter")).to_have_text(f"{n} / 5 decided")
    expect(page.locator("#rubric .crit.saving")).to_have_count(0)


def test_label_with_the_mouse_attach_evidence_reload_and_submit(page, login, workspace):
    from annotation.models import Assignment, Label

    login("a1", PASSWORD)
    expect(page.locator("h1")).to_have_text("My work")
    expect(page.locator('[data-count="open"]')).to_have_text("2")
    page.get_by_role("link", name="Next item").click()
    scripts_ready(page)  # the click returns once the page is there, maybe before its script
    expect(page.locator(".counter")).to_have_text("0 / 5 decided")
    expect(page.locator("#submit-btn")).to_be_disabled()

    rows = _rows(page)
    rows.nth(0).get_by_role("button", name="Met", exact=False).first.click()
    expect(rows.nth(0).locator(".crit-state")).to_contain_text("Saved")
    rows.nth(1).get_by_role("button", name=re.compile("^Not met")).click()
    _wait_saved(page, 2)

    # evidence: select a sentence of the response and attach it to criterion 1
    assert page.evaluate(SELECT_IN_RESPONSE, "An ECG is needed")
    expect(page.locator("#selection-bar")).to_be_visible()
    rows.nth(0).get_by_role("button", name="+ attach selected text as evidence").click()
    expect(rows.nth(0).locator(".evidence q")).to_have_text("An ECG is needed")
    # a rationale, saved while typing
    rows.nth(1).locator("textarea").fill("No mention of it")
    rows.nth(1).locator("textarea").blur()
    expect(page.locator("#rubric .crit.saving")).to_have_count(0)
    expect(rows.nth(1).locator(".crit-state")).to_contain_text("Saved")

    page.reload()  # mid-way: every decision is still there
    rows = _rows(page)
    expect(page.locator(".counter")).to_have_text("2 / 5 decided")
    expect(rows.nth(0).locator('button[value="met"]')).to_have_attribute("aria-pressed", "true")
    expect(rows.nth(1).locator('button[value="not_met"]')).to_have_attribute("aria-pressed", "true")
    expect(rows.nth(0).locator(".evidence q")).to_have_text("An ECG is needed")
    expect(rows.nth(1).locator("textarea")).to_have_value("No mention of it")

    rows.nth(2).locator('button[value="cannot_assess"]').click()
    rows.nth(3).locator('button[value="met"]').click()
    rows.nth(4).get_by_role("button", name=re.compile("^good")).click()
    _wait_saved(page, 5)
    expect(page.locator("#submit-btn")).to_be_enabled()
    url = page.url
    page.locator("#submit-btn").click()
    expect(page.locator(".messages")).to_contain_text("Submitted")
    assert page.url != url  # on to the next item

    first = Assignment.objects.get(annotator__username="a1", status="submitted")
    labels = {row.criterion.position: row for row in Label.objects.filter(assignment=first).select_related("criterion")}
    assert [labels[i].verdict or labels[i].option_label for i in range(5)] == ["met", "not_met", "cannot_assess", "met", "good"]
    assert labels[0].evidence == ["An ECG is needed"] and labels[1].rationale == "No mention of it"


def test_label_with_the_keyboard_only(page, login, workspace):
    from annotation.models import Assignment, Label

    login("a1", PASSWORD)
    page.goto("/work/next/")
    expect(page.locator(".counter")).to_have_text("0 / 5 decided")
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_hidden()
    # the selection starts on criterion 1; a decision keeps it there, j moves on
    for key in ("y", "j", "n", "j", "3", "j"):
        page.keyboard.press(key)
    page.keyboard.press("k")  # back to criterion 3 ...
    page.keyboard.press("j")  # ... and forward to 4
    page.keyboard.press("1")
    page.keyboard.press("j")
    page.keyboard.press("2")  # ordinal criterion 5: option 2 = "ok"
    _wait_saved(page, 5)
    page.keyboard.press("k")  # back to 4
    page.keyboard.press("e")
    page.keyboard.type("Typed without a mouse")
    page.keyboard.press("Escape")
    expect(page.locator("#rubric .crit.saving")).to_have_count(0)
    expect(page.locator("#pending-saves")).to_have_text("")
    expect(_rows(page).nth(3).locator(".crit-state")).to_contain_text("Saved")
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("Submitted")

    done = Assignment.objects.get(annotator__username="a1", status="submitted")
    labels = {row.criterion.position: row for row in Label.objects.filter(assignment=done).select_related("criterion")}
    assert [labels[i].verdict or labels[i].option_label for i in range(5)] == ["met", "not_met", "cannot_assess", "met", "ok"]
    assert labels[3].rationale == "Typed without a mouse"


def test_a_failed_save_is_shown_and_retried(page, login, workspace):
    from annotation.models import Label

    login("a1", PASSWORD)
    page.goto("/work/next/")
    failures = {"n": 0}

    def flaky(route):
        if failures["n"] < 2:
            failures["n"] += 1
            route.fulfill(status=503, body="down")
        else:
            route.continue_()

    page.route(re.compile(r".*/criteria/\d+/$"), flaky)
    row = _rows(page).nth(0)
    row.locator('button[value="met"]').click()
    expect(row.locator(".crit-state")).to_contain_text("Not saved")
    expect(page.locator("#rubric form.crit").nth(0).locator(".crit-state")).to_contain_text("Saved ✓")
    assert failures["n"] == 2
    assert Label.objects.get(annotator__username="a1", criterion__position=0).verdict == "met"


def test_a_stale_second_tab_is_told_instead_of_overwriting(page, login, workspace):
    from annotation.models import Label

    login("a1", PASSWORD)
    page.goto("/work/next/")
    other = page.context.new_page()
    other.goto(page.url)
    _rows(page).nth(0).locator('button[value="met"]').click()
    expect(_rows(page).nth(0).locator(".crit-state")).to_contain_text("Saved")
    _rows(other).nth(0).locator('button[value="not_met"]').click()
    expect(_rows(other).nth(0).locator(".crit-state")).to_contain_text("changed in another tab")
    expect(_rows(other).nth(0).locator('button[value="met"]')).to_have_attribute("aria-pressed", "true")
    assert Label.objects.get(annotator__username="a1", criterion__position=0).verdict == "met"
    _rows(other).nth(0).locator('button[value="not_met"]').click()  # now deliberately
    expect(_rows(other).nth(0).locator(".crit-state")).to_contain_text("Saved")
    assert Label.objects.get(annotator__username="a1", criterion__position=0).verdict == "not_met"


def test_blind_project_has_no_model_name_in_the_page_source(page, login, workspace):
    login("a1", PASSWORD)
    page.goto("/work/next/")
    _rows(page).nth(0).locator('button[value="met"]').click()
    expect(_rows(page).nth(0).locator(".crit-state")).to_contain_text("Saved")
    sources = [page.content(), page.request.get(page.url).text(), page.request.get("/api/assignments/").text(), page.url]
    home = page.request.get("/").text()
    for text in sources + [home]:
        for model in MODELS:
            assert model not in text


def test_active_time_counts_only_visible_time_in_use(page, login, workspace, monkeypatch):
    """Playwright's fake clock drives the page's timers: no real waiting. The server caps each
    report by the wall-clock time since the last one, so its clock is moved along with the page's."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Assignment

    server = {"now": timezone.now()}
    monkeypatch.setattr("annotation.assignments.timezone.now", lambda: server["now"])

    def run_for(ms: int) -> None:
        # a second at a time, the server's clock a step ahead: every report the page sends in a step
        # finds at least the time it reports elapsed since the one before
        for _ in range(ms // 1000):
            server["now"] += timedelta(seconds=1)
            page.clock.run_for(1000)

    # The page reports its time with navigator.sendBeacon, which the browser sends on its own
    # schedule. A report still on its way when the item is submitted would find the assignment
    # submitted and be dropped, so the test waits until every report the page has sent was answered.
    def is_report(request) -> bool:
        return request.url.endswith("/time/")

    answered = {"n": 0}
    page.on("requestfinished", lambda request: answered.__setitem__("n", answered["n"] + int(is_report(request))))

    def reports_answered() -> None:
        sent = page.evaluate("window.__timeReports")
        while answered["n"] < sent:
            page.wait_for_event("requestfinished", predicate=is_report, timeout=10_000)

    login("a1", PASSWORD)
    page.add_init_script("""(() => {
        window.__timeReports = 0;
        const send = navigator.sendBeacon.bind(navigator);
        navigator.sendBeacon = (url, body) => {
            if (String(url).endsWith("/time/")) window.__timeReports += 1;
            return send(url, body);
        };
    })()""")
    page.clock.install()
    page.goto("/work/next/")
    expect(page.locator(".counter")).to_have_text("0 / 5 decided")
    page.mouse.move(200, 200)
    run_for(20_000)  # 20 s in use
    page.evaluate("""() => {
        Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => 'hidden'});
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    reports_answered()
    run_for(300_000)  # 5 min with the tab in the background: not counted
    page.evaluate("""() => {
        Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => 'visible'});
    }""")
    page.mouse.move(210, 210)
    run_for(10_000)  # 10 s more in use
    reports_answered()
    for key in ("1", "j", "1", "j", "1", "j", "1", "j", "1"):
        page.keyboard.press(key)
    expect(page.locator(".counter")).to_have_text("5 / 5 decided")
    expect(page.locator("#rubric .crit.saving")).to_have_count(0)
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("Submitted")
    done = Assignment.objects.get(annotator__username="a1", status="submitted")
    assert 25 <= done.active_seconds <= 35, done.active_seconds


def test_a_save_made_after_the_session_expired_is_kept_and_sent_after_login(page, login, workspace):
    from annotation.models import Label

    login("a1", PASSWORD)
    page.goto("/work/next/")
    labeling_url = page.url
    page.context.clear_cookies()  # the session is gone (expired, logged out elsewhere)
    row = _rows(page).nth(0)
    row.locator('button[value="met"]').click()
    # without its cookies the request is refused (CSRF, then login): shown, kept, retried
    expect(row.locator(".crit-state")).to_contain_text("Not saved")
    expect(row.locator(".crit-state")).to_contain_text("logged in")
    assert not Label.objects.exists()
    other = page.context.new_page()  # log in again in another tab
    other.goto("/accounts/login/")
    other.fill("input[name=username]", "a1")
    other.fill("input[name=password]", PASSWORD)
    other.click("button[type=submit]")
    expect(other.locator("h1")).to_have_text("My work")
    # "Retry now" if the page is waiting to retry; if a retry is already under way it needs no push
    page.evaluate("() => { const b = document.querySelector('[data-retry]'); if (b) b.click(); }")
    expect(_rows(page).nth(0).locator(".crit-state")).to_contain_text("Saved ✓", timeout=20_000)
    assert page.url == labeling_url
    assert Label.objects.get(annotator__username="a1", criterion__position=0).verdict == "met"
