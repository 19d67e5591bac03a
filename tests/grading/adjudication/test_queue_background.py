"""When the queue's counts must be made over the whole project (nothing kept, or kept counts of an
earlier import), the pages have a worker count them instead of holding the request (issue 26: the
queue answers in at most 2 s at full scale, where a whole count takes 12-19 s): the queue page says
it is counting and polls, one count is queued for any number of looks, the page shows the queue
once the count is there, a failed count is shown with its reason (never a 500), "next item" goes
to the queue page meanwhile, and an import (job or command) makes the count as it ends."""
import io
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotation.labels.write import labels_delete
from annotation.models import Label, Project, Response
from grading import selectors
from grading.jobs import data_job_import_start, data_job_run
from grading.models import DataJob
from grading.reports import adjudication_queue as queue_module
from grading.reports import tasks
from grading.sources import project_sources
from tests.bundles import write_bundle
from tests.grading.adjudication.conftest import queue_parts
from tests.roles import grant


@pytest.fixture
def queued(monkeypatch):
    """The count task's sends, recorded instead of run (as when a worker picks them up later)."""
    sent = []
    monkeypatch.setattr(tasks.queue_count_task, "delay", lambda **kwargs: sent.append(kwargs))
    return sent


@pytest.fixture
def adj_client(client, queue_project):
    user = get_user_model().objects.create_user(username="adj", password="pw-12345")
    client.force_login(grant(user, queue_project, "adjudicator"))
    return client


def url(name: str) -> str:
    return reverse(name, args=["queue"])


def kept(project) -> bool:
    cohorts = project_sources(project=project)["cohorts"][:2]
    return queue_module._counted_disputes(project=project, cohorts=cohorts, whole=False) is not None


def test_the_page_counts_in_the_background_and_shows_the_queue_when_the_count_is_there(adj_client, queue_project, queued):
    page = adj_client.get(url("adjudication-queue"))
    html = page.content.decode()
    assert page.status_code == 200 and 'id="queue-counting"' in html and 'id="queue"' not in html
    # It polls, and goes on polling after a look that failed (htmx swaps no error answer).
    assert "Counting the cohorts' decisions" in html and 'hx-trigger="every 2s"' in html
    assert queued == [{"project_id": queue_project.pk}]
    # Looking again while it counts queues nothing more, and "next item" goes to the queue page.
    assert adj_client.get(url("adjudication-queue")).status_code == 200
    assert adj_client.get(url("adjudication-next"))["Location"] == url("adjudication-queue")
    assert len(queued) == 1 and not kept(queue_project)

    tasks.queue_count_task(**queued[0])  # the worker's turn
    html = adj_client.get(url("adjudication-queue")).content.decode()
    assert 'id="queue-counting"' not in html and 'id="queue"' in html
    assert html.count('data-response="') == 5 and len(queued) == 1


def test_a_count_of_a_few_changed_responses_is_made_in_the_request(adj_client, queue_project, queued, clock):
    tasks.queue_count_task(project_id=queue_project.pk)
    clock(60)
    # r1's one dispute is group-2's "not met" on c1-k1: without that label, the cohorts agree on r1.
    disputing = Label.objects.get(response__external_id="r1", criterion__external_id="c1-k1", cohort__name="group-2")
    labels_delete(label_ids=[disputing.pk], user=None, note="one changed response")
    clock(60)
    html = adj_client.get(url("adjudication-queue")).content.decode()
    assert 'id="queue"' in html and queued == []
    assert html.count('data-response="') == 4
    assert f'data-response="{Response.objects.get(external_id="r1").pk}"' not in html


def test_a_failed_count_says_why_and_the_next_look_after_a_while_counts_again(adj_client, queue_project, queued,
                                                                             monkeypatch, caplog):
    def broken(**kwargs):
        raise RuntimeError("the database went away\nsecond line")

    monkeypatch.setattr(selectors, "cohort_disputes", broken)
    adj_client.get(url("adjudication-queue"))
    tasks.queue_count_task(**queued[0])
    assert "counting the adjudication queue of project 'queue' failed" in caplog.text
    page = adj_client.get(url("adjudication-queue"))
    html = page.content.decode()
    assert page.status_code == 200 and "Counting the cohorts' decisions failed: RuntimeError: the database went away" in html
    assert "second line" not in html and "hx-trigger" not in html and len(queued) == 1  # no polling, nothing queued
    # The failure is remembered for a while; once it is gone, the next look queues a new count.
    cohorts = project_sources(project=queue_project)["cohorts"][:2]
    cache.delete(queue_module._counting_marks(queue_project, cohorts)[1])
    adj_client.get(url("adjudication-queue"))
    assert len(queued) == 2


def test_a_lost_count_is_queued_again_once_its_mark_lapses(adj_client, queue_project, queued):
    adj_client.get(url("adjudication-queue"))
    cohorts = project_sources(project=queue_project)["cohorts"][:2]
    cache.delete(queue_module._counting_marks(queue_project, cohorts)[0])  # what COUNTING_SECONDS does
    adj_client.get(url("adjudication-queue"))
    assert len(queued) == 2


def _count_ends_right_after_the_look(monkeypatch, project, *, fail: bool = False):
    """The page has looked (nothing kept, no failure); a worker's count ends (or fails) just then,
    before the page marks a count as under way."""

    class Cache:
        def __getattr__(self, name):
            return getattr(cache, name)

        def add(self, key, *args, **kwargs):
            if key.endswith(":counting"):
                if fail:
                    monkeypatch.setattr(selectors, "cohort_disputes", _refused)
                queue_module.queue_count(project=project)
            return cache.add(key, *args, **kwargs)

    monkeypatch.setattr(queue_module, "cache", Cache())


def _refused(**kwargs):
    raise RuntimeError("the database refused the count")


def test_a_count_ending_between_the_look_and_its_mark_is_shown_not_queued_again(adj_client, queue_project, queued,
                                                                                monkeypatch):
    _count_ends_right_after_the_look(monkeypatch, queue_project)
    html = adj_client.get(url("adjudication-queue")).content.decode()
    assert 'id="queue"' in html and 'id="queue-counting"' not in html and queued == []
    cohorts = project_sources(project=queue_project)["cohorts"][:2]
    assert cache.get(queue_module._counting_marks(queue_project, cohorts)[0]) is None


def test_a_count_failing_between_the_look_and_its_mark_is_shown_not_queued_again(adj_client, queue_project, queued,
                                                                                monkeypatch):
    _count_ends_right_after_the_look(monkeypatch, queue_project, fail=True)
    html = adj_client.get(url("adjudication-queue")).content.decode()
    assert "the database refused the count" in html and 'id="queue"' not in html and queued == []


def test_a_second_look_that_fails_leaves_no_count_marked_as_under_way(queue_project, queued, monkeypatch):
    """The look after taking the mark fails (the database, say): nothing was queued, so the mark
    goes too, and the next page looks again instead of waiting for a count nobody makes."""

    class Cache:
        def __getattr__(self, name):
            return getattr(cache, name)

        def add(self, key, *args, **kwargs):
            added = cache.add(key, *args, **kwargs)
            monkeypatch.setattr(selectors, "disputes_fingerprint", _refused)
            return added

    monkeypatch.setattr(queue_module, "cache", Cache())
    with pytest.raises(RuntimeError, match="refused the count"):
        queue_module.queue_count_start(project=queue_project)
    cohorts = project_sources(project=queue_project)["cohorts"][:2]
    assert cache.get(queue_module._counting_marks(queue_project, cohorts)[0]) is None and queued == []


def test_under_eager_celery_the_first_look_shows_the_queue(adj_client, queue_project):
    html = adj_client.get(url("adjudication-queue")).content.decode()
    assert 'id="queue"' in html and 'id="queue-counting"' not in html and kept(queue_project)


def test_the_command_and_the_report_still_count_in_the_process(queue_project, queued):
    queue = queue_module.adjudication_queue(project=queue_project)
    assert len(queue.items) == 5 and queued == []


def _import_job(tmp_path, settings) -> DataJob:
    settings.EVALSITE_JOBS_DIR = tmp_path / "jobs"
    user = get_user_model().objects.create_superuser(username="root", password="pw-12345")
    bundle = write_bundle(tmp_path / "queue", queue_parts())
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for path in bundle.iterdir():
            archive.write(path, path.name)
    job = data_job_import_start(upload=SimpleUploadedFile("queue.zip", data.getvalue()), user=user)
    return data_job_run(job_id=job.pk)  # what the job's task runs (its send waits for a commit, never here)


def test_an_import_job_counts_the_queue_as_it_ends(db, tmp_path, settings, queued, client,
                                                   django_capture_on_commit_callbacks):
    """The queue is ready when the import is: its first reader neither waits nor sees "counting"."""
    with django_capture_on_commit_callbacks(execute=True):
        job = _import_job(tmp_path, settings)
    assert job.status == DataJob.FINISHED, job.error
    project = Project.objects.get(slug="queue")
    assert kept(project) and queued == []
    user = get_user_model().objects.create_user(username="adj", password="pw-12345")
    client.force_login(grant(user, project, "adjudicator"))
    html = client.get(url("adjudication-queue")).content.decode()
    assert 'id="queue"' in html and 'id="queue-counting"' not in html and queued == []
    assert html.count('data-response="') == 5


def test_the_import_command_counts_the_queue_as_it_ends(db, tmp_path, queued, django_capture_on_commit_callbacks):
    bundle = write_bundle(tmp_path / "queue", queue_parts())
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_bundle", str(bundle), "--json", stdout=io.StringIO())
    assert kept(Project.objects.get(slug="queue")) and queued == []


def test_an_import_whose_queue_count_fails_stands_and_the_page_says_why(db, tmp_path, settings, queued, monkeypatch,
                                                                       caplog, django_capture_on_commit_callbacks):
    def broken(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(selectors, "cohort_disputes", broken)
    with django_capture_on_commit_callbacks(execute=True):
        job = _import_job(tmp_path, settings)
    assert job.status == DataJob.FINISHED, job.error
    assert "counting the adjudication queue of project 'queue' failed" in caplog.text
    project = Project.objects.get(slug="queue")
    assert project.responses.count() == 7 and not kept(project)
    cohorts = project_sources(project=project)["cohorts"][:2]
    assert cache.get(queue_module._counting_marks(project, cohorts)[1]) == "RuntimeError: the database went away"


def test_the_queue_api_answers_202_while_it_counts_then_the_queue(adj_client, queue_project, queued):
    """The API, as the page: 202 with a status URL while a worker counts, then 200 with the queue at
    the status URL and at the report's URL; the command's JSON either way."""
    url = "/api/projects/queue/reports/adjudication_queue/"
    pending = adj_client.get(url)
    assert pending.status_code == 202 and pending.json()["status"] == "pending"
    status_url = pending["Location"]
    assert pending.json()["status_url"] == status_url and pending["Retry-After"] == "2"
    assert adj_client.get(status_url).status_code == 202 and len(queued) == 1  # still counting: nothing more queued

    tasks.queue_count_task(**queued[0])
    done = adj_client.get(status_url)
    assert done.status_code == 200, done.content
    assert [i["response_id"] for i in done.json()["items"]] == ["r2", "r5", "r6", "r1", "r7"]
    assert adj_client.get(url).json() == done.json() and len(queued) == 1


def test_the_queue_api_says_why_a_count_failed(adj_client, queue_project, queued, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(selectors, "cohort_disputes", broken)
    adj_client.get("/api/projects/queue/reports/adjudication_queue/")
    tasks.queue_count_task(**queued[0])
    failed = adj_client.get("/api/projects/queue/reports/adjudication_queue/")
    assert failed.status_code == 500 and failed.json() == {"detail": "RuntimeError: the database went away"}


def test_the_schema_says_the_queue_may_answer_202(adj_client):
    schema = adj_client.get("/api/schema/", {"format": "json"}).json()
    answers = schema["paths"]["/api/projects/{slug}/reports/adjudication_queue/"]["get"]["responses"]
    assert "202" in answers and "200" in answers


def test_a_count_that_cannot_be_queued_is_a_failure_on_the_page_not_a_wait(adj_client, queue_project, monkeypatch,
                                                                          caplog):
    def broker_down(name, **kwargs):
        raise ConnectionRefusedError("[Errno 111] Connection refused")

    monkeypatch.setattr(queue_module, "task_send", broker_down)
    page = adj_client.get(url("adjudication-queue"))
    html = page.content.decode()
    assert page.status_code == 200 and "hx-trigger" not in html
    assert "failed: it could not be queued (ConnectionRefusedError: [Errno 111] Connection refused)" in html
    assert "queuing the count of the adjudication queue of project 'queue' failed" in caplog.text
    cohorts = project_sources(project=queue_project)["cohorts"][:2]
    assert cache.get(queue_module._counting_marks(queue_project, cohorts)[0]) is None  # nothing said to be counting
