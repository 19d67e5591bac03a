"""Every list of the project API (issue 26, point 5): paginated, and its number of queries does not
grow with the rows. Two projects from the clinical generator, one three times the other in cases,
criteria and models (so in responses, rubric versions, assignments, judgments and runs), each list
read by the same manager: the same number of queries for both, and a page no longer than the limit."""
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Project
from demo.clinical import generate_clinical
from grading.bundles import bundle_import
from tests.roles import grant

LISTS = ("roles", "cases", "criteria", "rubric-versions", "responses", "cohorts", "assignments", "judges", "runs",
         "judgments", "adjudications")
PAGE = 5


@pytest.fixture
def manager(db, tmp_path):
    """A manager of two projects of the clinical generator, the second three times the first."""
    for slug, cases, criteria, models in (("small", 2, 3, ["m-a", "m-b"]), ("large", 6, 6, ["m-a", "m-b", "m-c"])):
        generate_clinical(tmp_path / slug, slug=slug, n_cases=cases, n_criteria=criteria, models=models,
                          human_answer_cases=1, seed=3)
        bundle_import(path=tmp_path / slug)
    user = get_user_model().objects.create_user("list-counter")
    for slug in ("small", "large"):
        grant(user, Project.objects.get(slug=slug))
    client = Client()
    client.force_login(user)
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
    # The comparison means something: the lists that grow with the project have more rows in the large one.
    for name in ("cases", "criteria", "rubric-versions", "responses", "judgments"):
        assert counts[name][3] > counts[name][2] > 0, (name, counts[name])
