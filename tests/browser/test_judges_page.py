"""The judges page as a manager sees it (issue 11): the base URL and key fields say what this
deployment allows, the new settings are there, and a judge aimed elsewhere is refused next to
its field; a screenshot is kept for looking at (judges_page.png in the screenshots folder, see
tests/browser/conftest.py)."""
from annotation.models import Project
from grading.bundles import bundle_import
from grading.models import Judge
from tests.browser.conftest import settled
from tests.roles import grant


def _judges_page_as_manager(page, login, mini_bundle, django_user_model) -> None:
    bundle_import(path=mini_bundle)
    project = Project.objects.get(slug="mini")
    grant(django_user_model.objects.create_user("boss", password="pw-boss-1"), project, "manager")
    login("boss", "pw-boss-1")
    page.goto(f"/projects/{project.slug}/judges/")


def test_a_manager_sees_the_allowlists_and_a_refused_endpoint(page, login, transactional_db, mini_bundle,
                                                              django_user_model, screenshots):
    _judges_page_as_manager(page, login, mini_bundle, django_user_model)
    form = page.locator("form:has(input[name='judge-base_url'])")
    assert ("Must start with one of: http://127.0.0.1 (key OPENAI_API_KEY or JUDGE_TEST_KEY or LOCAL_KEY or "
            "MISSING_JUDGE_KEY), http://localhost (key") in form.inner_text()
    assert form.locator("select[name='judge-reasoning_effort']").is_visible()
    assert form.locator("input[name='judge-max_tokens']").input_value() == "1024"
    form.locator("input[name='judge-name']").fill("outside")
    form.locator("input[name='judge-model']").fill("gpt-x")
    form.locator("input[name='judge-base_url']").fill("http://169.254.169.254/v1")
    form.locator("button[type=submit]").click()
    settled(page)
    assert "is not under an endpoint this deployment allows" in page.locator("body").inner_text()
    assert not Judge.objects.filter(name="outside").exists()
    page.screenshot(path=str(screenshots / "judges_page.png"), full_page=True)


def test_a_manager_sets_a_rate_limit_then_changes_it_on_the_edit_page(page, login, transactional_db, mini_bundle,
                                                                       django_user_model, screenshots):
    """Issue 11, point 4: the limits are set when the judge is made and changed later on its
    edit page; the judge list says what applies (screenshot: judge_edit.png in the
    screenshots folder)."""
    _judges_page_as_manager(page, login, mini_bundle, django_user_model)
    form = page.locator("form:has(input[name='judge-base_url'])")
    form.locator("input[name='judge-name']").fill("paced")
    form.locator("input[name='judge-model']").fill("gpt-x")
    form.locator("input[name='judge-base_url']").fill("http://127.0.0.1:9/v1")
    form.locator("input[name='judge-requests_per_minute']").fill("500")
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    entry = page.locator("li[data-judge='paced']")
    assert "≤ 500 requests/min" in entry.inner_text()
    with page.expect_navigation():
        entry.get_by_role("link", name="Edit").click()
    assert page.locator("h1").inner_text() == "Edit judge paced"
    assert page.locator("input[name='requests_per_minute']").input_value() == "500"
    page.locator("input[name='requests_per_minute']").fill("120")
    page.locator("input[name='tokens_per_minute']").fill("30000")
    with page.expect_navigation():
        page.get_by_role("button", name="Save judge").click()
    assert "Judge paced saved." in page.locator("body").inner_text()
    assert "≤ 120 requests/min · ≤ 30000 tokens/min" in page.locator("li[data-judge='paced']").inner_text()
    assert Judge.objects.get(name="paced").settings == {"max_tokens": 1024, "timeout_seconds": 60.0, "json_mode": True,
                                                         "shuffle_options": False, "shuffle_seed": 0, "min_evidence": 0,
                                                         "requests_per_minute": 120, "tokens_per_minute": 30000}
    page.screenshot(path=str(screenshots / "judge_list_limits.png"), full_page=True)
    with page.expect_navigation():
        page.locator("li[data-judge='paced']").get_by_role("link", name="Edit").click()
    page.screenshot(path=str(screenshots / "judge_edit.png"), full_page=True)
