"""The routed-labelling page in Chromium (issue 28, point 2): without a design the cohort's labels count as a
uniform sample and the page plans a target width under both designs with its chart; the manager draws the
first routed budget from the page's form and sees the design, its chart and what is still needed.
Screenshots: routing-uniform.png and routing-routed.png in the screenshots folder."""
import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.models import Assignment, Cohort, Project
from demo.clinical import DEFAULT_COHORTS, DEFAULT_JUDGES, generate_clinical
from grading.bundles import bundle_import
from grading.models import RoutingDesign
from tests.roles import grant

JUDGE = DEFAULT_JUDGES[2].name


@pytest.fixture
def study(transactional_db, tmp_path):
    from django.core.cache import cache

    cache.clear()
    generate_clinical(tmp_path / "route", slug="route", n_cases=16, n_criteria=6, models=("gpt-4o", "llama-3-70b"),
                      human_answer_cases=0, cohorts=DEFAULT_COHORTS[:1], overlap=1, checker_share=0.0,
                      judges=DEFAULT_JUDGES[:4], seed=8)
    bundle_import(path=tmp_path / "route")
    project = Project.objects.get(slug="route")
    grant(get_user_model().objects.create_user(username="lead", password="pw-12345"), project, "manager")
    return project


def test_a_manager_plans_a_width_and_draws_the_first_routed_labels(page, login, study, screenshots):
    login("lead", "pw-12345")
    page.goto(f"/projects/route/reports/routing/?cohort=cohort:group-1&judge=judge:{JUDGE}&target_width=12")
    summary = page.locator("#routing-summary")
    expect(summary).to_contain_text("has no routing design")
    expect(page.locator("#routing-plan h2")).to_contain_text("12.0-point wide interval")
    expect(page.locator("#routing-needs")).to_contain_text("Uniform sampling")
    expect(summary.locator(".vega-chart svg g.mark-line.role-mark path")).to_have_count(2)  # the chart: uniform and routed lines
    page.screenshot(path=str(screenshots / "routing-uniform.png"), full_page=True)

    cohort = Cohort.objects.get(project=study, name="group-1")
    Assignment.objects.filter(cohort=cohort).delete()  # a cohort yet to be given work
    form = page.locator("#routing-extend form")
    form.locator("input[name=budget]").fill("10")
    form.locator("input[name=seed]").fill("5")
    form.get_by_role("button", name="Draw and assign").click()
    expect(page.locator(".messages, .message, [role=status]").first).to_contain_text("more responses drawn")
    expect(page.locator("#routing-design")).to_contain_text("Budget 10 responses in 1 round")
    design = RoutingDesign.objects.get(cohort=cohort)
    assert design.seed == 5 and design.budget == 10
    drawn = design.draws.filter(chosen_round=1).count()
    assert Assignment.objects.filter(cohort=cohort).count() == drawn * study.overlap
    expect(page.locator("#routing-design")).to_contain_text(f"drawn {drawn}")
    page.screenshot(path=str(screenshots / "routing-routed.png"), full_page=True)
