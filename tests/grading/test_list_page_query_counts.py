"""Every page that lists a project's rows (issue 26, point 5): its number of queries does not grow
with the rows. The two projects of tests/list_projects.py (the second three times the first in
cases, with more of everything), each page read by the same person in both: the page's list has
more rows in the large project, and the page takes the same number of queries for both. The
paginated lists made for this point (every judge run, every data job, the quality page's cases
drawn for audit and flagged cases, the project page's roles) are read with two rows a page, so the large project's list has
more pages than the small one's: whole pages, their htmx partials and a later page each."""
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Assignment, CaseQuality, Project, ProjectRole
from grading.models import DataJob, JudgeRun
from grading.reports.adjudication_queue import FALLBACK_QUERIES
from tests.list_projects import list_projects


def _paged(response) -> int:
    return response.context["page"].paginator.count


def _runs(project: Project) -> int:
    return JudgeRun.objects.filter(judge__project=project).count()


def _qc_rows(response) -> int:
    return response.context["sampled"].paginator.count + response.context["flagged"].paginator.count


def _quality(project: Project, **state) -> int:
    return CaseQuality.objects.filter(project=project, **state).count()


def _htmx(target: str) -> dict:
    """The headers of the pager's htmx request for the list in ``#target``."""
    return {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": target}


ROWS_A_PAGE = 2  # the new lists' page size here, so the large project's lists have several pages


# name: (who reads it, the URL of project P, the number of rows it lists from the answer and the project)
PAGES = {
    "my items": ("g1-ann1", lambda p: f"/work/items/?project={p.pk}", lambda r, p: _paged(r)),
    "review queue": ("g1-check", lambda p: f"/review/{p.slug}/", lambda r, p: _paged(r)),
    "review queue, one status": ("g1-check", lambda p: f"/review/{p.slug}/?status=waiting", lambda r, p: _paged(r)),
    "assignments": ("manager", lambda p: f"/projects/{p.slug}/assignments/", lambda r, p: _paged(r)),
    "audit trail": ("manager", lambda p: f"/projects/{p.slug}/audit/", lambda r, p: _paged(r)),
    "adjudication queue": ("manager", lambda p: f"/projects/{p.slug}/adjudication/", lambda r, p: _paged(r)),
    "project page": ("manager", lambda p: f"/projects/{p.slug}/", lambda r, p: _runs(p) + DataJob.objects.filter(project=p).count()),
    "judges page": ("manager", lambda p: f"/projects/{p.slug}/judges/", lambda r, p: _runs(p)),
    "runs table": ("manager", lambda p: f"/projects/{p.slug}/judges/runs/", lambda r, p: _runs(p)),
    "quality page": ("manager", lambda p: f"/projects/{p.slug}/quality/", lambda r, p: _qc_rows(r)),
    "quality page, flagged, page 2": ("manager", lambda p: f"/projects/{p.slug}/quality/?flagged_page=2&sampled_page=3",
                                      lambda r, p: _qc_rows(r)),
    "quality page, drawn for audit (htmx)": ("manager", lambda p: f"/projects/{p.slug}/quality/?sampled_page=2",
                                             lambda r, p: _quality(p, audit_sampled=True), _htmx("qc-sampled-list")),
    "quality page, flagged (htmx)": ("manager", lambda p: f"/projects/{p.slug}/quality/?flagged_page=2",
                                     lambda r, p: _quality(p, flagged=True), _htmx("qc-flagged-list")),
    "project page, roles page 2 (htmx)": ("manager", lambda p: f"/projects/{p.slug}/?roles_page=2",
                                          lambda r, p: ProjectRole.objects.filter(project=p).count(), _htmx("role-list")),
    "runs page": ("manager", lambda p: f"/projects/{p.slug}/judges/runs/all/", lambda r, p: _paged(r)),
    "runs page 2 (htmx)": ("manager", lambda p: f"/projects/{p.slug}/judges/runs/all/?page=2", lambda r, p: _runs(p),
                           _htmx("run-list")),
    "jobs page": ("manager", lambda p: f"/projects/{p.slug}/jobs/", lambda r, p: _paged(r)),
    "jobs page 2 (htmx)": ("manager", lambda p: f"/projects/{p.slug}/jobs/?page=2", lambda r, p: p.data_jobs.count(),
                           _htmx("job-list")),
}
PAGE_SIZES = (("grading.judges.views.RUNS_PAGE", ROWS_A_PAGE), ("grading.views.JOBS_PAGE", ROWS_A_PAGE),
              ("grading.qc.views.QC_PAGE", ROWS_A_PAGE), ("annotation.templatetags.annotation_project.ROLES_PAGE", ROWS_A_PAGE))


@pytest.fixture
def people(db, tmp_path):
    manager = list_projects(tmp_path)
    users = get_user_model().objects
    # The quality page lists the cases drawn for audit and the flagged ones: every case is both,
    # audited by the manager (the auditor is shown) and reinstated (kept in the reports and queues).
    for project in Project.objects.filter(slug__in=("small", "large")):
        for case in project.cases.all():
            CaseQuality.objects.create(project=project, case=case, screen_accuracy_pct=80.0, screen_threshold_pct=50.0,
                                       flagged=True, excluded=False, audit_sampled=True, audit_outcome="pass",
                                       audit_by=manager, audit_at=timezone.now())
    # The review queue lists responses with a submitted assignment: every other assignment of
    # group-1's annotators marked submitted (rows of the checker's queue, not labels anyone reads).
    for project in Project.objects.filter(slug__in=("small", "large")):
        mine = Assignment.objects.filter(project=project, cohort__name="group-1").order_by("pk").values_list("pk", flat=True)
        Assignment.objects.filter(pk__in=list(mine)[::2]).update(status=Assignment.SUBMITTED, submitted_at=timezone.now())
    clients = {}
    for name, user in (("manager", manager), ("g1-ann1", users.get(username="g1-ann1")),
                       ("g1-check", users.get(username="g1-check"))):
        clients[name] = Client()
        clients[name].force_login(user)
        clients[name].get("/")  # the session and the first request's work, before counting
    return clients


def _read(client: Client, url: str, headers: dict | None = None):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, **(headers or {}))
    assert response.status_code == 200, (url, response.status_code)
    return len(queries), response


def test_every_list_page_takes_the_same_queries_for_a_project_three_times_larger(people, monkeypatch):
    for name, size in PAGE_SIZES:
        monkeypatch.setattr(name, size)
    small, large = Project.objects.get(slug="small"), Project.objects.get(slug="large")
    assert Assignment.objects.filter(project=large).count() > Assignment.objects.filter(project=small).count() > 0
    counts = {}
    for name, (who, url, rows, *headers) in PAGES.items():
        for project in (small, large):  # warm: what the first read of a page caches (the queue: each project's counts)
            _read(people[who], url(project), *headers)
        found = []
        for project in (small, large):
            queries, response = _read(people[who], url(project), *headers)
            found.append((queries, rows(response, project)))
            if response.context is not None and "page" in response.context:  # the list shows one page at most
                assert len(response.context["page"].object_list) <= response.context["page"].paginator.per_page, name
        counts[name] = found
    # The large project has a third cohort, whose responses the adjudication queue decides through the
    # decision frames (a fixed number of reads), where the small one has a single cohort.
    apart = {"adjudication queue": FALLBACK_QUERIES}
    grows = {name: c for name, c in counts.items() if c[1][0] - c[0][0] != apart.get(name, 0)}
    assert not grows, f"(queries, rows) of the small and the large project, pages whose queries grow: {grows}"
    same = {name: c for name, c in counts.items() if not c[1][1] > c[0][1] > 0}
    assert not same, f"(queries, rows) of the pages whose rows do not grow: {same}"
