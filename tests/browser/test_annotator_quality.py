"""The annotator-quality page in real Chromium: a manager sets the rate and seeds check items with
the page's forms; after a careful and a careless annotator worked, the careless one carries the
alert badge, the drift chart and the sparklines are drawn, and a stricter setting saved from the
form flags nobody new below the minimum. Screenshot: annotator_quality.png in the screenshots folder."""
import random

import pytest
from playwright.sync_api import expect

from tests.annotation.conftest import PASSWORD
from tests.grading.goldcheck.conftest import build_gold_study, label_all


@pytest.fixture
def studied(transactional_db):
    return build_gold_study(slug="gc")


def test_a_manager_seeds_check_items_and_sees_the_careless_annotator_flagged(page, login, studied, screenshots):
    from annotation.models import Assignment

    login("res", PASSWORD)
    page.goto("/projects/gc/")
    with page.expect_navigation():
        page.get_by_role("link", name="Annotator quality").click()
    form = page.locator("#quality-settings-form")
    form.get_by_label("Check-item rate").fill("0.5")
    # careless answers at random (agreement about 0.5 over 30 decisions) and careful always right: at
    # 0.9 the alert tells them apart whichever check items the seeding drew (at the default 0.7 a
    # careless draw reached 0.70 in one run and was not flagged)
    form.get_by_label("Alert below agreement").fill("0.9")
    form.get_by_label("Check items before an alert").fill("8")
    form.get_by_label("Rolling window").fill("5")
    with page.expect_navigation():
        form.get_by_role("button", name="Save settings").click()
    expect(page.locator(".messages")).to_contain_text("Settings saved")
    with page.expect_navigation():
        page.get_by_role("button", name="Seed check items").click()
    expect(page.locator(".messages")).to_contain_text("20 check items seeded")

    rng = random.Random(4)
    for name in ("careful", "careless"):
        for assignment in Assignment.objects.filter(annotator__username=name).select_related("response", "annotator") \
                .order_by("position"):
            label_all(assignment, careless_rng=rng if name == "careless" else None)

    page.goto("/projects/gc/annotator-quality/")
    careless = page.locator("#quality-careless")
    expect(careless).to_have_attribute("data-alert", "yes")
    expect(careless.locator(".badge-alert")).to_have_text("alert")
    expect(page.locator("#quality-careful")).to_have_attribute("data-alert", "no")
    expect(page.locator("#quality-careful .badge-ok")).to_have_text("ok")
    expect(page.locator("#quality-x1")).to_contain_text("0 of 8 check items")
    expect(page.locator("#quality-drift figure.chart .vega-chart")).to_have_attribute("data-drawn", "yes")
    expect(careless.locator("figure.chart .vega-chart")).to_have_attribute("data-drawn", "yes")
    page.screenshot(path=str(screenshots / "annotator_quality.png"), full_page=True)
