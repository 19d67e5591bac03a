"""Accessibility (issue 12, point 8): axe-core, vendored from the npm registry
(tests/browser/vendor/axe-core), runs in Chromium on the labeling page (with its keyboard help
open and a refused submit's list shown), My items, the checker's review page and the adjudication
queue and item pages: no serious or critical violation. A control plants two violations so
the check is seen to find them."""
import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.annotation.conftest import PASSWORD, build_study, first_assignment
from tests.browser.axe import axe_violations
from tests.browser.test_adjudication import PASSWORD as ADJUDICATOR_PASSWORD
from tests.browser.test_adjudication import study as ward  # noqa: F401 - the adjudication pages' project
from tests.browser.test_checker import _label_and_submit


@pytest.fixture
def dual(transactional_db):
    """Two annotators of one cohort submitted the first response (a review item for chk1); a1's
    other items are open; criterion 1 of each case needs a quote when met."""
    from annotation.models import Assignment, Project

    study = build_study(slug="access", n_cases=2, n_criteria=2, overlap=2, annotators=(("a1", "a2"),), min_evidence=1)
    Project.objects.filter(pk=study.project.pk).update(guidelines="Read the **whole** response first.")
    response = first_assignment("a1").response
    for username in ("a1", "a2"):
        assignment = Assignment.objects.get(response=response, annotator__username=username)
        _label_and_submit(study.users[username], assignment, lambda c: (
            {"verdict": "not_met"} if c.kind == "binary" else {"option_label": c.options[0]["label"]}))
    return study, response


def test_the_check_finds_planted_violations(page, login, dual):
    login("a1", PASSWORD)
    page.goto("/work/items/")
    page.evaluate("""() => {
        document.querySelector('main').insertAdjacentHTML('beforeend', '<img src="x.png"><button></button>');
    }""")
    found = " ".join(axe_violations(page))
    assert "image-alt" in found and "button-name" in found


def test_the_annotator_pages_have_no_serious_violation(page, login, dual):
    from annotation.models import Criterion

    Criterion.objects.filter(project__slug="access", position=1).update(guidance="Met only if the **dose** is named.")
    login("a1", PASSWORD)
    assert axe_violations(page) == []  # My work
    page.goto("/work/next/")
    page.keyboard.press("y")  # criterion 1 met without its quote: the list of missing quotes appears
    expect(page.locator("#evidence-missing")).to_be_visible()
    assert axe_violations(page) == []
    page.keyboard.press("g")  # the project's guidelines open above the rubric
    expect(page.locator("#guidelines")).to_have_attribute("open", "")
    page.keyboard.press("j")
    page.keyboard.press("i")  # criterion 2's guidance
    expect(page.locator("details[data-guidance][open]")).to_have_count(1)
    page.keyboard.press("s")  # the sentence bank, with its cursor and a range
    page.keyboard.press("}")
    expect(page.locator("#sentence-bank li[aria-current]")).to_have_count(1)
    assert axe_violations(page) == []
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    assert axe_violations(page) == []
    page.goto("/work/items/")
    assert axe_violations(page) == []


def test_keyboard_focus_is_visible(page, login, dual):
    """Every control reached with Tab shows a focus ring (3 px, the accent colour)."""
    login("a1", PASSWORD)
    page.goto("/work/next/")
    seen = []
    for _ in range(12):
        page.keyboard.press("Tab")
        style = page.evaluate("""() => {
            const e = document.activeElement, s = getComputedStyle(e);
            return [e.tagName, s.outlineStyle, s.outlineWidth];
        }""")
        seen.append(style)
    controls = [s for s in seen if s[0] in ("A", "BUTTON", "TEXTAREA", "INPUT", "SELECT")]
    assert controls and all(style != "none" and width == "3px" for _, style, width in controls), seen


def test_the_checker_review_page_has_no_serious_violation(page, login, dual):
    _, response = dual
    login("chk1", PASSWORD)
    page.goto(reverse("review-page", args=[response.pk]))
    expect(page.locator("#review-page")).to_be_visible()
    assert axe_violations(page) == []
    page.keyboard.press("?")  # the review page's shortcuts have their help overlay too
    expect(page.locator("#help")).to_be_visible()
    expect(page.locator("#help")).to_contain_text("next disagreement")
    assert axe_violations(page) == []
    page.keyboard.press("Escape")
    expect(page.locator("#help")).to_be_hidden()


def test_the_adjudication_pages_have_no_serious_violation(page, login, ward):  # noqa: F811
    from annotation.models import Response

    login("adj", ADJUDICATOR_PASSWORD)
    page.goto(reverse("adjudication-queue", args=["ward"]))
    expect(page.locator("h1")).to_have_text("Adjudication queue")
    assert axe_violations(page) == []
    response = Response.objects.get(project=ward["ward"], external_id="r1")
    page.goto(reverse("adjudication-item", args=["ward", response.pk]))
    assert axe_violations(page) == []
