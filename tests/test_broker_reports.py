"""A report requested through the API is computed by a real Celery worker process through Redis
(issue 26, point 3), sharing the PostgreSQL test database and its cache table with the test: two
identical requests at once queue one computation and both answer 202 with one status URL, which
answers 200 with the result once the worker has stored it; after a label changes, the next
requests queue one computation more. Only in the PostgreSQL + Redis leg of `.ci/run`."""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client

from annotation.models import Label, Project
from annotation.services import label_save
from grading.bundles import bundle_import
from grading.reports import background
from tests.celery_workers import SoloWorkers, wait_for
from tests.roles import grant

BROKER = os.environ.get("CELERY_BROKER_URL", "")
TABLE = "report_test_cache"  # the cache of the test and of its worker
URL, QUERY = "/api/projects/mini/reports/agreement/", {"a": "cohort:group-1", "b": "cohort:group-2"}


def _worker_env() -> tuple[dict, str]:
    settings = connection.settings_dict
    host = f"{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}"
    backend = os.environ.get("CELERY_RESULT_BACKEND") or BROKER
    return {**os.environ, "DATABASE_URL": f"postgres://{settings['USER'] or 'postgres'}@{host}/{settings['NAME']}",
            "CELERY_BROKER_URL": BROKER, "CELERY_RESULT_BACKEND": backend, "DJANGO_SETTINGS_MODULE": "evalsite.settings.test",
            "CELERY_TASK_ALWAYS_EAGER": "false", "EVALSITE_TEST_CACHE_TABLE": TABLE}, backend


def _result(client: Client, url: str) -> dict:
    """The status URL's answer once it is the result (202 until then; nothing else is expected)."""
    def answered():
        response = client.get(url)
        assert response.status_code in (200, 202), response.content
        return response.json() if response.status_code == 200 else None

    return wait_for(answered, 120, "the report's result at its status URL", every=0.25)


@pytest.mark.broker
@pytest.mark.skipif(not BROKER.startswith("redis://"), reason="needs CELERY_BROKER_URL=redis://...")
def test_identical_requests_share_one_computation_on_a_worker(transactional_db, mini_bundle, monkeypatch, settings):
    if connection.vendor != "postgresql":
        pytest.skip("the worker process must share the test database: PostgreSQL only")
    settings.CACHES = {"default": {"BACKEND": "evalsite.cache.DatabaseCache", "LOCATION": TABLE}}
    call_command("createcachetable", verbosity=0)
    bundle_import(path=mini_bundle)
    reader = grant(get_user_model().objects.create_user("reader"), Project.objects.get(slug="mini"), "viewer")
    clients = [Client(), Client()]
    for client in clients:
        client.force_login(reader)
    env, backend = _worker_env()
    monkeypatch.setenv("CELERY_BROKER_URL", BROKER)
    monkeypatch.setenv("CELERY_RESULT_BACKEND", backend)
    workers = SoloWorkers(env=env, broker=BROKER, backend=backend, prefix="report-test")
    sent = []

    def enqueue(**kwargs):  # as the site queues it, to this test's own queue
        sent.append(kwargs)
        workers.client.send_task("grading.reports.compute", kwargs=kwargs, queue=workers.queue)

    monkeypatch.setattr(background, "_enqueue", enqueue)
    together = threading.Barrier(2)

    def ask(client: Client):
        try:
            together.wait(timeout=60)
            return client.get(URL, QUERY)
        finally:
            connection.close()  # this thread's own connection

    try:
        with ThreadPoolExecutor(2) as pool:  # no worker yet: both requests find the computation pending
            answers = list(pool.map(ask, clients))
        assert [a.status_code for a in answers] == [202, 202], [a.content for a in answers]
        assert len(sent) == 1
        status_url = answers[0]["Location"]
        assert answers[1]["Location"] == status_url == answers[0].json()["status_url"]
        workers.start("solo")
        result = _result(clients[0], status_url)
        assert result["mf1"] == pytest.approx(68 / 77) and len(sent) == 1
        assert clients[1].get(URL, QUERY).json() == result and len(sent) == 1  # stored: no computation more

        label = Label.objects.select_related("response", "criterion", "cohort", "annotator").get(
            annotator__username="ann3", response__external_id="r2", criterion__external_id="c1-ecg")
        label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
                   changed_by=None, verdict="not_met", replace=True)
        again = [client.get(URL, QUERY) for client in clients]
        assert {a.status_code for a in again} <= {200, 202} and len(sent) == 2  # one computation of the new data
        changed = _result(clients[1], again[0].get("Location") or status_url)
        assert changed["mf1"] == 1.0
        assert clients[0].get(URL, QUERY).json() == changed and len(sent) == 2
    finally:
        workers.stop()
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE {TABLE}")


@pytest.mark.broker
@pytest.mark.skipif(not BROKER.startswith("redis://"), reason="needs CELERY_BROKER_URL=redis://...")
def test_the_adjudication_queue_is_counted_by_a_worker_and_the_page_shows_it(transactional_db, mini_bundle, monkeypatch,
                                                                           settings):
    """The queue page with nothing counted queues the count by its task's name; a real worker process
    knows that name, counts into the shared cache, and the page's next look shows the queue. Looks
    while it counts queue nothing more."""
    if connection.vendor != "postgresql":
        pytest.skip("the worker process must share the test database: PostgreSQL only")
    from grading.reports import adjudication_queue

    settings.CACHES = {"default": {"BACKEND": "evalsite.cache.DatabaseCache", "LOCATION": TABLE}}
    call_command("createcachetable", verbosity=0)
    bundle_import(path=mini_bundle)
    client = Client()
    client.force_login(grant(get_user_model().objects.create_user("adj"), Project.objects.get(slug="mini"), "adjudicator"))
    env, backend = _worker_env()
    workers = SoloWorkers(env=env, broker=BROKER, backend=backend, prefix="queue-test")
    sent = []

    def send(name, *, kwargs, watch_after, send=None):  # as the site sends it, to this test's own queue
        sent.append(name)
        workers.client.send_task(name, kwargs=kwargs, queue=workers.queue)

    monkeypatch.setattr(adjudication_queue, "task_send", send)
    url = "/projects/mini/adjudication/"
    try:
        first = client.get(url).content.decode()
        assert 'id="queue-counting"' in first and 'id="queue"' not in first and sent == [adjudication_queue.COUNT_TASK]
        assert 'id="queue-counting"' in client.get(url).content.decode() and len(sent) == 1
        workers.start("solo")

        def shown():
            html = client.get(url).content.decode()
            return html if 'id="queue"' in html else None

        html = wait_for(shown, 120, "the queue counted by the worker", every=0.25)
        assert 'data-response="' in html and len(sent) == 1
    finally:
        workers.stop()
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE {TABLE}")
