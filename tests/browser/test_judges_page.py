"""The judges page as a manager sees it (issue 11): the base URL and key fields say what this
deployment allows, the new settings are there, and a judge aimed elsewhere is refused next to
its field; a screenshot is kept for looking at (var/screenshots/judges_page.png)."""
from pathlib import Path

from django.conf import settings

from annotation.models import Project
from grading.bundles import bundle_import
from grading.models import Judge
from tests.roles import grant


def test_a_manager_sees_the_allowlists_and_a_refused_endpoint(page, login, transactional_db, mini_bundle,
                                                              django_user_model):
    bundle_import(path=mini_bundle)
    project = Project.objects.get(slug="mini")
    grant(django_user_model.objects.create_user("boss", password="pw-boss-1"), project, "manager")
    login("boss", "pw-boss-1")
    page.goto(f"/projects/{project.slug}/judges/")
    form = page.locator("form:has(input[name='judge-base_url'])")
    assert "Must start with one of: http://127.0.0.1, http://localhost, http://[::1]" in form.inner_text()
    assert form.locator("select[name='judge-reasoning_effort']").is_visible()
    assert form.locator("input[name='judge-max_tokens']").input_value() == "1024"
    form.locator("input[name='judge-name']").fill("outside")
    form.locator("input[name='judge-model']").fill("gpt-x")
    form.locator("input[name='judge-base_url']").fill("http://169.254.169.254/v1")
    form.locator("button[type=submit]").click()
    page.wait_for_load_state("networkidle")
    assert "is not under an endpoint this deployment allows" in page.locator("body").inner_text()
    assert not Judge.objects.filter(name="outside").exists()
    shots = Path(settings.BASE_DIR) / "var" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "judges_page.png"), full_page=True)
