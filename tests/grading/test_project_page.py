"""The project page in parts (issue 25, point 5): tabs a role can use, and a banner that follows a
job its user has just started (queued, running, then ready or failed) instead of a message that
stays "queued" after the file is ready."""
import pytest
from django.contrib.auth import get_user_model

from grading.models import DataJob
from tests.roles import grant

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def jobs_dir(settings, tmp_path):
    settings.EVALSITE_JOBS_DIR = tmp_path / "jobs"


def _user(name, project, role):
    made = get_user_model().objects.create_user(name, password="pw")
    grant(made, project, role)
    return made


def _tabs(html: str) -> list[str]:
    return [part.split('"', 1)[0] for part in html.split('role="tab" id="tab-')[1:]]


@pytest.mark.parametrize("role,tabs", [
    ("manager", ["work-label", "reports-label", "judges-label", "data-label", "settings-label"]),
    ("adjudicator", ["work-label", "reports-label", "data-label", "settings-label"]),
    ("viewer", ["reports-label", "data-label", "settings-label"]),
])
def test_each_role_gets_the_tabs_it_can_use(mini_project, client, role, tabs):
    client.force_login(_user(f"u-{role}", mini_project, role))
    html = client.get("/projects/mini/").content.decode()
    assert _tabs(html) == tabs
    for tab in tabs:
        name = tab.removesuffix("-label")
        assert f'role="tabpanel" id="tab-{name}"' in html
    assert ('id="project-judges"' in html) == (role == "manager") and 'js/tabs.js' in html


def test_an_export_is_followed_by_its_banner_until_the_file_is_ready(mini_project, client,
                                                                    django_capture_on_commit_callbacks):
    adjudicator = _user("adj", mini_project, "adjudicator")
    client.force_login(adjudicator)
    with django_capture_on_commit_callbacks(execute=False):
        section = client.post("/projects/mini/export/", **HTMX).content.decode()
    job = DataJob.objects.get(kind="export")
    assert f'id="job-banner-{job.pk}"' in section and "queued; it starts when a worker is free" in section
    assert f'hx-get="/jobs/{job.pk}/?banner=1"' in section  # it polls
    assert "Gold export queued" not in section

    job.status, job.progress_pct, job.stage = DataJob.RUNNING, 40, "gold.parquet"
    job.save()
    running = client.get(f"/jobs/{job.pk}/", {"banner": "1"}, **HTMX).content.decode()
    assert "running, 40% (gold.parquet)" in running and "hx-get" in running

    job.status, job.result = DataJob.FINISHED, {"provenance": {"agreed": 10}}
    job.save()
    ready = client.get(f"/jobs/{job.pk}/", {"banner": "1"}, **HTMX).content.decode()
    assert "ready." in ready and f'href="/jobs/{job.pk}/download/"' in ready and "hx-get" not in ready  # it stops

    job.status, job.error = DataJob.FAILED, "disk full"
    job.save()
    failed = client.get(f"/jobs/{job.pk}/", {"banner": "1"}, **HTMX).content.decode()
    assert "failed, nothing was written: disk full" in failed and "hx-get" not in failed


def test_without_htmx_the_redirect_names_the_job_and_only_its_user_sees_the_banner(mini_project, client,
                                                                                  django_capture_on_commit_callbacks):
    adjudicator = _user("adj", mini_project, "adjudicator")
    client.force_login(adjudicator)
    with django_capture_on_commit_callbacks(execute=False):
        answer = client.post("/projects/mini/export/")
    job = DataJob.objects.get(kind="export")
    assert answer.status_code == 302 and answer["Location"] == f"/projects/mini/?started={job.pk}#project-data"
    assert f'id="job-banner-{job.pk}"' in client.get(answer["Location"]).content.decode()
    client.force_login(_user("other", mini_project, "manager"))  # someone else's job: no banner on their page
    assert "job-banner" not in client.get(f"/projects/mini/?started={job.pk}").content.decode()
    assert client.get("/projects/mini/?started=banana").status_code == 200
