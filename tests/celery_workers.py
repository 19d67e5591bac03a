"""Real Celery worker processes on a queue of their own, for the broker tests and the
worker-kill bench (bench/judge_takeover.py): solo pool (the task runs in the worker's own
process, so a SIGKILL kills the execution), one task at a time, and a client that sends judge
run tasks to that queue only, so parallel runs sharing a Redis server never take each other's
tasks."""
import subprocess
import sys
import uuid
from pathlib import Path

from celery import Celery

ROOT = Path(__file__).resolve().parent.parent


class SoloWorkers:
    def __init__(self, *, env: dict, broker: str, backend: str, prefix: str, log=subprocess.PIPE):
        self.env, self.log = env, log
        self.queue = f"{prefix}-{uuid.uuid4().hex[:8]}"
        self.started: list[subprocess.Popen] = []
        # Not the current app: the site's shared tasks (report pages, data jobs) would resolve to
        # this client in the test's thread from then on, and be sent to the broker instead of
        # running eagerly in every later test of the process.
        self.client = Celery(f"{prefix}-client", broker=broker, backend=backend, set_as_current=False)
        self.client.conf.update(task_serializer="json", result_serializer="json", accept_content=["json"])

    def start(self, name: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "evalsite", "worker", "--pool=solo", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "--loglevel=warning", "-n", f"{name}-{self.queue}@%h",
             "-Q", self.queue, "--prefetch-multiplier=1"],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
        )
        self.started.append(process)
        return process

    def wait_ready(self, count: int, timeout: float = 60) -> None:
        """Until ``count`` workers of this queue answer a ping (a worker takes seconds to start on a
        loaded machine: a test that needs two running at once waits for both)."""
        def ready():
            replies = self.client.control.ping(timeout=0.5) or []
            return len([r for r in replies for name in r if self.queue in name]) >= count

        wait_for(ready, timeout, f"{count} workers of {self.queue}", every=0.2)

    def send_options(self, **options):
        return self.client.send_task("grading.judge_run_execute", queue=self.queue, **options)

    def send(self, run_id: int):
        """One copy of a run's task, as a redelivery or a double click would send it."""
        return self.send_options(kwargs={"run_id": run_id})

    def dispatch(self, run_id: int, *, watch_after: float | None = None) -> None:
        """A run queued as the site queues it: the execution and a watcher copy."""
        from grading.tasks import judge_run_dispatch

        judge_run_dispatch(run_id=run_id, watch_after=watch_after, send=self.send_options)

    def stop(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.terminate()
        for process in self.started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        with self.client.connection_for_write() as conn:
            conn.default_channel.queue_delete(self.queue)  # a watcher copy may be left in it


def wait_for(predicate, timeout: float, what: str, *, every: float = 0.05):
    """Poll ``predicate`` until it returns something true (returned), or fail naming ``what``."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")
