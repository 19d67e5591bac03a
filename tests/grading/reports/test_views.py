"""Report pages through the test client: staff only, real figures of the ``mini``
project, CSV downloads, htmx partials, links from the project page and the admin index,
and query counts that do not grow with the data once a page is computed."""
import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.reports.registry import page_get, pages
from tests.grading.reports.conftest import add_judgments
from tests.roles import grant

PAGES = [key for key, _ in pages()]  # every page the registry declares


def test_the_menu_keeps_its_order():
    assert PAGES[:8] == ["agreement", "coverage", "judges", "bias", "calibration", "traits", "reliability", "scores"]


@pytest.mark.parametrize("page", PAGES)
def test_pages_need_a_role_in_the_project(client, mini_project, page):
    url = reverse(f"report-{page}", args=["mini"])
    response = client.get(url)  # anonymous: the site's own login page, never the admin's
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    staff = get_user_model().objects.create_user(username="doc", password="pw-12345", is_staff=True)
    client.force_login(staff)
    assert client.get(url).status_code == 404  # is_staff alone grants nothing in a project


def test_agreement_page_shows_the_figures(staff_client, mini_project):
    html = staff_client.get(reverse("report-agreement", args=["mini"])).content.decode()
    assert "group-2 vs cohort:group-1" in html or "cohort:group-2 vs cohort:group-1" in html
    assert f"{68 / 77:.3f}" in html  # MF1 of the two cohorts
    assert 'class="vega-spec"' in html and "human–human" in html  # a chart, drawn in the browser
    assert "n = 9" in html  # paired decisions of the primary comparison
    assert "Case-level MF1 (n = 3" in html


def test_low_agreement_tail_links_to_the_responses(staff_client, mini_project):
    from django.contrib.auth import get_user_model

    from annotation.models import ProjectRole, Response

    # an adjudicator (the side-by-side page is theirs and the managers'; a viewer gets no links)
    ProjectRole.objects.filter(user=get_user_model().objects.get(username="researcher")).update(role="adjudicator")

    html = staff_client.get(reverse("report-agreement", args=["mini"]) + "?a=cohort:group-1&b=judge:judge-a").content.decode()
    # judge-a vs group-1 per (model, case): r1 MF1 (2/3 + 4/5)/2 ... r2 all not met by the judge
    r2 = Response.objects.get(external_id="r2")
    assert f"/responses/{r2.pk}/side-by-side/" in html
    assert reverse("admin:annotation_response_change", args=[r2.pk]) in html  # staff see the admin link
    assert ">r2<" in html and "case_level" in html


def test_a_viewer_sees_no_links_they_cannot_follow(client, mini_project):
    from django.contrib.auth import get_user_model

    from tests.roles import grant

    viewer = get_user_model().objects.create_user(username="reader", password="pw-12345")
    grant(viewer, mini_project, "viewer")
    client.force_login(viewer)
    html = client.get(reverse("report-agreement", args=["mini"]) + "?a=cohort:group-1&b=judge:judge-a").content.decode()
    assert ">r2<" in html and "/side-by-side/" not in html and "/admin/" not in html


def test_pages_render_real_figures(staff_client, mini_project, second_judge):
    coverage = staff_client.get(reverse("report-coverage", args=["mini"])).content.decode()
    assert "CACS@2" in coverage and "25.0 %" in coverage and 'class="vega-spec"' in coverage
    judges = staff_client.get(reverse("report-judges", args=["mini"])).content.decode()
    assert "judge:judge-b vs cohort:group-1" in judges and "Monte Carlo" in judges and 'class="vega-spec"' in judges
    bias = staff_client.get(reverse("report-bias", args=["mini"])).content.decode()
    assert '"self": true' in bias  # judge-b's own model is a target: outlined diagonal cell
    assert f"{0.4375 - 2 / 3:.3f}" in bias
    calibration = staff_client.get(reverse("report-calibration", args=["mini"])).content.decode()
    assert "Verbosity" in calibration and "cohort:group-1" in calibration


def test_tables_download_as_csv(staff_client, mini_project):
    response = staff_client.get(reverse("report-agreement", args=["mini"]) + "?format=csv&table=by_model")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["model", "n", "mf1", "cohen_kappa", "positive_rate_a", "positive_rate_b"]
    assert [r[0] for r in rows[1:]] == ["model-a", "model-b", "physician"]
    missing = staff_client.get(reverse("report-agreement", args=["mini"]) + "?format=csv&table=nope")
    assert missing.status_code == 404


def test_htmx_request_gets_the_report_partial(staff_client, mini_project):
    response = staff_client.get(reverse("report-coverage", args=["mini"]), HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="report">') and "<nav" not in html


def test_bad_source_is_reported_on_the_page(staff_client, mini_project):
    response = staff_client.get(reverse("report-agreement", args=["mini"]) + "?a=cohort:nobody&b=gold")
    assert response.status_code == 200
    assert "unknown cohort &#x27;nobody&#x27;" in response.content.decode()


def test_project_page_and_admin_index_link_the_reports(staff_client, mini_project):
    staff = get_user_model().objects.get(username="researcher")
    staff.is_superuser = True
    staff.save()
    project_page = staff_client.get(reverse("project-detail", args=["mini"])).content.decode()
    admin_index = staff_client.get(reverse("admin:index")).content.decode()
    for page in PAGES:
        url = reverse(f"report-{page}", args=["mini"])
        assert url in project_page and url in admin_index


@pytest.mark.parametrize("page", PAGES)
def test_query_count_does_not_grow_with_the_data(staff_client, mini_project, second_judge, page):
    url = reverse(f"report-{page}", args=["mini"])
    staff_client.get(url)  # computes and caches
    with CaptureQueriesContext(connection) as small:
        assert staff_client.get(url).status_code == 200
    judge = second_judge
    add_judgments(judge, [("r4", "c1-ecg", 0, "met", None, None, True), ("r3", "tone", 0, None, "ok", 0.5, True)])
    staff_client.get(url)
    with CaptureQueriesContext(connection) as large:
        assert staff_client.get(url).status_code == 200
    assert len(large) == len(small) <= 22  # (3 fill the choosers: cohorts, judges, models; 1 reads the role for row links;
    # the fingerprint reads the cohorts, counts their memberships and reads the routing designs' rounds)


@pytest.mark.parametrize("page", PAGES)
def test_default_params_are_what_the_views_use(staff_client, mini_project, page):
    """bench/reports.py and warm-up code compute pages with their declared default parameters; the
    views must read that very cache entry for a URL without a query."""
    from unittest import mock

    from grading.reports.tasks import page_result

    page_result(project=mini_project, page=page, params=page_get(page).page.default_params())
    with mock.patch("grading.reports.views.report_page_task") as task:
        assert staff_client.get(reverse(f"report-{page}", args=["mini"])).status_code == 200
    task.delay.assert_not_called()


def test_judges_page_monte_carlo_and_robustness_by_hand(mini_project):
    from grading.models import Judge
    from grading.reports.judges import judges_page

    judge = Judge.objects.create(project=mini_project, name="mc", model="m", samples=2, temperature=0.7)
    add_judgments(judge, [
        ("r1", "c1-ecg", 0, "met", None, None, True), ("r1", "c1-ecg", 1, "not_met", None, None, True),
        ("r1", "c1-call", 0, "met", None, None, True), ("r1", "c1-call", 1, "met", None, None, True),
        ("r3", "tone", 0, None, "ok", 0.5, True), ("r3", "tone", 1, None, "good", 1.0, True),
    ])
    result = judges_page(project=mini_project)
    by_cohort = {row[0]: row for row in result["tables"]["fidelity_by_cohort"]["rows"]}
    mf1 = {(r["a"], r["b"]): r["mf1"] for r in result["fidelity"]}
    a1, a2 = mf1[("cohort:group-1", "judge:judge-a")], mf1[("cohort:group-2", "judge:judge-a")]
    assert by_cohort["judge:judge-a"] == ["judge:judge-a", a1, a2, pytest.approx((a1 + a2) / 2)]
    stability = {row[0]: row for row in result["tables"]["stability"]["rows"]}
    # per kind, never mixed: binary r1/ecg sd(1, 0) = 0.7071, r1/call sd(1, 1) = 0, r1/abx missing in both
    # samples, so not met twice: 0 -> mean 0.2357; ordinal r3/tone sd(0.5, 1) = 0.3536; no nominal value
    assert stability["judge:mc"][1:] == [2, 2, 4, 4, pytest.approx(2 ** 0.5 / 2 / 3), pytest.approx(2 ** 0.5 / 4), None]
    assert stability["judge:judge-a"][3:] == [7, 0, None, None, None]  # one sample per item: no spread
    robustness = {(row[0], row[1]): row for row in result["tables"]["robustness"]["rows"]}
    # judge-a vs group-1, positive rates per model: model-a 2/3 vs 1/3, model-b 1/3 vs 0 (percent)
    row = robustness[("cohort:group-1", "judge:judge-a")]
    assert row[2] == 2 and row[5] == pytest.approx((100 / 3 + 100 / 3) / 2)


@pytest.mark.parametrize("page", PAGES)
def test_pages_of_an_empty_project_render(staff_client, db, page):
    from django.contrib.auth import get_user_model

    from annotation.models import Project

    grant(get_user_model().objects.get(username="researcher"), Project.objects.create(slug="empty", name="Empty"), "viewer")
    response = staff_client.get(reverse(f"report-{page}", args=["empty"]))
    assert response.status_code == 200
    assert "Traceback" not in response.content.decode()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_says_how_many_cases_quality_control_excluded(staff_client, mini_project, second_judge, page):
    from annotation.models import CaseQuality

    url = reverse(f"report-{page}", args=["mini"])
    assert "No case is excluded by quality control." in staff_client.get(url).content.decode()
    case = mini_project.cases.get(external_id="c2")
    CaseQuality.objects.create(project=mini_project, case=case, flagged=True, excluded=True)
    html = staff_client.get(url).content.decode()
    assert "1 case excluded by quality control" in html and "is not counted here" in html
