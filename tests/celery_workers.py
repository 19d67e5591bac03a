"""Real Celery worker processes on a queue of their own, for the broker tests and the
worker-kill bench (bench/judge_takeover.py), and Celery beat sending the judge-run sweeper to
that queue. A worker is a solo pool by default (the task runs in the worker's own process, one
at a time) or prefork (``start(..., concurrency=2)``: a parent prefetching for pool processes,
as deployed); each is the leader of a process group of its own, so ``kill`` SIGKILLs the worker
and its pool processes at once, as a lost machine or an OOM-killed container would. The client
sends judge run tasks to that queue only, and the workers and beat default to it, so parallel
runs sharing a Redis server never take each other's tasks."""
import os
import signal
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
        self.queues = [self.queue]
        self.started: list[subprocess.Popen] = []
        # Not the current app: the site's shared tasks (report pages, data jobs) would resolve to
        # this client in the test's thread from then on, and be sent to the broker instead of
        # running eagerly in every later test of the process.
        self.client = Celery(f"{prefix}-client", broker=broker, backend=backend, set_as_current=False)
        self.client.conf.update(task_serializer="json", result_serializer="json", accept_content=["json"])

    def _spawn(self, args: list[str]) -> subprocess.Popen:
        # The processes send what they send (a sweep, a hand-off) to this queue too.
        env = {**self.env, "CELERY_TASK_DEFAULT_QUEUE": self.queue}
        process = subprocess.Popen([sys.executable, "-m", "celery", "-A", "evalsite", *args], cwd=ROOT, env=env,
                                   stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.started.append(process)
        return process

    def own_queue(self, name: str) -> str:
        return f"{self.queue}.{name}"

    def start(self, name: str, *, concurrency: int = 0, own_queue: bool = False) -> subprocess.Popen:
        """A worker on this queue: solo pool, or prefork with ``concurrency`` pool processes;
        ``own_queue``: also on a queue of its own (``dispatch(..., worker=name)`` sends there)."""
        pool = ["--pool=prefork", f"--concurrency={concurrency}"] if concurrency else ["--pool=solo"]
        queues = [self.queue] + ([self.own_queue(name)] if own_queue else [])
        if own_queue:
            self.queues.append(self.own_queue(name))
        return self._spawn(["worker", *pool, "--without-gossip", "--without-mingle", "--without-heartbeat",
                            "--loglevel=warning", "-n", f"{name}-{self.queue}@%h", "-Q", ",".join(queues),
                            "--prefetch-multiplier=1"])

    def start_beat(self, schedule: Path) -> subprocess.Popen:
        """Celery beat with the site's schedule (the judge-run sweeper), sending to this queue;
        ``schedule``: the file beat keeps its last send times in."""
        return self._spawn(["beat", "--loglevel=warning", "-s", str(schedule)])

    @staticmethod
    def kill(process: subprocess.Popen) -> None:
        """SIGKILL a worker and its pool processes (its process group) and reap it."""
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    @staticmethod
    def pool_pids(process: subprocess.Popen) -> set[int]:
        """The worker's own pid and its pool processes' (the pids a run's lease owner may name)."""
        pids = {process.pid}
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        if children.exists():
            pids |= {int(pid) for pid in children.read_text().split()}
        return pids

    def wait_ready(self, count: int, timeout: float = 60) -> None:
        """Until ``count`` workers of this queue answer a ping (a worker takes seconds to start on a
        loaded machine: a test that needs two running at once waits for both)."""
        def ready():
            replies = self.client.control.ping(timeout=0.5) or []
            return len([r for r in replies for name in r if self.queue in name]) >= count

        wait_for(ready, timeout, f"{count} workers of {self.queue}", every=0.2)

    def send_options(self, queue: str = "", **options):
        return self.client.send_task("grading.judge_run_execute", queue=queue or self.queue, **options)

    def send(self, run_id: int):
        """One copy of a run's task, as a redelivery or a double click would send it."""
        return self.send_options(kwargs={"run_id": run_id})

    def dispatch(self, run_id: int, *, worker: str = "") -> None:
        """A run queued as the site queues it (one execution; no watcher copy); ``worker``: to the
        queue of that worker's own (``start(..., own_queue=True)``), so it gets every copy."""
        from grading.tasks import judge_run_dispatch

        queue = self.own_queue(worker) if worker else self.queue
        judge_run_dispatch(run_id=run_id, send=lambda **options: self.send_options(queue=queue, **options))

    def stop(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.terminate()
        for process in self.started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        with self.client.connection_for_write() as conn:
            for queue in self.queues:
                conn.default_channel.queue_delete(queue)  # a message may be left in it (a killed worker's)


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
