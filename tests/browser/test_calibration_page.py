"""The calibration page in Chromium (issue 13, point 4): after ``calibrate``, a viewer sees the
stored calibration with QWK before and after and the human, raw and calibrated distributions
of the held-out items. Screenshot: calibration.png in the screenshots folder."""
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.models import Project
from grading.bundles import bundle_import
from tests.grading.reports.test_calibrate import shifted_bundle
from tests.roles import grant


@pytest.fixture
def shift(transactional_db, tmp_path):
    from django.core.cache import cache

    cache.clear()
    bundle_import(path=shifted_bundle(tmp_path / "shift"))
    call_command("calibrate", "--project", "shift", "--source", "judge:j", "--reference", "cohort:docs",
                 "--criterion", "quality", "--json", stdout=io.StringIO())
    grant(get_user_model().objects.create_user(username="res", password="pw-12345"), Project.objects.get(slug="shift"),
          "viewer")


def test_the_calibration_page_shows_the_stored_calibration(page, login, shift, screenshots):
    login("res", "pw-12345")
    page.goto("/projects/shift/reports/calibration/")
    stored = page.locator("#stored-calibrations")
    expect(stored.locator("#table-stored tbody tr")).to_have_count(1)
    expect(stored.locator("#table-stored")).to_contain_text("judge:j@calibrated")
    chart = stored.locator(".vega-chart[data-drawn=yes]")
    expect(chart).to_have_count(1)
    expect(chart.locator("svg g.role-legend")).to_contain_text("human")
    expect(chart.locator("svg g.role-legend")).to_contain_text("calibrated")
    titles = [(t or "").strip() for t in chart.locator("svg g.role-axis-title text").all_text_contents()]
    assert {"score (snapped to the scale)", "share of held-out items"} <= set(titles)
    quick = page.locator("#quick-calibration .vega-chart[data-drawn=yes]")  # RULERS Fig. 2 for every judge
    expect(quick).to_have_count(3)  # the QWK bars, judge j and its calibrated source
    expect(quick.nth(1).locator("svg g.role-legend")).to_contain_text("calibrated judge (quantile-mapped)")
    expect(quick.nth(1).locator("svg g.role-legend")).to_contain_text("human (cohort:docs)")
    page.screenshot(path=str(screenshots / "calibration.png"), full_page=True)
    page.locator("#quick-calibration").screenshot(path=str(screenshots / "calibration-held-out.png"))
