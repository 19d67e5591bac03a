"""A real judge run through Redis to a real Celery worker process that writes to the same
PostgreSQL test database; only in the PostgreSQL + Redis leg of `.ci/run`."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from celery import Celery
from django.db import connection

from annotation.models import Project
from grading.bundles import bundle_import
from grading.judges.services import judge_run_create
from grading.models import Judge, JudgeRun, Judgment

ROOT = Path(__file__).resolve().parent.parent
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
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalsite", "worker", "--pool=solo", "--without-gossip",
         "--without-mingle", "--without-heartbeat", "--loglevel=warning"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        client = Celery("evalsite-test-client", broker=BROKER, backend=backend)
        client.conf.update(task_serializer="json", result_serializer="json", accept_content=["json"])
        summary = client.send_task("grading.judge_run_execute", kwargs={"run_id": run.pk}).get(timeout=120)
    except Exception:
        worker.terminate()
        print(worker.communicate(timeout=20)[0].decode(errors="replace"))
        raise
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
    run.refresh_from_db()
    assert run.status == JudgeRun.FINISHED
    # 4 responses: 3 on case c1 (3 criteria each) + 1 on c2 (the 2 project criteria) = 11 calls.
    assert Judgment.objects.filter(judge=judge).count() == 11 == run.done_calls
    assert summary["judgments"] == 11
