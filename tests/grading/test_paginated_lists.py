"""The project's longer lists a page at a time (issue 26, point 5): every judge run and every data
job on a page of their own, linked from the project page where the recent ones are shown ("All N
runs", "All N jobs"), the data jobs in the API too, the project page's roles, and the quality page's
cases drawn for audit and flagged cases, each list with its own page. A pager's links are real
hrefs that keep the other parameters; its htmx request gets the list alone, and htmx restoring a
page it no longer holds gets the whole page."""
import re

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.models import CaseQuality
from grading.models import DataJob, Judge, JudgeRun
from tests.roles import grant


def _htmx(target: str, **extra) -> dict:
    return {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": target, **extra}


def _user(name, project, role):
    return grant(get_user_model().objects.create_user(name, password="pw"), project, role)


def _hrefs(html: str, rel: str) -> list[str]:
    return [h.replace("&amp;", "&") for h in re.findall(rf'<a href="([^"]*)" rel="{rel}"', html)]


@pytest.fixture
def boss(mini_project, client):
    client.force_login(_user("boss", mini_project, "manager"))
    return client


@pytest.fixture
def five_runs(mini_project):
    judge = Judge.objects.create(project=mini_project, name="paged", backend="replay", model="m")
    return [JudgeRun.objects.create(judge=judge, status=JudgeRun.FINISHED, total_calls=4, done_calls=4,
                                    finished_at=timezone.now()) for _ in range(5)]


def test_the_runs_page_lists_every_run_a_page_at_a_time(boss, five_runs, monkeypatch):
    monkeypatch.setattr("grading.judges.views.RUNS_PAGE", 2)
    newest_first = [run.pk for run in reversed(five_runs)]
    first = boss.get("/projects/mini/judges/runs/all/").content.decode()
    assert "<html" in first and "5 in all" in first
    assert re.findall(r'<tr id="run-(\d+)"', first) == [str(pk) for pk in newest_first[:2]]
    assert _hrefs(first, "prev") == [] and _hrefs(first, "next") == ["?page=2"]
    assert 'hx-get="?page=2"' in first and 'hx-target="#run-list"' in first and 'hx-push-url="true"' in first

    second = boss.get("/projects/mini/judges/runs/all/?page=2", **_htmx("run-list")).content.decode()
    assert "<html" not in second and second.lstrip().startswith('<div id="run-list">')
    assert re.findall(r'<tr id="run-(\d+)"', second) == [str(pk) for pk in newest_first[2:4]]
    assert _hrefs(second, "prev") == ["?page=1"] and _hrefs(second, "next") == ["?page=3"]
    # htmx restoring a page of its history that it no longer holds gets the whole page
    restored = boss.get("/projects/mini/judges/runs/all/?page=2",
                        **_htmx("run-list", HTTP_HX_HISTORY_RESTORE_REQUEST="true")).content.decode()
    assert "<html" in restored
    last = boss.get("/projects/mini/judges/runs/all/?page=99").content.decode()  # past the end: the last page
    assert re.findall(r'<tr id="run-(\d+)"', last) == [str(newest_first[4])] and _hrefs(last, "next") == []


def test_the_project_page_links_to_every_run_and_job(boss, mini_project, five_runs, monkeypatch):
    monkeypatch.setattr("grading.judges.selectors.RECENT_RUNS", 3)
    monkeypatch.setattr("grading.templatetags.data_tags.RECENT_JOBS", 3)
    for _ in range(4):
        DataJob.objects.create(kind=DataJob.EXPORT, project=mini_project, status=DataJob.FINISHED)
    html = boss.get("/projects/mini/").content.decode()
    assert "The 3 most recent of 5." in html and '<a href="/projects/mini/judges/runs/all/">All 5 runs →</a>' in html
    assert "The 3 most recent of 4." in html and '<a href="/projects/mini/jobs/">All 4 jobs →</a>' in html
    polled = boss.get("/projects/mini/judges/runs/", HTTP_HX_REQUEST="true").content.decode()  # the section's table
    assert "All 5 runs" in polled


def test_the_jobs_page_shows_each_role_the_jobs_it_may_open(mini_project, client, monkeypatch):
    monkeypatch.setattr("grading.views.JOBS_PAGE", 2)
    exports = [DataJob.objects.create(kind=DataJob.EXPORT, project=mini_project, status=DataJob.FINISHED) for _ in range(3)]
    upload = DataJob.objects.create(kind=DataJob.IMPORT, project=mini_project, status=DataJob.FAILED, error="bad line")
    client.force_login(_user("adj", mini_project, "adjudicator"))
    page1 = client.get("/projects/mini/jobs/").content.decode()
    assert "3 in all" in page1 and "Gold exports of this project" in page1
    assert re.findall(r'id="job-(\d+)"', page1) == [str(exports[2].pk), str(exports[1].pk)]
    page2 = client.get("/projects/mini/jobs/?page=2", **_htmx("job-list")).content.decode()
    assert "<html" not in page2 and re.findall(r'id="job-(\d+)"', page2) == [str(exports[0].pk)]
    assert f"job-{upload.pk}" not in page1 + page2  # an import is the managers'
    client.force_login(_user("boss", mini_project, "manager"))
    managed = client.get("/projects/mini/jobs/").content.decode()
    assert "4 in all" in managed and f'id="job-{upload.pk}"' in managed and "bad line" in managed
    client.force_login(_user("reader", mini_project, "viewer"))
    assert client.get("/projects/mini/jobs/").status_code == 403
    client.force_login(get_user_model().objects.create_user("stranger"))
    assert client.get("/projects/mini/jobs/").status_code == 404


def test_the_quality_pages_lists_page_on_their_own_and_a_form_comes_back_to_its_pages(boss, mini_project, monkeypatch):
    monkeypatch.setattr("grading.qc.views.QC_PAGE", 1)
    cases = list(mini_project.cases.order_by("position", "pk"))
    assert len(cases) >= 2
    for case in cases:
        CaseQuality.objects.create(project=mini_project, case=case, screen_accuracy_pct=90.0, screen_threshold_pct=50.0,
                                   flagged=True, excluded=True, audit_sampled=True)
    html = boss.get("/projects/mini/quality/?flagged_page=2").content.decode()
    assert re.findall(r'id="qc-case-(\d+)"', html) == [str(cases[0].pk)]  # drawn for audit: page 1
    assert re.findall(r'id="qc-flagged-(\d+)"', html) == [str(cases[1].pk)]  # flagged: page 2
    assert "?flagged_page=2&sampled_page=2" in _hrefs(html, "next")  # the other list's page is kept
    assert "?flagged_page=1" in _hrefs(html, "prev")
    assert 'hx-target="#qc-sampled-list"' in html and 'hx-target="#qc-flagged-list"' in html

    part = boss.get("/projects/mini/quality/?sampled_page=2&flagged_page=2", **_htmx("qc-sampled-list")).content.decode()
    assert part.lstrip().startswith('<div id="qc-sampled-list">') and "qc-flagged" not in part
    assert re.findall(r'id="qc-case-(\d+)"', part) == [str(cases[1].pk)]
    assert 'name="sampled_page" value="2"' in part and 'name="flagged_page" value="2"' in part

    answer = boss.post(f"/projects/mini/quality/cases/{cases[1].pk}/outcome/",
                       {"outcome": "pass", "note": "", "sampled_page": "2", "flagged_page": "2"})
    assert answer.status_code == 302
    assert answer["Location"] == f"/projects/mini/quality/?sampled_page=2&flagged_page=2#qc-case-{cases[1].pk}"
    answer = boss.post(f"/projects/mini/quality/cases/{cases[0].pk}/reinstate/",
                       {"note": "kept", "sampled_page": "x", "flagged_page": "1"})
    assert answer["Location"] == f"/projects/mini/quality/?flagged_page=1#qc-flagged-{cases[0].pk}"
    # After a pager's htmx swap the other list's hidden pages are those of the first render: the
    # page's address (the referrer, which the swap pushed) says where the lists are now.
    answer = boss.post(f"/projects/mini/quality/cases/{cases[1].pk}/outcome/",
                       {"outcome": "pass", "note": "", "sampled_page": "2", "flagged_page": "1"},
                       HTTP_REFERER="http://testserver/projects/mini/quality/?sampled_page=2&flagged_page=2")
    assert answer["Location"] == f"/projects/mini/quality/?sampled_page=2&flagged_page=2#qc-case-{cases[1].pk}"


def test_the_jobs_api_lists_the_jobs_a_role_may_open(mini_project, client):
    export = DataJob.objects.create(kind=DataJob.EXPORT, project=mini_project, status=DataJob.FINISHED)
    upload = DataJob.objects.create(kind=DataJob.IMPORT, project=mini_project, status=DataJob.FINISHED)
    client.force_login(_user("adj", mini_project, "adjudicator"))
    page = client.get("/api/projects/mini/jobs/", {"limit": 1}).json()
    assert page["count"] == 1 and [j["id"] for j in page["results"]] == [export.pk]
    assert page["results"][0]["download_url"] == f"/api/jobs/{export.pk}/download/" and page["next"] is None
    client.force_login(_user("boss", mini_project, "manager"))
    page = client.get("/api/projects/mini/jobs/", {"limit": 1}).json()
    assert page["count"] == 2 and [j["id"] for j in page["results"]] == [upload.pk] and "offset=1" in page["next"]
    client.force_login(_user("reader", mini_project, "viewer"))
    assert client.get("/api/projects/mini/jobs/").status_code == 403


def test_the_project_pages_roles_are_listed_a_page_at_a_time(boss, mini_project, monkeypatch):
    monkeypatch.setattr("annotation.templatetags.annotation_project.ROLES_PAGE", 2)
    for n in range(3):
        _user(f"reader-{n}", mini_project, "viewer")  # with boss: four roles, two pages
    html = boss.get("/projects/mini/").content.decode()
    assert "<td>boss</td>" in html and "reader-0" in html and "reader-1" not in html
    assert _hrefs(html, "next") == ["?roles_page=2#project-roles"] and 'hx-target="#role-list"' in html
    part = boss.get("/projects/mini/?roles_page=2", **_htmx("role-list")).content.decode()
    assert part.lstrip().startswith('<div id="role-list">') and "<html" not in part
    assert "reader-1" in part and "reader-2" in part and "<td>boss</td>" not in part
    assert _hrefs(part, "prev") == ["?roles_page=1#project-roles"]
