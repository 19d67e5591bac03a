"""Sending a background task by its name, so a module that starts work (a judge run, a data job)
never imports ``grading.tasks`` (which imports what those tasks run: the cycles of issue 23,
point 4). A data job is sent twice: the copy that does it and a watcher copy due once the
worker's lease could have lapsed (see its task); a judge run once (a dead worker's run is found by
the sweeper, ``grading.judges.sweep``). When the app is eager (tests,
``CELERY_TASK_ALWAYS_EAGER``) the task runs here and now, found by name in the app's registry,
and no watcher is sent."""
from celery import current_app, signature


def task_send(name: str, *, kwargs: dict, watch_after: float | None, send=None) -> None:
    """Queue task ``name`` with ``kwargs`` and, unless ``watch_after`` is None, its watcher
    ``watch_after`` seconds later. ``send``: how to send a copy (``send(kwargs=..., countdown=...)``;
    default: the current app, by the task's name)."""
    if send is None:
        if current_app.conf.task_always_eager:
            if name not in current_app.tasks:
                current_app.autodiscover_tasks(force=True)  # what a worker does at start: import the apps' tasks modules
            current_app.tasks[name].delay(**kwargs)
            return
        send = signature(name, app=current_app).apply_async
    send(kwargs=kwargs)
    if watch_after is not None:
        send(kwargs=kwargs, countdown=watch_after)
