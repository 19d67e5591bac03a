"""Every list of the project API (issue 26, point 5): paginated, and its number of queries does not
grow with the rows. Two projects (tests/list_projects.py), the second three times the first in cases
and more in everything else (roles, criteria, responses, rubric versions, cohorts, assignments made by
the assignment service, judges, runs, judgments, adjudications, data jobs), each list read by the same manager:
every list has more rows in the large project, the same number of queries for both, and a page no
longer than the limit. The decisions (of a cohort, of a judge) and an annotator's own assignments are
read likewise, with their parameters."""
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.list_projects import list_projects

LISTS = ("roles", "cases", "criteria", "rubric-versions", "responses", "cohorts", "assignments", "judges", "runs",
         "judgments", "adjudications", "jobs")
PAGE = 5


@pytest.fixture
def manager(db, tmp_path):
    """A manager of the two projects, logged in."""
    client = Client()
    client.force_login(list_projects(tmp_path))
    client.get("/api/projects/small/cases/")  # the session and the first request's work, before counting
    return client


def _queries(client: Client, url: str) -> tuple[int, dict]:
    with CaptureQueriesContext(connection) as queries:
        answer = client.get(url, {"limit": PAGE})
    assert answer.status_code == 200, (url, answer.content[:300])
    return len(queries), answer.json()


def test_every_project_list_is_paginated_and_its_queries_do_not_grow_with_rows(manager):
    counts = {}
    for name in LISTS:
        small, small_page = _queries(manager, f"/api/projects/small/{name}/")
        large, large_page = _queries(manager, f"/api/projects/large/{name}/")
        for page in (small_page, large_page):
            assert {"count", "next", "previous", "results"} <= set(page) and len(page["results"]) <= PAGE, name
        counts[name] = (small, large, small_page["count"], large_page["count"])
    grows = {name: c for name, c in counts.items() if c[0] != c[1]}
    assert not grows, f"queries (small, large) and rows (small, large) of the lists whose queries grow: {grows}"
    # The comparison means something: every list has more rows in the large project.
    same = {name: c[2:] for name, c in counts.items() if not c[3] > c[2] > 0}
    assert not same, f"rows (small, large) of the lists that do not grow: {same}"


def _judge(project) -> str:
    from grading.models import Judge

    return Judge.objects.filter(project=project).order_by("name").values_list("name", flat=True).first()


# Lists read with parameters or by another person: (who, URL of project P, query of project P)
MORE_LISTS = {
    "decisions of a cohort": ("manager", lambda p: f"/api/projects/{p.slug}/decisions/", lambda p: {"source": "cohort:group-1"}),
    "decisions of a judge": ("manager", lambda p: f"/api/projects/{p.slug}/decisions/", lambda p: {"source": f"judge:{_judge(p)}"}),
    "an annotator's assignments": ("g1-ann1", lambda p: "/api/assignments/", lambda p: {"project": p.slug}),
}


def test_the_decisions_and_an_annotators_list_are_paginated_and_their_queries_do_not_grow(manager):
    from django.contrib.auth import get_user_model

    from annotation.models import Project

    annotator = Client()
    annotator.force_login(get_user_model().objects.get(username="g1-ann1"))
    annotator.get("/api/assignments/")
    clients = {"manager": manager, "g1-ann1": annotator}
    counts = {}
    for name, (who, url, query) in MORE_LISTS.items():
        found = []
        for slug in ("small", "large"):
            project = Project.objects.get(slug=slug)
            params = {**query(project), "limit": PAGE}  # its own queries, before counting
            with CaptureQueriesContext(connection) as queries:
                answer = clients[who].get(url(project), params)
            assert answer.status_code == 200, (name, answer.content[:300])
            page = answer.json()
            assert {"count", "next", "previous", "results"} <= set(page) and len(page["results"]) <= PAGE, name
            found.append((len(queries), page["count"]))
        counts[name] = found
    grows = {name: c for name, c in counts.items() if c[0][0] != c[1][0]}
    assert not grows, f"(queries, rows) of the small and the large project, lists whose queries grow: {grows}"
    same = {name: c for name, c in counts.items() if not c[1][1] > c[0][1] > 0}
    assert not same, f"(queries, rows) of the lists whose rows do not grow: {same}"
