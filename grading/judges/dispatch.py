"""Queueing a judge run on Celery by the task's name (``grading.judge_run_execute``, declared in
``grading.tasks``; sent through ``grading.queueing``), so the services that start and resume runs
and the sweeper that hands over a dead worker's run never import the task module."""
from ..queueing import task_send

RUN_TASK = "grading.judge_run_execute"


def judge_run_dispatch(*, run_id: int, handoff: str = "", send=None) -> None:
    """Queue one execution of a run. No watcher copy: a run whose worker dies is found by the
    sweeper once its lease lapses (``grading.judges.sweep``), whichever worker held which
    message. ``handoff``: the token the sweeper handed the run over with (the execution claims
    the run with it); ``send``: how to send the copy (default: the current app, by the task's name)."""
    kwargs = {"run_id": run_id, **({"handoff": handoff} if handoff else {})}
    task_send(RUN_TASK, kwargs=kwargs, send=send, watch_after=None)
