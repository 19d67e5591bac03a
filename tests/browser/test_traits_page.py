"""The traits page in Chromium (issue 13, point 3): a viewer sees each response's trait score
under a judge and a cohort, the QWK between them, the score distributions, and switches the
source. Screenshot: traits.png in the screenshots folder."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect
from sklearn.metrics import cohen_kappa_score

from annotation.models import Project
from grading.bundles import bundle_import
from tests.bundles import write_bundle
from tests.grading.reports.test_traits import parts
from tests.roles import grant


@pytest.fixture
def ruler(transactional_db, tmp_path):
    from django.core.cache import cache

    cache.clear()
    bundle_import(path=write_bundle(tmp_path / "ruler", parts()))
    grant(get_user_model().objects.create_user(username="res", password="pw-12345"), Project.objects.get(slug="ruler"),
          "viewer")


def test_the_traits_page_compares_a_judge_with_a_cohort(page, login, ruler, screenshots):
    login("res", "pw-12345")
    page.goto("/projects/ruler/reports/traits/")
    section = page.locator("#traits")
    expect(section.locator("h2")).to_contain_text("judge:j")
    expect(section.locator("h2")).to_contain_text("against cohort:docs")
    qwk = cohen_kappa_score([5, 3, 1], [5, 2, 2], weights="quadratic", labels=[1, 2, 3, 4, 5])
    expect(section.locator(".figure-qwk")).to_have_text(f"{qwk:.3f}")
    expect(section.locator("#table-scores tbody tr")).to_have_count(3)
    expect(section.locator("#table-scores tbody tr").nth(1)).to_contain_text("r2")
    expect(section.locator(".vega-chart[data-drawn=yes]")).to_have_count(1)
    assert section.locator(".vega-chart svg g.role-axis").count() >= 2  # the score and share axes (and grid)
    page.screenshot(path=str(screenshots / "traits.png"), full_page=True)

    page.select_option("select[name=source]", "cohort:direct")
    page.select_option("select[name=reference]", "none")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#traits h2")).to_have_text("cohort:direct")
    expect(page.locator("#table-scores tbody tr")).to_have_count(1)
    expect(page.locator("#table-scores tbody tr").first).to_contain_text("r3")
