"""Queueing a judge run on Celery by the task's name (``grading.judge_run_execute``, declared in
``grading.tasks``), so the services that start and resume runs never import the task module
(issue 23, point 4: the import cycle ``bundles`` → ``judges.services`` → ``tasks`` → ``jobs`` →
``bundles``). The task is sent to the broker by name; when the app is eager (tests,
``CELERY_TASK_ALWAYS_EAGER``) it is executed here, found by name in the app's registry (the apps'
``tasks`` modules are discovered as a worker discovers them when it is not registered yet).
"""
from celery import current_app, signature

from .lease import LEASE_SECONDS

RUN_TASK = "grading.judge_run_execute"


def judge_run_dispatch(*, run_id: int, send=None, watch_after: float | None = None) -> None:
    """Queue a run: the copy that executes it, and a watcher copy due once a lease could have
    lapsed. The watcher finds the run held by a live worker and looks again later (see the
    task), finds it ended and stops, or finds its worker dead (lease lapsed) and takes it
    over: a SIGKILLed worker's run is finished without a button and without waiting for the
    broker's visibility timeout. ``send``: how to send a copy (default: the current app, by the
    task's name); ``watch_after``: seconds (default: the lease plus five)."""
    if send is None:
        if current_app.conf.task_always_eager:  # tests and scripts: executes here and now, nothing to watch
            if RUN_TASK not in current_app.tasks:
                current_app.autodiscover_tasks(force=True)  # what a worker does at start: import the apps' tasks modules
            current_app.tasks[RUN_TASK].delay(run_id=run_id)
            return
        send = signature(RUN_TASK, app=current_app).apply_async
    send(kwargs={"run_id": run_id})
    send(kwargs={"run_id": run_id}, countdown=LEASE_SECONDS + 5 if watch_after is None else watch_after)
