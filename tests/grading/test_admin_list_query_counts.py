"""The admin's lists of a project's data (issue 26, point 5): each changelist is paginated by the
admin and its number of queries does not grow with the rows. A staff manager of the small project
and one of the large (tests/list_projects.py) read every changelist of project data; every list is
at least as long in the large project, and both take the same number of queries."""
import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.admin import ProjectDataAdmin
from annotation.models import Project
from tests.list_projects import list_projects
from tests.roles import grant


def _project_data_admins():
    return sorted((model._meta.app_label, model._meta.model_name) for model, model_admin in admin.site._registry.items()
                  if isinstance(model_admin, ProjectDataAdmin))


@pytest.fixture
def staff(db, tmp_path):
    list_projects(tmp_path)
    clients = {}
    for slug in ("small", "large"):
        user = get_user_model().objects.create_user(f"{slug}-staff", is_staff=True)
        grant(user, Project.objects.get(slug=slug))
        clients[slug] = Client()
        clients[slug].force_login(user)
        clients[slug].get("/admin/")  # the session and the first request's work, before counting
    return clients


def test_every_project_data_changelist_takes_the_same_queries_for_a_larger_project(staff):
    counts = {}
    for app, model in _project_data_admins():
        url = f"/admin/{app}/{model}/"
        staff["small"].get(url)  # warm
        found = []
        for slug in ("small", "large"):
            with CaptureQueriesContext(connection) as queries:
                answer = staff[slug].get(url)
            assert answer.status_code == 200, (url, answer.status_code)
            changelist = answer.context["cl"]
            assert len(changelist.result_list) <= changelist.list_per_page, url
            found.append((len(queries), changelist.result_count))
        counts[model] = found
    assert len(counts) >= 10
    grows = {name: c for name, c in counts.items() if c[0][0] != c[1][0]}
    assert not grows, f"(queries, rows) of the small and the large project, changelists whose queries grow: {grows}"
    shorter = {name: c for name, c in counts.items() if c[1][1] < c[0][1]}
    assert not shorter, f"(queries, rows) of the changelists with fewer rows in the large project: {shorter}"
