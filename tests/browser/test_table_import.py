"""A manager uploads a CSV on the project page, says on the column step which column is which field
(the menus start from the headers' names), and the import job brings the cases and responses in
(issue 24 point 4). Screenshots are kept for looking at (table_columns.png, table_imported.png in
the screenshots folder, see tests/browser/conftest.py)."""
import csv
import io

from playwright.sync_api import expect

from annotation.models import Case, Project, Response
from grading.bundles import bundle_import
from tests.browser.conftest import settled
from tests.roles import grant

ROWS = [
    ["Case", "Question", "Engine", "Output", "Ward"],
    ["n1", "Headache for a week, what should I do?", "model-a", "See a doctor if it persists.", "neurology"],
    ["n1", "Headache for a week, what should I do?", "model-b", "Sleep more.", "neurology"],
    ["n2", "A rash after a new soap.", "model-a", "Stop the soap; see a doctor if it spreads.", "dermatology"],
]


def _csv() -> bytes:
    out = io.StringIO()
    csv.writer(out).writerows(ROWS)
    return out.getvalue().encode("utf-8")


def test_a_manager_maps_the_columns_of_a_csv_and_imports_it(page, login, transactional_db, mini_bundle, django_user_model,
                                                            settings, tmp_path, screenshots):
    settings.EVALSITE_JOBS_DIR = str(tmp_path / "jobs")
    bundle_import(path=mini_bundle)
    project = Project.objects.get(slug="mini")
    grant(django_user_model.objects.create_user("boss", password="pw-boss-1"), project, "manager")
    login("boss", "pw-boss-1")
    page.goto("/projects/mini/#project-data")  # the link to a part opens its tab
    form = page.locator("#import-form")
    form.locator("input[type=file]").set_input_files(files=[{"name": "headache.csv", "mimeType": "text/csv",
                                                              "buffer": _csv()}])
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    settled(page)

    expect(page.locator("h1")).to_contain_text("Choose columns")
    table = page.locator("fieldset.column-table")
    expect(table.locator("legend")).to_have_text("headache.csv")
    expect(table.locator("select[name='0.table']")).to_have_value("responses")
    expect(table.locator("select[name='0.case_id']")).to_have_value("Case")  # matched by their usual names
    expect(table.locator("select[name='0.prompt']")).to_have_value("Question")
    expect(table.locator("select[name='0.text']")).to_have_value("Output")
    expect(table.locator("select[name='0.model']")).to_have_value("")  # "Engine" is no usual name for it
    expect(table.locator("ul.error")).to_contain_text("no column for model")
    expect(table.locator("table.column-sample tbody tr")).to_have_count(3)
    model = table.locator("select[name='0.model']")
    model.evaluate("menu => { menu.kept = true; }")
    model.select_option("Engine")
    expect(table.locator("#problems-0 li")).to_have_count(0)  # what was missing is gone
    assert model.evaluate("menu => menu.kept === true")  # only the list was swapped: the menu is the same element
    page.screenshot(path=str(screenshots / "table_columns.png"), full_page=True)
    assert not Case.objects.filter(external_id="n1").exists()  # nothing until Import

    with page.expect_navigation():
        page.locator("#start-import").click()
    settled(page)
    status = page.locator("#project-data td.job-status").first
    expect(status).to_have_attribute("data-status", "finished")
    expect(status).to_contain_text("2 cases")
    expect(status).to_contain_text("3 responses")
    page.locator("#project-data").screenshot(path=str(screenshots / "table_imported.png"))
    assert list(Response.objects.filter(case__external_id__in=["n1", "n2"]).order_by("position")
                .values_list("external_id", "model")) == [("n1:model-a", "model-a"), ("n1:model-b", "model-b"),
                                                          ("n2:model-a", "model-a")]
    assert Case.objects.get(external_id="n2").metadata == {"Ward": "dermatology"}
