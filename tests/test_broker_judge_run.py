"""A real judge run through Redis to a real Celery worker process that writes to the same
PostgreSQL test database; only in the PostgreSQL + Redis leg of `.ci/run`."""
import os

import pytest
from django.db import connection

from annotation.models import Project
from grading.bundles import bundle_import
from grading.judges.services import judge_run_create
from grading.models import Judge, JudgeRun, Judgment
from tests.celery_workers import SoloWorkers

BROKER = os.environ.get("CELERY_BROKER_URL", "")


@pytest.mark.broker
@pytest.mark.skipif(not BROKER.startswith("redis://"), reason="needs CELERY_BROKER_URL=redis://...")
def test_baseline_judge_run_executes_on_a_worker(transactional_db, mini_bundle, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("the worker process must share the test database: PostgreSQL only")
    bundle_import(path=mini_bundle)
    project = Project.objects.get(slug="mini")
    judge = Judge.objects.create(project=project, name="lexical", backend=Judge.BASELINE, model="lexical-baseline")
    run = judge_run_create(judge=judge)
    settings = connection.settings_dict
    host = f"{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}"
    database_url = f"postgres://{settings['USER'] or 'postgres'}@{host}/{settings['NAME']}"
    backend = os.environ.get("CELERY_RESULT_BACKEND") or BROKER
    env = {**os.environ, "DATABASE_URL": database_url, "CELERY_BROKER_URL": BROKER, "CELERY_RESULT_BACKEND": backend,
           "DJANGO_SETTINGS_MODULE": "evalsite.settings.test", "CELERY_TASK_ALWAYS_EAGER": "false"}
    monkeypatch.setenv("CELERY_BROKER_URL", BROKER)
    monkeypatch.setenv("CELERY_RESULT_BACKEND", backend)
    # A queue of this test's own: another test process on the same Redis (xdist, or another
    # checkout's suite) never takes this run, and this worker never takes theirs.
    workers = SoloWorkers(env=env, broker=BROKER, backend=backend, prefix="judge-run-test")
    worker = workers.start("solo")
    try:
        # disable_sync_subtasks=False: this thread is no task. Celery's "inside a task" flag is one
        # per process, and eager tasks run by the live server's threads (browser tests) set it.
        summary = workers.send(run.pk).get(timeout=120, disable_sync_subtasks=False)
    except Exception:
        worker.terminate()
        print(worker.communicate(timeout=20)[0].decode(errors="replace"))
        raise
    finally:
        workers.stop()
    run.refresh_from_db()
    assert run.status == JudgeRun.FINISHED
    # 4 responses: 3 on case c1 (3 criteria each) + 1 on c2 (the 2 project criteria) = 11 calls.
    assert Judgment.objects.filter(judge=judge).count() == 11 == run.done_calls
    assert summary["judgments"] == 11
