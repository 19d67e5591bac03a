"""The bias page in Chromium (issue 13, point 1): heatmaps in the rubric's own points with each
cell's Monte Carlo μ ± σ, the self-bias outlined, the warning for a condition with two judges,
the experts' panel table, and the switch to [0, 1]. Screenshot: bias.png in the screenshots folder."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.models import Project
from grading.bundles import bundle_import
from tests.grading.reports.test_bias_native import _bundle
from tests.roles import grant


@pytest.fixture
def points(transactional_db, tmp_path):
    from django.core.cache import cache

    cache.clear()
    bundle_import(path=_bundle(tmp_path / "points"))
    grant(get_user_model().objects.create_user(username="res", password="pw-12345"), Project.objects.get(slug="points"),
          "viewer")


def test_the_bias_page_shows_points_with_monte_carlo_spread_and_warns_of_two_judges(page, login, points, screenshots):
    login("res", "pw-12345")
    page.goto("/projects/points/reports/bias/?criterion=quality&reference=cohort:panel")
    attributed, anonymized = page.locator("#bias-attributed"), page.locator("#bias-anonymized")
    expect(attributed.locator("h2")).to_contain_text("criterion quality, points 0–10")
    bias_map = attributed.locator(".vega-chart").first
    expect(bias_map.locator('svg g.mark-rect.role-mark path[stroke-width="3"]')).to_have_count(3)
    expect(bias_map.locator("svg g.mark-text.role-mark text").first).to_have_text("2.00 ± 0.71")  # j1 → m1: +2 points, σ √0.5
    expect(attributed.locator("#table-attributed_cells")).to_contain_text("8.50 ± 0.71")
    expect(attributed.locator("#table-attributed_panel")).to_contain_text("7.00 ± 1.58")
    expect(attributed.locator(".warning")).to_have_count(0)
    expect(anonymized.locator(".warning")).to_contain_text("fewer than three judges score m1, m2, m3")
    expect(page.locator("#table-attenuation")).to_contain_text("m1")
    page.screenshot(path=str(screenshots / "bias.png"), full_page=True)

    page.select_option("select[name=scale]", "unit")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#bias-attributed h2")).to_contain_text("rescaled to [0, 1]")
    expect(page.locator("#bias-attributed .vega-chart").first.locator("svg g.mark-text.role-mark text").first).to_have_text(
        "0.20 ± 0.07")
    expect(page.locator("#table-attributed_scores")).to_have_count(0)
    page.locator("input[name=ci]").check()  # the 95% intervals toggle: each mean score S beside its interval
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#table-attributed_scores thead")).to_contain_text("m1 95% interval")  # words; the CSV keeps "m1 95% CI"
