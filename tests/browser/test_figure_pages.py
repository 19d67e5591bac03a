"""The figure pages in Chromium (issue 25, point 2): Stability, Pairwise agreement, Cross-grader and
the coverage page's stratum heatmaps draw their Vega-Lite charts with axis titles and legends; the
Verbosity page of a project with too few responses explains why it is empty. Screenshots: one per
page in the screenshots folder."""
import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from grading.models import Judge
from tests.grading.reports.conftest import add_judgments
from tests.roles import grant


@pytest.fixture
def researcher(transactional_db, mini_project):
    from django.core.cache import cache

    cache.clear()
    grant(get_user_model().objects.create_user(username="researcher", password="pw-12345"), mini_project, "viewer")
    judge = Judge.objects.create(project=mini_project, name="mc", model="m", samples=2, temperature=0.7)
    add_judgments(judge, [
        ("r1", "c1-ecg", 0, "met", None, None, True), ("r1", "c1-ecg", 1, "not_met", None, None, True),
        ("r2", "c1-ecg", 0, "met", None, None, True), ("r2", "c1-ecg", 1, "met", None, None, True),
        ("r3", "tone", 0, None, "ok", 0.5, True), ("r3", "tone", 1, None, "good", 1.0, True),
    ])
    return mini_project


def _axis_titles(chart) -> list[str]:
    return [(t or "").strip() for t in chart.locator("svg g.role-axis-title text").all_text_contents()]


@pytest.mark.parametrize("path, section, titles, legend", [
    ("stability/", "#stability-cells", {"criterion", "target model"}, "μ (mean over samples)"),
    ("pairwise/?min_n=0", "#pairwise-annotators", {"MF1 (macro F1 of met / not met)", "annotator"}, None),
    ("cross-grader/?a=cohort:group-1&b=judge:judge-a", "#cross-grader-rates",
     {"criteria marked met (% of paired binary decisions)", "model"}, "judge:judge-a"),
    ("coverage/", "#strata", {"difficulty", "model (overall CACS)"}, "points vs overall CACS@2"),
    ("coverage/", "#case-accuracy", {"case-level rubric accuracy (%)", "cases"}, "k = 2 of"),
    ("bias/", "#bias-anonymized", {"judge", "graded model"}, "bias (points)"),
])
def test_the_figure_pages_draw_their_charts(page, login, researcher, screenshots, path, section, titles, legend):
    login("researcher", "pw-12345")
    page.goto(f"/projects/mini/reports/{path}")
    charts = page.locator(f"{section} figure.chart .vega-chart")
    expect(charts.first).to_have_attribute("data-drawn", "yes")
    first = charts.first
    assert titles <= set(_axis_titles(first))
    if legend:
        expect(first.locator("svg g.role-legend")).to_contain_text(legend)
    expect(page.locator(f"{section} table.report-table th abbr.term").first).to_have_attribute("title", re.compile(r".+"))
    page.locator(section).screenshot(path=str(screenshots / f"figures-{path.split('/')[0]}-{section[1:]}.png"))


def test_an_empty_figure_page_says_why(page, login, researcher, screenshots):
    login("researcher", "pw-12345")
    page.goto("/projects/mini/reports/verbosity/")
    expect(page.locator("#verbosity-empty")).to_contain_text("at least three model-authored responses")
    page.screenshot(path=str(screenshots / "figures-verbosity-empty.png"), full_page=True)


def test_the_human_human_line_is_drawn_over_the_mf1_bars_only(page, login, researcher, screenshots):
    """ClinConsensus Fig. 4: the human–human MF1 is a dashed line on the MF1 chart; the κ chart beside
    it has bars and no line (κ is another scale)."""
    login("researcher", "pw-12345")
    page.goto("/projects/mini/reports/judges/")
    charts = page.locator("figure.chart .vega-chart")
    mf1, kappa = charts.nth(0), charts.nth(1)
    expect(mf1).to_have_attribute("data-drawn", "yes")  # each chart is drawn on its own: wait for both
    expect(kappa).to_have_attribute("data-drawn", "yes")
    assert "MF1 (macro F1 of met / not met)" in _axis_titles(mf1) and "Cohen's kappa" in _axis_titles(kappa)
    expect(mf1.locator("svg g.mark-rule.role-mark line")).to_have_count(1)
    expect(mf1.locator("svg g.mark-text.role-mark").last).to_contain_text("human–human")
    expect(kappa.locator("svg g.mark-rule.role-mark line")).to_have_count(0)
    assert "human–human" not in kappa.inner_text()
    expect(kappa.locator("svg g.mark-rect.role-mark path").first).to_be_visible()  # its bars are there
    page.locator("figure.chart").nth(0).screenshot(path=str(screenshots / "figures-judges-mf1.png"))
    page.locator("figure.chart").nth(1).screenshot(path=str(screenshots / "figures-judges-kappa.png"))


@pytest.fixture
def healthbench_reader(transactional_db, tmp_path):
    from django.core.cache import cache

    from annotation.models import Project
    from tests.grading import test_healthbench as hb

    cache.clear()
    hb._import(hb.files.__wrapped__(tmp_path))
    grant(get_user_model().objects.create_user(username="hb-reader", password="pw-12345"), Project.objects.get(slug="hb"),
          "viewer")


def test_healthbench_draws_scores_by_theme_and_axis(page, login, healthbench_reader, screenshots):
    login("hb-reader", "pw-12345")
    page.goto("/projects/hb/reports/healthbench/?ci=1")
    for section, family in (("#healthbench-example-tags", "theme"), ("#healthbench-rubric-tags", "axis")):
        chart = page.locator(f"{section} figure.chart .vega-chart")
        expect(chart).to_have_attribute("data-drawn", "yes")
        assert {family, "HealthBench score (clipped mean, 0–1)"} <= set(_axis_titles(chart))
        expect(chart.locator("svg g.role-legend")).to_contain_text("model-b")
    page.locator("#healthbench-rubric-tags").screenshot(path=str(screenshots / "figures-healthbench-axes.png"))
