"""Keyboard shortcuts that cannot misfire, and the minimum evidence enforced (issue 12, points 1
and 2), in real Chromium: a sentence typed right after a key decision changes no decision (its
"e" opens the rationale of the criterion just decided, the rest is written there); decision keys
act only on a criterion the annotator chose; a met criterion without its required quote refuses
the submit with a list of links, and the same item submits once the quote is attached.
Screenshot: evidence_refused.png in the screenshots folder."""

import pytest
from playwright.sync_api import expect

from tests.annotation.conftest import PASSWORD, build_study
from tests.browser.conftest import scripts_ready
from tests.browser.test_annotation import SELECT_IN_RESPONSE


@pytest.fixture
def quoted(transactional_db):
    # one case, two responses for a1; criterion 1 requires a quote when met; 3 binary + 1 ordinal
    return build_study(slug="keys", n_cases=1, n_criteria=3, annotators=(("a1",),), min_evidence=1)


def _decisions(assignment_pk=None):
    from annotation.models import Label

    labels = Label.objects.filter(annotator__username="a1")
    if assignment_pk:
        labels = labels.filter(assignment_id=assignment_pk)
    return {label.criterion.position + 1: label.verdict or label.option_label for label in labels.select_related("criterion")}


def _settled(page):
    expect(page.locator("#rubric .crit.saving")).to_have_count(0)
    expect(page.locator("#pending-saves")).to_have_text("")


def test_a_sentence_typed_after_a_key_decision_changes_no_decision(page, login, quoted):
    login("a1", PASSWORD)
    page.goto("/work/next/")
    rows = page.locator("#rubric form.crit")
    page.keyboard.press("y")  # criterion 1: met, and it stays selected
    _settled(page)
    page.keyboard.type("not once")  # n, o, t, space, o, n, c: nothing; e: the rationale of criterion 1
    rationale = rows.nth(0).locator("textarea")
    expect(rationale).to_be_focused()
    page.keyboard.type(" did it say when to call")
    page.keyboard.press("Escape")  # leaves the field
    expect(rationale).not_to_be_focused()
    _settled(page)
    assert _decisions() == {1: "met"}
    expect(rationale).to_have_value(" did it say when to call")

    # Still paused after Escape: a decision key does nothing until a criterion is chosen.
    page.keyboard.press("n")
    expect(page.locator("#key-hint")).to_contain_text("Decision keys are paused")
    page.keyboard.press("j")  # chosen: criterion 2
    expect(rows.nth(1)).to_have_class(r"crit focused")
    page.keyboard.press("n")
    _settled(page)
    assert _decisions() == {1: "met", 2: "not_met"}

    # Words that start with no shortcut pause the keys as well ("hello" has no decision key).
    page.keyboard.press("j")
    page.keyboard.type("hello there")  # h: typing, so the rest (its "e" too) decides nothing
    _settled(page)
    assert _decisions() == {1: "met", 2: "not_met"}


def test_the_submit_is_refused_until_the_required_quote_is_attached(page, login, quoted, screenshots):
    from annotation.models import Assignment

    login("a1", PASSWORD)
    page.goto("/work/next/")
    scripts_ready(page)
    assignment = page.locator("#label-page").get_attribute("data-assignment")
    rows = page.locator("#rubric form.crit")
    for key in ("y", "j", "n", "j", "n", "j", "2"):
        page.keyboard.press(key)
    _settled(page)
    expect(page.locator(".counter")).to_have_text("4 / 4 decided")
    missing = page.locator("#evidence-missing")
    expect(missing).to_contain_text("Criterion 1 is marked met and needs 1 quote from the response (has 0)")

    page.keyboard.press("Enter")  # refused: the list is shown, its first link focused
    expect(missing).to_have_class("evidence-missing refused")
    expect(missing.get_by_role("link", name="Criterion 1")).to_be_focused()
    page.screenshot(path=str(screenshots / "evidence_refused.png"), full_page=False)
    assert Assignment.objects.get(pk=assignment).status != Assignment.SUBMITTED

    missing.get_by_role("link", name="Criterion 1").click()  # chooses criterion 1
    expect(rows.nth(0)).to_have_class(r"crit decided focused")
    assert page.evaluate(SELECT_IN_RESPONSE, "An ECG is needed")
    expect(page.locator("#selection-bar")).to_be_visible()  # the page has seen the selection (an async event)
    page.keyboard.press("q")  # quote the selection into criterion 1
    expect(rows.nth(0).locator(".evidence q")).to_have_text("An ECG is needed")
    _settled(page)
    expect(missing).to_have_count(0)
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("Submitted")
    assert Assignment.objects.get(pk=assignment).status == Assignment.SUBMITTED


def test_the_selected_criterion_is_never_under_the_sticky_bar_and_a_long_rationale_shows_whole(page, login, transactional_db):
    """Moving down a long rubric with j and back up with k keeps the selected criterion below the
    sticky progress bar; a long rationale grows its box instead of being cut."""
    build_study(slug="long", n_cases=1, n_criteria=14, annotators=(("a1",),))
    login("a1", PASSWORD)
    page.goto("/work/next/")
    rows = page.locator("#rubric form.crit")
    bar = page.locator("#progress")

    def clear_of_the_bar(index):
        top = rows.nth(index).bounding_box()["y"]
        bottom_of_bar = bar.bounding_box()["y"] + bar.bounding_box()["height"]
        return top >= bottom_of_bar - 1

    n = rows.count()
    for _ in range(n - 1):
        page.keyboard.press("j")
    for index in range(n - 1, -1, -1):
        expect(rows.nth(index)).to_have_class(r"crit focused")
        assert clear_of_the_bar(index), index
        page.keyboard.press("k")

    page.keyboard.press("y")
    expect(page.locator("#pending-saves")).to_have_text("")
    page.keyboard.press("e")
    text = " ".join(f"Sentence {i} of a long rationale about the ECG and the dose." for i in range(12))
    page.keyboard.type(text)
    page.keyboard.press("Escape")
    area = rows.nth(0).locator("textarea")
    expect(area).to_have_value(text)
    assert area.evaluate("a => a.scrollHeight <= a.clientHeight + 1")  # nothing hidden inside the box
