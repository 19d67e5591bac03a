"""The "95% intervals" toggle in Chromium (issue 14, point 5) on the judges, bias, reliability and
traits pages of projects with several cases: ticking it shows the interval columns with real
intervals ("low – high") beside their figures. Screenshots: intervals-PAGE.png in the screenshots folder.

Those intervals take seconds of bootstrap to compute, which the tests' eager Celery would do
inside the request the click sends, racing the browser's navigation timeout on a loaded machine.
So the test first asks for the very URL the ticked form submits through Django's test client (the
same view, the same cache, no clock), and the browser then finds the result computed."""
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Project
from grading.bundles import bundle_import
from tests.browser.conftest import settled
from tests.bundles import write_bundle
from tests.grading.reports.test_intervals_all import bundle, ruler_parts
from tests.roles import grant

INTERVAL = re.compile(r"-?\d+\.\d{3} – -?\d+\.\d{3}")
# The path and query string that the form holding the "95% intervals" box submits as it stands.
SUBMITTED_URL = """() => {
  const form = document.querySelector("form.report-params input[name=ci]").form;
  return new URL(form.action).pathname + "?" + new URLSearchParams(new FormData(form)).toString();
}"""


@pytest.fixture
def projects(transactional_db, tmp_path):
    from django.core.cache import cache

    cache.clear()
    bundle_import(path=bundle(tmp_path / "cis"))
    bundle_import(path=write_bundle(tmp_path / "ruler", ruler_parts()))
    user = get_user_model().objects.create_user(username="res", password="pw-12345")
    for slug in ("cis", "ruler"):
        grant(user, Project.objects.get(slug=slug), "viewer")


@pytest.mark.parametrize("path, query, table, column", [
    ("/projects/cis/reports/judges/", "", "#table-positive_rates", "Met rate 95% interval"),
    ("/projects/cis/reports/bias/", "?condition=anonymized", "#table-anonymized_scores", "m1 95% interval"),
    ("/projects/cis/reports/reliability/", "?a=cohort:solo&b=judge:k&by=model", "#table-reliability", "Rubric accuracy (%) 95% interval"),
    ("/projects/ruler/reports/traits/", "?source=judge:j&reference=cohort:docs", "#table-traits", "Quadratic-weighted κ 95% interval"),
])
def test_the_toggle_shows_intervals_beside_their_figures(page, login, projects, path, query, table, column,
                                                        screenshots):
    login("res", "pw-12345")
    page.goto(path + query)
    assert page.locator(f"{table} th:has-text('{column}')").count() == 0
    page.check("form.report-params input[type=checkbox][name=ci]")
    submitted = page.evaluate(SUBMITTED_URL)
    assert "ci=" in submitted, submitted
    viewer = Client()
    viewer.force_login(get_user_model().objects.get(username="res"))
    computed = viewer.get(submitted)  # computed and cached
    assert computed.status_code == 200 and column in computed.content.decode(), computed.content.decode()[-3000:]
    page.click("form.report-params >> text=Show")
    header = page.locator(f"{table} th:has-text('{column}')")
    header.wait_for()
    settled(page)  # the header is there as soon as it is parsed: the rest of the table only once the page has loaded
    index = page.locator(f"{table} th").all_inner_texts().index(column)
    cells = page.locator(f"{table} tbody tr td:nth-child({index + 1})").all_inner_texts()
    assert any(INTERVAL.fullmatch(text) for text in cells), cells
    page.screenshot(path=str(screenshots / f"intervals-{path.rstrip('/').rsplit('/', 1)[-1]}.png"), full_page=True)
