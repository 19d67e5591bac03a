"""A researcher opens each of the five report pages of the ``mini`` project in Chromium
and sees real figures: numbers computed from the labels, SVG charts and CSV links."""
import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from grading.models import Judge
from tests.grading.reports.conftest import add_judgments
from tests.roles import grant


@pytest.fixture
def researcher(transactional_db, mini_project):
    from django.core.cache import cache

    cache.clear()  # the local-memory cache outlives the database of earlier tests
    grant(get_user_model().objects.create_user(username="researcher", password="pw-12345"), mini_project, "manager")
    judge = Judge.objects.create(project=mini_project, name="judge-b", backend="replay", model="model-a", condition="anonymized")
    add_judgments(judge, [
        ("r1", "c1-ecg", 0, "met", None, None, True), ("r1", "c1-call", 0, "met", None, None, True),
        ("r1", "c1-abx", 0, "not_met", None, None, True), ("r2", "c1-ecg", 0, "met", None, None, True),
        ("r2", "c1-call", 0, "not_met", None, None, True), ("r2", "c1-abx", 0, "not_met", None, None, True),
    ])
    return mini_project


def test_researcher_opens_every_report(page, login, researcher, screenshots):
    login("researcher", "pw-12345")

    page.goto("/projects/mini/reports/agreement/")
    assert page.locator("h1").inner_text() == "Agreement"
    assert page.locator(".figure-mf1").inner_text() == f"{68 / 77:.3f}"
    charts = page.locator("#report figure.chart")
    assert charts.count() >= 3
    expect(page.locator("#report .vega-chart[data-drawn=yes]")).to_have_count(charts.count())  # drawn by Vega
    assert page.locator("#report .vega-chart svg g.role-axis").count() >= 2 * charts.count() - 1  # value and label axes
    assert page.locator("#report .vega-chart svg g.role-legend").count() >= 2
    assert page.locator("#report .vega-chart svg g.mark-rule.role-mark").count() >= 1  # human-human reference line

    # Each click navigates: wait for the new page's heading and figures, never read the old page's.
    page.click("nav.report-nav >> text=Coverage")
    expect(page.locator("h1")).to_have_text("Coverage")
    expect(page.locator(".figure-cacs")).to_have_text("25.0 %")
    expect(page.locator("#table-by_model tbody tr")).to_have_count(2)

    page.click("nav.report-nav >> text=Judges")
    expect(page.locator("h1")).to_have_text("Judges")
    expect(page.locator("#table-fidelity tbody tr")).to_have_count(6)  # 2 judges x (2 cohorts + gold)
    fidelity = page.locator("#table-fidelity tbody tr", has_text="judge:judge-b").filter(has_text="cohort:group-1")
    expect(fidelity).to_have_count(1)  # (the chart's caption says it too, but is hidden once the chart is drawn)
    page.check("input[type=checkbox][name=ci]")
    page.click("form.report-params >> text=Show")
    page.wait_for_selector("#table-positive_rates th:has-text('Met rate 95% interval')")
    assert page.locator("input[type=checkbox][name=ci]").is_checked()
    # mini's responses are all of case c1: nothing to resample, so the interval is an en dash
    assert page.locator("#table-positive_rates tbody tr").first.inner_text().split("\t")[3] == "–"
    page.screenshot(path=str(screenshots / "judges-intervals.png"), full_page=True)
    page.click("nav.report-nav >> text=Judges")

    page.click("nav.report-nav >> text=Bias")
    expect(page.locator("h1")).to_have_text("Bias")
    expect(page.locator("#bias-anonymized .vega-chart[data-drawn=yes]")).to_have_count(3)
    # consensus, μ ± σ and human-LLM heatmaps: the self-bias cell outlined in each, each with its colour legend
    assert page.locator('#bias-anonymized .vega-chart svg g.mark-rect.role-mark path[stroke-width="3"]').count() == 3
    assert page.locator("#bias-anonymized .vega-chart svg g.role-legend").count() == 3
    assert f"{0.4375 - 2 / 3:.3f}" in page.locator("#bias-anonymized").inner_text()

    page.click("nav.report-nav >> text=Calibration")
    # pooled + per model, for 2 cohorts and 2 judges: (1 + 3) * 2 + (1 + 2) + (1 + 2)
    expect(page.locator("h1")).to_have_text("Calibration")
    expect(page.locator("#table-verbosity tbody tr")).to_have_count(14)

    with page.expect_download() as download:
        page.click("#table-verbosity ~ p a, .csv a >> nth=0")
    assert download.value.suggested_filename.startswith("mini-calibration-")
