"""The Celery application; tasks live in each app's ``tasks.py``."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="evalsite.ping")
def ping(value: int) -> dict:
    """Round-trip check for a broker and a worker: returns the value and the worker's pid."""
    return {"value": value, "squared": value * value, "pid": os.getpid()}
