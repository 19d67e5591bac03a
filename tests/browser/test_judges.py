"""A researcher starts a baseline judge run from the project page's judge section, watches it
finish (htmx swap of the runs table), then opens the side-by-side page of a response."""
from django.contrib.auth import get_user_model

from annotation.models import Project, Response
from grading.bundles import bundle_import
from grading.models import Judge
from tests.bundles import write_bundle
from tests.roles import grant


def test_judge_section_runs_a_baseline_and_side_by_side_shows_it(page, login, transactional_db, tmp_path):
    bundle_import(path=write_bundle(tmp_path / "bundle"))
    Judge.objects.create(project_id=Response.objects.get(external_id="r1").project_id, name="lexical", backend=Judge.BASELINE)
    grant(get_user_model().objects.create_user(username="res", password="pw-12345"), Project.objects.get(slug="mini"))
    login("res", "pw-12345")

    page.goto("/projects/mini/")
    page.get_by_role("tab", name="Judges").click()
    section = page.locator("#project-judges")
    assert "lexical" in section.locator(".judge-list").inner_text()
    assert section.locator('.judge-list li[data-judge="lexical"] .badge.baseline').inner_text() == "baseline"
    assert "No runs yet." in section.locator("#judge-runs").inner_text()

    section.locator("#judge-run-form select[name=judge]").select_option(label="lexical (baseline, anonymized)")
    section.locator("#judge-run-form button[type=submit]").click()
    row = page.locator("#judge-runs tr[data-status=finished]")
    row.wait_for()
    assert "11 / 11" in row.inner_text()
    assert row.locator(".progress > span").get_attribute("style").replace(" ", "") == "width:100%"
    assert page.url.endswith("/projects/mini/#tab-judges")  # swapped in place, no navigation

    section.locator(".side-by-side-lookup input[name=response]").fill("r1")
    section.locator(".side-by-side-lookup button").click()
    page.wait_for_url("**/side-by-side/")
    table = page.locator("#side-by-side")
    headers = table.locator("thead th").all_inner_texts()
    assert any("group-1" in h for h in headers) and any("judge-a" in h for h in headers)
    assert any("lexical" in h and "baseline" in h for h in headers)
    ecg = table.locator('tr[data-criterion="c1-ecg"]')
    assert ecg.locator("td").count() == 4  # two cohorts, the imported judge, the baseline
    assert "met" in ecg.locator("td").nth(3).inner_text()
    assert page.locator("a", has_text="Bias report").get_attribute("href") == "/projects/mini/reports/bias/"
