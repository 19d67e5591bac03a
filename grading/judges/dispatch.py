"""Queueing a judge run on Celery by the task's name (``grading.judge_run_execute``, declared in
``grading.tasks``; sent through ``grading.queueing``), so the services that start and resume runs
never import the task module."""
from ..queueing import task_send
from .lease import LEASE_SECONDS

RUN_TASK = "grading.judge_run_execute"


def judge_run_dispatch(*, run_id: int, send=None, watch_after: float | None = None) -> None:
    """Queue a run: the copy that executes it, and a watcher copy due once a lease could have
    lapsed. The watcher finds the run held by a live worker and looks again later (see the
    task), finds it ended and stops, or finds its worker dead (lease lapsed) and takes it
    over: a SIGKILLed worker's run is finished without a button and without waiting for the
    broker's visibility timeout. ``send``: how to send a copy (default: the current app, by the
    task's name); ``watch_after``: seconds (default: the lease plus five)."""
    task_send(RUN_TASK, kwargs={"run_id": run_id}, send=send,
              watch_after=LEASE_SECONDS + 5 if watch_after is None else watch_after)
