"""A real task through a real broker to a real Celery worker process, and its result back.

Always with the embedded file-system broker that `make demo` uses; with Redis as well when
CELERY_BROKER_URL points at one (the PostgreSQL + Redis leg of `.ci/run`). The worker listens
on a queue of this test's own, so test processes sharing a Redis server never take each
other's tasks.

Celery refuses ``result.get()`` while its process-wide "inside a task" flag is set, and an
eager task sets that flag for as long as it runs, in whichever thread; two eager tasks that
overlap in two threads (the live server's, in the browser tests) can leave it set for good.
The test thread is never inside a task, so it says so (``disable_sync_subtasks=False``) and
passes whatever other tests of this process did before it.
"""
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from celery import Celery
from celery.result import denied_join_result
from django.conf import settings

from grading.reports.registry import COMPUTATION_LIBRARIES

ROOT = Path(__file__).resolve().parent.parent


def brokers():
    yield pytest.param("filesystem", id="filesystem")
    url = os.environ.get("CELERY_BROKER_URL", "")
    if url.startswith("redis://"):
        yield pytest.param(url, id="redis")


def broker_config(broker: str, tmp_path: Path) -> tuple[dict, dict]:
    """Environment for the worker and configuration for the client app."""
    if broker == "filesystem":
        queue, processed, control = (tmp_path / "broker" / name for name in ("queue", "processed", "control"))
        queue.mkdir(parents=True), processed.mkdir(parents=True), control.mkdir(parents=True)
        backend = f"file://{tmp_path / 'results'}"
        (tmp_path / "results").mkdir()
        env = {"CELERY_BROKER_URL": "filesystem://", "EVALSITE_VAR_DIR": str(tmp_path), "CELERY_RESULT_BACKEND": backend}
        conf = {"broker_url": "filesystem://", "result_backend": backend, "broker_transport_options": {
            "data_folder_in": str(queue), "data_folder_out": str(queue), "processed_folder": str(processed),
            "control_folder": str(control)}}
        return env, conf
    backend = os.environ.get("CELERY_RESULT_BACKEND", "").startswith("redis://") and os.environ["CELERY_RESULT_BACKEND"] or broker
    return {"CELERY_BROKER_URL": broker, "CELERY_RESULT_BACKEND": backend}, {"broker_url": broker, "result_backend": backend}


@pytest.mark.broker
@pytest.mark.parametrize("broker", list(brokers()))
def test_task_round_trip_through_a_real_worker(broker, tmp_path, monkeypatch):
    env, conf = broker_config(broker, tmp_path)
    for name, value in env.items():  # Celery reads CELERY_BROKER_URL from the environment first
        monkeypatch.setenv(name, value)
    worker_env = {**os.environ, **env, "DJANGO_SETTINGS_MODULE": "evalsite.settings.test", "CELERY_TASK_ALWAYS_EAGER": "false"}
    queue = f"broker-test-{uuid.uuid4().hex[:8]}"
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalsite", "worker", "--pool=solo", "--concurrency=1",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel=warning", "-Q", queue,
         "-n", f"{queue}@%h"],
        cwd=ROOT, env=worker_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        client = Celery("evalsite-test-client", set_as_current=False)  # the site's app stays this process's own
        client.conf.update(conf, task_serializer="json", result_serializer="json", accept_content=["json"])
        result = client.send_task("evalsite.ping", kwargs={"value": 7}, queue=queue)
        try:
            with denied_join_result():  # the flag as an earlier test's eager tasks may have left it
                payload = result.get(timeout=60, disable_sync_subtasks=False)
        except Exception:
            worker.terminate()
            print(worker.communicate(timeout=20)[0].decode(errors="replace"))
            raise
        assert payload["value"] == 7 and payload["squared"] == 49
        assert payload["pid"] == worker.pid, "the task must run in the worker process, not in the test"
        # below the web processes: this process's niceness (the worker's parent) + EVALSITE_WORKER_NICE
        assert settings.EVALSITE_WORKER_NICE > 0
        assert payload["nice"] == min(os.nice(0) + settings.EVALSITE_WORKER_NICE, 19)
        # the libraries report computations import, loaded when the worker started, before any report
        assert payload["loaded"] == list(COMPUTATION_LIBRARIES)
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
        if broker != "filesystem":
            with client.connection_for_write() as conn:
                conn.default_channel.queue_delete(queue)  # and its binding: nothing of this test stays in Redis
