"""Every page that lists a project's rows (issue 26, point 5): its number of queries does not grow
with the rows. The two projects of tests/list_projects.py (the second three times the first in
cases, with more of everything), each page read by the same person in both: the page's list has
more rows in the large project, and the page takes the same number of queries for both."""
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Assignment, Project
from grading.models import DataJob, JudgeRun
from tests.list_projects import list_projects


def _paged(response) -> int:
    return response.context["page"].paginator.count


def _runs(project: Project) -> int:
    return JudgeRun.objects.filter(judge__project=project).count()


# name: (who reads it, the URL of project P, the number of rows it lists from the answer and the project)
PAGES = {
    "my items": ("g1-ann1", lambda p: f"/work/items/?project={p.pk}", lambda r, p: _paged(r)),
    "review queue": ("g1-check", lambda p: f"/review/{p.slug}/", lambda r, p: _paged(r)),
    "assignments": ("manager", lambda p: f"/projects/{p.slug}/assignments/", lambda r, p: _paged(r)),
    "audit trail": ("manager", lambda p: f"/projects/{p.slug}/audit/", lambda r, p: _paged(r)),
    "adjudication queue": ("manager", lambda p: f"/projects/{p.slug}/adjudication/", lambda r, p: _paged(r)),
    "project page": ("manager", lambda p: f"/projects/{p.slug}/", lambda r, p: _runs(p) + DataJob.objects.filter(project=p).count()),
    "judges page": ("manager", lambda p: f"/projects/{p.slug}/judges/", lambda r, p: _runs(p)),
    "runs table": ("manager", lambda p: f"/projects/{p.slug}/judges/runs/", lambda r, p: _runs(p)),
    # It lists screened and sampled cases, none here: the rows compared are the cases it would screen.
    "quality page": ("manager", lambda p: f"/projects/{p.slug}/quality/", lambda r, p: p.cases.count()),
}


@pytest.fixture
def people(db, tmp_path):
    manager = list_projects(tmp_path)
    users = get_user_model().objects
    for project in Project.objects.filter(slug__in=("small", "large")):  # a data job or two each, ended
        for _ in range(1 if project.slug == "small" else 3):
            DataJob.objects.create(kind=DataJob.EXPORT, project=project, user=manager, status=DataJob.FINISHED)
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


def _read(client: Client, url: str):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return len(queries), response


def test_every_list_page_takes_the_same_queries_for_a_project_three_times_larger(people):
    small, large = Project.objects.get(slug="small"), Project.objects.get(slug="large")
    assert Assignment.objects.filter(project=large).count() > Assignment.objects.filter(project=small).count() > 0
    counts = {}
    for name, (who, url, rows) in PAGES.items():
        _read(people[who], url(small))  # warm: what the first read of a page caches for the process
        found = []
        for project in (small, large):
            queries, response = _read(people[who], url(project))
            found.append((queries, rows(response, project)))
        counts[name] = found
    grows = {name: c for name, c in counts.items() if c[0][0] != c[1][0]}
    assert not grows, f"(queries, rows) of the small and the large project, pages whose queries grow: {grows}"
    same = {name: c for name, c in counts.items() if not c[1][1] > c[0][1] > 0}
    assert not same, f"(queries, rows) of the pages whose rows do not grow: {same}"
