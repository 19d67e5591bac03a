"""My items in real Chromium (issue 12, point 5): from My work to the list, filtered by status
and searched by case id, back into an item (read-only once submitted), and a reopened item's
reason on the list and on the item. Screenshot: my_items.png in the screenshots folder."""

import pytest
from playwright.sync_api import expect

from tests.annotation.conftest import PASSWORD, build_study


@pytest.fixture
def two_cases(transactional_db):
    return build_study(slug="mine", n_cases=2, n_criteria=2, with_ordinal=False, annotators=(("a1",),))


def test_an_annotator_finds_an_earlier_item_and_a_reopened_ones_reason(page, login, two_cases, screenshots):
    from annotation.assignments import assignment_reopen
    from annotation.models import Assignment, CohortMembership

    login("a1", PASSWORD)
    page.goto("/work/next/")
    for key in ("y", "j", "n"):
        page.keyboard.press(key)
    expect(page.locator(".counter")).to_have_text("2 / 2 decided")
    expect(page.locator("#pending-saves")).to_have_text("")
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("Submitted")
    done = Assignment.objects.get(annotator__username="a1", status="submitted")

    page.goto("/")
    with page.expect_navigation():
        page.locator("#work-mine").get_by_role("link", name="My items").click()  # the project card's (also in the top bar)
    expect(page.locator("#item-count")).to_have_text("4 items")
    page.get_by_label("Status").select_option("submitted")
    with page.expect_navigation():
        page.get_by_role("button", name="Filter").click()
    expect(page.locator("#my-items tbody tr")).to_have_count(1)
    with page.expect_navigation():
        page.get_by_role("link", name="View (read-only)").click()
    expect(page.locator("#label-page")).to_have_attribute("data-read-only", "true")

    checker = CohortMembership.objects.filter(project=two_cases.project, role="checker").first()
    assert checker is not None
    assignment_reopen(assignment=done, by=checker.user, reason="Criterion 2 deserves a second look")
    page.goto("/work/items/")
    page.get_by_label("Case id").fill(done.response.case.external_id)
    with page.expect_navigation():
        page.get_by_label("Case id").press("Enter")
    row = page.locator(f"tr[data-assignment='{done.pk}']")
    expect(row).to_contain_text("Reopened by")
    expect(row).to_contain_text("Criterion 2 deserves a second look")
    page.screenshot(path=str(screenshots / "my_items.png"), full_page=True)
    with page.expect_navigation():
        row.get_by_role("link").click()
    expect(page.locator("#reopened")).to_contain_text("Criterion 2 deserves a second look")
    expect(page.locator("#label-page")).to_have_attribute("data-read-only", "false")
