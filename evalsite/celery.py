"""The Celery application; tasks live in each app's ``tasks.py``. Production settings unless
DJANGO_SETTINGS_MODULE says otherwise (``evalsite.settings.DEFAULT_SETTINGS_MODULE``)."""
import os
import sys
from pathlib import Path

from celery import Celery
from celery.signals import worker_init
from django.conf import settings

from .settings import settings_module_default

settings_module_default()

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["grading.reports"])


@app.task(name="evalsite.ping")
def ping(value: int) -> dict:  # noqa: D401
    """Round-trip check for a broker and a worker: returns the value, the worker's pid, its niceness
    and which of the libraries report computations need it has loaded (all: it preloads them)."""
    from grading.reports.registry import COMPUTATION_LIBRARIES  # lazy: the apps are loaded once a task runs

    return {"value": value, "squared": value * value, "pid": os.getpid(), "nice": os.nice(0),
            "loaded": [name for name in COMPUTATION_LIBRARIES if name in sys.modules]}


@worker_init.connect(weak=False)
def _worker_priority(**kwargs) -> None:
    """A worker runs below the web processes (``EVALSITE_WORKER_NICE``); set before its pool
    starts, so every pool process inherits it."""
    if settings.EVALSITE_WORKER_NICE:
        os.nice(settings.EVALSITE_WORKER_NICE)


@worker_init.connect(weak=False)
def _worker_preload(**kwargs) -> None:
    """The libraries and report modules the worker's computations need, loaded before its pool
    starts (``grading.reports.registry.worker_preload``)."""
    from grading.reports.registry import worker_preload  # lazy: the apps are loaded once the worker starts

    worker_preload()


def _ensure_broker_folders() -> None:
    """The embedded file-system broker needs its folders before a worker or client starts."""
    options = app.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
        if options.get(key):
            Path(options[key]).mkdir(parents=True, exist_ok=True)


app.on_after_configure.connect(lambda sender, **kwargs: _ensure_broker_folders(), weak=False)
