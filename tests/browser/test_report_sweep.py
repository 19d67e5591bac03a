"""Every report page of every demo project, opened by a manager in Chromium (issue 25): the page list
comes from the registry, the projects from ``load_demo`` itself (its bundles made small, as the
snapshot and crawler tests make them). For each page the sweep checks that

- a page with a result draws at least one chart, each with a value axis (ticks and a title) and a
  legend wherever it colours more than one series or by a colour scale;
- every chooser (menu, search list, group of boxes) is filled when the page opens;
- a choice made in a chooser and shown survives a reload (on one project per page: see
  ``_keeps_choices``);
- a page without data says why in a sentence (an ``empty-state``), never an error line or a traceback;
- no request leaves the app's own host;

and keeps a full-page screenshot in ``var/screenshots/reports/<project>/<page>.png`` for a person to
look at. Findings of one project are gathered and reported together, so one run lists them all.
One test per project: xdist spreads them, and each loads its own demo into its own database.
"""
import io
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from playwright.sync_api import expect

from tests.browser.conftest import settled
from tests.grading.reports.test_report_snapshots import _small_clinical, _trimmed, _trimmed_charm100
from tests.roles import grant

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots" / "reports"
PASSWORD = "pw-sweep-1"
# A page computes in the request (eager Celery); on a loaded machine that takes a while.
PAGE_TIMEOUT_MS = 90_000
ERROR_WORDS = ("Traceback", "Server Error", "Internal Server Error", "Exception Value")


def _demo_slugs() -> list[str]:
    """The projects ``load_demo`` loads, as it names them (its module's slug constants and the two
    datasets it imports under their own names)."""
    from grading.management.commands import load_demo

    return sorted({load_demo.CLINICAL, load_demo.WORKSPACE, load_demo.TRAITS, load_demo.NOT_STARTED, "charm-100", "devai"})


def _load_demo() -> None:
    from grading.management.commands import load_demo

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(load_demo, "generate_clinical", _small_clinical)
        patch.setattr(load_demo, "charm100_import", _trimmed_charm100)
        patch.setattr(load_demo, "convert_devai", _trimmed(load_demo.convert_devai))
        call_command("load_demo", "--json", stdout=io.StringIO())


@pytest.fixture
def demo_manager(transactional_db):
    """The small demo in this test's database and a manager of every project in it."""
    from annotation.models import Project

    cache.clear()  # report results cached by an earlier test name rows that are gone
    _load_demo()
    manager = get_user_model().objects.create_user("sweep-manager", password=PASSWORD)
    for project in Project.objects.all():
        grant(manager, project, "manager")
    yield sorted(Project.objects.values_list("slug", flat=True))
    cache.clear()


def _colour_legend_expected(spec: dict) -> bool:
    """Whether a Vega-Lite spec colours by a scale (a quantitative field) or by a field with more
    than one value in its data, with the legend left on: then the chart must draw a legend."""
    def walk(node: dict, data: list):
        data = (node.get("data") or {}).get("values", data)
        colour = (node.get("encoding") or {}).get("color") or {}
        if colour.get("field") and colour.get("legend", {}) is not None:
            yield colour, data
        for child in node.get("layer", []):
            yield from walk(child, data)
        if "spec" in node:
            yield from walk(node["spec"], data)

    for colour, data in walk(spec, []):
        if colour.get("type") == "quantitative":
            return True
        if len({str(row.get(colour["field"])) for row in data if isinstance(row, dict)}) > 1:
            return True
    return False


def _check_charts(page, problems: list[str], where: str) -> None:
    figures = page.locator("#report figure.chart")
    n = figures.count()
    if n == 0:
        problems.append(f"{where}: a result without any chart")
        return
    expect(page.locator("#report .vega-chart[data-drawn=yes]")).to_have_count(n, timeout=PAGE_TIMEOUT_MS)
    for i in range(n):
        figure = figures.nth(i)
        title = figure.locator("figcaption").inner_text()
        svg = figure.locator(".vega-chart svg")
        if svg.count() == 0:
            problems.append(f"{where}: chart {title!r} drew no SVG")
            continue
        axes = svg.locator("g.role-axis")
        with_ticks_and_title = [
            j for j in range(axes.count())
            if axes.nth(j).locator("g.role-axis-tick line, g.role-axis-tick path").count()
            and any(t.strip() for t in axes.nth(j).locator("g.role-axis-title text").all_text_contents())]
        if not with_ticks_and_title:
            problems.append(f"{where}: chart {title!r} has no value axis with ticks and a title")
        spec = json.loads(figure.locator("script.vega-spec").text_content())
        if _colour_legend_expected(spec) and svg.locator("g.role-legend").count() == 0:
            problems.append(f"{where}: chart {title!r} colours several series or by a scale but draws no legend")


def _check_choosers(page, problems: list[str], where: str) -> None:
    """No chooser opens empty: a menu with no option that has a value, a search box whose list has
    no option, a group of boxes without a box."""
    for form in page.locator("form.report-params").all():
        for select in form.locator("select").all():
            values = [v for v in select.locator("option").evaluate_all("os => os.map(o => o.value)") if v]
            if not values:
                problems.append(f"{where}: the menu {select.get_attribute('name')!r} opens empty")
        for box in form.locator("input[list]").all():
            if page.locator(f"datalist#{box.get_attribute('list')} option").count() == 0:
                problems.append(f"{where}: the list of {box.get_attribute('name')!r} opens empty")
        for fieldset in form.locator("fieldset").all():
            if fieldset.locator("input, select").count() == 0:
                problems.append(f"{where}: the group {fieldset.locator('legend').inner_text()!r} has no control")


def _choose_something(page) -> tuple[str, list[str]] | None:
    """Change one menu of the page's parameters (else the model subset's) to a value it does not
    hold; return (its name, the values now chosen) after submitting its form, or None."""
    for form in [page.locator("form.report-params:not(.subset-form)"), page.locator("form.subset-form")]:
        for select in form.first.locator("select").all() if form.count() else []:
            options = [v for v in select.locator("option").evaluate_all("os => os.map(o => o.value)") if v]
            current = select.evaluate("s => Array.from(s.selectedOptions).map(o => o.value)")
            other = [v for v in options if v not in current]
            if not other:
                continue
            name = select.get_attribute("name")
            select.select_option(other[-1])
            chosen = select.evaluate("s => Array.from(s.selectedOptions).map(o => o.value)")
            form.first.locator("button[type=submit]").first.click()
            settled(page)
            return name, chosen
    return None


# The projects with labels and judges, whose pages have something to choose; each report page's
# choice is made and reloaded on one of them, the pages dealt out in turn (``_keeps_choices``).
CHOOSING_PROJECTS = ("clinical-demo", "clinical-traits", "charm-100", "devai")
CHOOSING_PROJECT_OF: dict[str, str] = {}  # page key -> its project, where the turn would give one with no choice


def _keeps_choices(slug: str, key: str) -> bool:
    """Whether the sweep of ``slug`` makes a choice on page ``key`` and reloads it. The choice and the
    reload open the page twice more (its result computed again with other parameters, its charts
    drawn again in the browser), about two fifths of a sweep, and what they check is the page's own
    code (its form keeps what was chosen), the same on every project: so each page is checked on one
    project that has something to choose, the pages dealt out among those projects in turn so that
    their sweeps take about as long. A page added to the registry is dealt too; if its project
    offers nothing to choose there, the sweep says so (``CHOOSING_PROJECT_OF`` names another)."""
    from grading.reports.registry import pages

    if key in CHOOSING_PROJECT_OF:
        return slug == CHOOSING_PROJECT_OF[key]
    keys = [k for k, _report in pages()]
    return slug == CHOOSING_PROJECTS[keys.index(key) % len(CHOOSING_PROJECTS)]


def _wait_for_result(page) -> None:
    """The page has its result, or its reason for having none (no polling paragraph left)."""
    settled(page)
    expect(page.locator("#report [hx-get]")).to_have_count(0, timeout=PAGE_TIMEOUT_MS)
    settled(page)


@pytest.mark.parametrize("slug", _demo_slugs())
def test_every_report_page_of_a_demo_project(page, login, demo_manager, slug):
    from grading.reports.registry import pages

    assert slug in demo_manager  # the demo still loads this project
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(urlsplit(request.url).netloc)
            if urlsplit(request.url).scheme in ("http", "https", "ws", "wss") else None)
    page_errors: list[str] = []
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))
    login("sweep-manager", PASSWORD)
    own_host = urlsplit(page.url).netloc
    folder = SCREENSHOTS / slug
    folder.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    for key, _report in pages():
        where = f"{slug}/{key}"
        url = f"/projects/{slug}/reports/{key}/"
        response = page.goto(url)
        if response is None or response.status != 200:
            problems.append(f"{where}: answered {response.status if response else 'nothing'}")
            continue
        _wait_for_result(page)
        text = page.locator("body").inner_text()
        if any(word in text for word in ERROR_WORDS):
            problems.append(f"{where}: shows a traceback or a server error")
        error = page.locator("#report-error")
        has_result = page.locator("#report-excluded").count() > 0
        if error.count():
            problems.append(f"{where}: an error line instead of an explanation: {error.inner_text()!r}")
        elif has_result:
            empty = page.locator("#report .empty-state")
            if page.locator("#report figure.chart").count() or not empty.count():
                _check_charts(page, problems, where)
        else:
            problems.append(f"{where}: neither a result nor an explanation")
        _check_choosers(page, problems, where)
        page.screenshot(path=str(folder / f"{key}.png"), full_page=True)

        if not _keeps_choices(slug, key):
            continue
        chosen = _choose_something(page)
        if chosen is None:
            problems.append(f"{where}: nothing to choose, so no check that a choice survives a reload "
                            f"(name another project for {key!r} in CHOOSING_PROJECT_OF)")
            continue
        name, values = chosen
        _wait_for_result(page)
        page.reload()
        _wait_for_result(page)
        kept = page.locator(f"form.report-params select[name={name}]").first.evaluate(
            "s => Array.from(s.selectedOptions).map(o => o.value)")
        if kept != values:
            problems.append(f"{where}: chose {values} in {name!r}, after a reload it shows {kept}")
    foreign = sorted(h for h in hosts if h != own_host)
    if foreign:
        problems.append(f"{slug}: requests to other hosts: {foreign}")
    if page_errors:
        problems.append(f"{slug}: script errors: {page_errors}")
    assert not problems, "\n".join(problems)
