"""The "95% intervals" toggle in Chromium (issue 14, point 5) on the judges, bias, reliability and
traits pages of projects with several cases: ticking it shows the interval columns with real
intervals ("low – high") beside their figures. Screenshots: /tmp/shots/intervals-PAGE.png."""
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Project
from grading.bundles import bundle_import
from tests.bundles import write_bundle
from tests.grading.reports.test_intervals_all import bundle, ruler_parts
from tests.roles import grant

SHOTS = Path("/tmp/shots")
INTERVAL = re.compile(r"-?\d+\.\d{3} – -?\d+\.\d{3}")


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
    ("/projects/cis/reports/judges/", "", "#table-positive_rates", "positive_rate 95% CI"),
    ("/projects/cis/reports/bias/", "?condition=anonymized", "#table-anonymized_scores", "m1 95% CI"),
    ("/projects/cis/reports/reliability/", "?a=cohort:solo&b=judge:k&by=model", "#table-reliability", "accuracy 95% CI"),
    ("/projects/ruler/reports/traits/", "?source=judge:j&reference=cohort:docs", "#table-traits", "qwk 95% CI"),
])
def test_the_toggle_shows_intervals_beside_their_figures(page, login, projects, path, query, table, column):
    SHOTS.mkdir(exist_ok=True)
    login("res", "pw-12345")
    page.goto(path + query)
    assert page.locator(f"{table} th:has-text('{column}')").count() == 0
    page.check("form.report-params input[type=checkbox][name=ci]")
    page.click("form.report-params >> text=Show")
    header = page.locator(f"{table} th:has-text('{column}')")
    header.wait_for()
    index = page.locator(f"{table} th").all_inner_texts().index(column)
    cells = page.locator(f"{table} tbody tr td:nth-child({index + 1})").all_inner_texts()
    assert any(INTERVAL.fullmatch(text) for text in cells), cells
    page.screenshot(path=str(SHOTS / f"intervals-{path.rstrip('/').rsplit('/', 1)[-1]}.png"), full_page=True)
