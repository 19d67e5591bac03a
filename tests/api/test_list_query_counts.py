"""Every list of the project API (issue 26, point 5): paginated, and its number of queries does not
grow with the rows. Two projects (tests/list_projects.py), the second three times the first in cases
and more in everything else (roles, criteria, responses, rubric versions, cohorts, assignments made by
the assignment service, judges, runs, judgments, adjudications), each list read by the same manager:
every list has more rows in the large project, the same number of queries for both, and a page no
longer than the limit."""
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.list_projects import list_projects

LISTS = ("roles", "cases", "criteria", "rubric-versions", "responses", "cohorts", "assignments", "judges", "runs",
         "judgments", "adjudications")
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
