"""The reliability page in Chromium (issue 14, point 1): a viewer compares a judge with a cohort
per model on a 0-4 criterion, reads the pooled QWK, switches the grouping, and downloads the
table as CSV. Screenshot: reliability.png in the screenshots folder."""
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect
from sklearn.metrics import cohen_kappa_score

from annotation.models import Project
from grading.bundles import bundle_import
from tests.grading.reports.test_calibrate import HUMAN, shifted_bundle
from tests.roles import grant


@pytest.fixture
def shift(transactional_db, tmp_path):
    from django.core.cache import cache

    cache.clear()
    bundle_import(path=shifted_bundle(tmp_path / "shift"))
    grant(get_user_model().objects.create_user(username="res", password="pw-12345"), Project.objects.get(slug="shift"),
          "viewer")


def test_the_reliability_page_compares_two_sources_per_group(page, login, shift, screenshots):
    login("res", "pw-12345")
    page.goto("/projects/shift/reports/reliability/?a=cohort:docs&b=judge:j&by=model")
    section = page.locator("#reliability")
    human = np.array(HUMAN)
    qwk = cohen_kappa_score(human, np.minimum(human + 1, 4), weights="quadratic", labels=[0, 1, 2, 3, 4])
    expect(section.locator(".figure-qwk")).to_have_text(f"{qwk:.3f}")
    rows = section.locator("#table-reliability tbody tr")
    expect(rows).to_have_count(4)  # pooled + three models
    expect(rows.first).to_contain_text("(pooled)")
    page.screenshot(path=str(screenshots / "reliability.png"), full_page=True)

    page.select_option("select[name=by]", "criterion")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#table-reliability tbody tr")).to_have_count(2)
    expect(page.locator("#table-reliability tbody tr").nth(1)).to_contain_text("quality")
    with page.expect_download() as download:
        page.locator("#reliability .csv a").click()
    assert download.value.suggested_filename.startswith("shift-reliability-")
    text = Path(download.value.path()).read_text()
    assert text.splitlines()[0].startswith('"criterion","n","accuracy"') and "quality" in text  # every text cell quoted
    page.locator("input[name=ci]").check()  # the 95% intervals toggle: a column beside the mean difference
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#table-reliability thead")).to_contain_text("Mean difference 95% interval")
    expect(page.get_by_role("checkbox", name="95% intervals")).to_be_checked()


def test_a_page_restricted_to_some_models(page, login, shift):
    login("res", "pw-12345")
    page.goto("/projects/shift/reports/reliability/?a=cohort:docs&b=judge:j&by=model")
    expect(page.locator("#table-reliability tbody tr")).to_have_count(4)
    chooser = page.locator("form.subset-form select[name=models]")
    expect(chooser.locator("option")).to_have_count(3)  # the project's models, listed when the page opens
    chooser.select_option(["m0", "m2"])
    page.locator("form.subset-form").get_by_role("button", name="Apply").click()
    expect(page.locator("#model-subset")).to_have_text("Models used: m0, m2")
    expect(page.locator("#table-reliability tbody tr")).to_have_count(3)  # pooled, m0, m2
    expect(page.locator("select[name=by]")).to_have_value("model")  # the page's own parameters kept
    page.reload()  # the choice lives in the address, so a view can be shared
    expect(page.locator("form.subset-form select[name=models]")).to_have_values(["m0", "m2"])
    expect(page.locator("#table-reliability tbody tr")).to_have_count(3)


def test_source_lists_are_full_when_a_page_first_opens(page, login, shift):
    login("res", "pw-12345")
    for report, name in (("coverage", "source"), ("reliability", "a"), ("scores", "source"), ("agreement", "b")):
        page.goto(f"/projects/shift/reports/{report}/")
        options = page.locator(f"select[name={name}] option[value]:not([value=''])")
        expect(options).to_contain_text(["cohort:docs", "judge:j", "gold"])  # from the project, not from a result


def test_the_scores_page_applies_a_length_penalty(page, login, shift):
    login("res", "pw-12345")
    page.goto("/projects/shift/reports/scores/?source=judge:j")
    rows = page.locator("#table-by_model tbody tr")
    expect(rows).to_have_count(3)
    before = page.locator("#table-responses tbody tr").first.locator("td").nth(3).inner_text()
    page.locator("input[name=penalty_free]").fill("1")  # every answer has 2 words: the full 0.5 off
    page.locator("input[name=penalty_cap]").fill("2")
    page.locator("input[name=penalty_at_cap]").fill("0.5")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#scores h2")).to_contain_text("length penalty 0.5 at 2 words")
    after = page.locator("#table-responses tbody tr").first.locator("td").nth(3).inner_text()
    assert float(after) == pytest.approx(max(0.0, float(before) - 0.5))
    page.locator("input[name=ci]").check()  # the 95% intervals toggle
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#table-by_model thead")).to_contain_text("Mean score 95% interval")
    expect(page.locator("#table-by_model tbody tr").first.locator("td").nth(3)).to_contain_text("–")
    expect(page.locator("input[type=number][name=penalty_cap]")).to_have_value("2")  # the choice stays in the boxes
    page.locator("input[type=number][name=penalty_cap]").fill("")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#report")).to_contain_text("the length penalty needs cap")
