"""Celery tasks of the grading app. Tasks are thin: they take ids, load, call one service,
and own the retry policy."""
from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from .jobs import (
    data_job_dispatch,  # noqa: F401  (sent by name from there; tests and bench import it here)
    data_job_run,
)
from .judges.dispatch import judge_run_dispatch  # noqa: F401  (sent by name from there; tests import it here)
from .judges.lease import LEASE_SECONDS
from .models import DataJob, JudgeRun


@shared_task(
    name="grading.judge_run_execute", acks_late=True, reject_on_worker_lost=True, bind=True,
    autoretry_for=(OperationalError,), retry_backoff=2, retry_backoff_max=60, max_retries=5,
)
def judge_run_execute_task(self, *, run_id: int) -> dict:
    """Execute or resume a judge run. Acked late and re-queued when the worker dies, so a
    crashed worker's run is picked up by the next one once its lease lapses
    (``grading.judges.lease``); finished calls are never repeated, and two copies never
    execute the same run at once."""
    from .judges.runner import RunHeld, judge_run_execute  # lazy: the runner brings pandas: loaded by the worker that runs a judge

    run = JudgeRun.objects.select_related("judge__project", "judge__prompt_template").get(pk=run_id)
    try:
        return judge_run_execute(run=run).as_dict()
    except RunHeld:
        # Another worker holds the run's lease (a second copy of this task, or a copy the broker
        # redelivered). Look again once the lease could have lapsed: if that worker died, this
        # copy takes the run over; if the run ended, it stops here. No copy executes while
        # another holds the lease.
        if not self.app.conf.task_always_eager:
            queue = (self.request.delivery_info or {}).get("routing_key")  # the queue it came from
            self.apply_async(kwargs={"run_id": run_id}, countdown=LEASE_SECONDS + 5, queue=queue)
        return {"run": run_id, "status": "held elsewhere"}
    except OperationalError:  # e.g. a locked SQLite file: queue the run again and let Celery retry
        JudgeRun.objects.filter(pk=run_id, status=JudgeRun.FAILED).update(status=JudgeRun.QUEUED)
        raise


@shared_task(name="grading.data_job_run", acks_late=True, reject_on_worker_lost=True, bind=True)
def data_job_task(self, *, job_id: int) -> dict:
    """Run a gold export or a bundle import queued from the browser or the API (``grading.jobs``).

    Acknowledged when it ends, and sent twice (``data_job_dispatch``): the copy that runs it and a
    watcher due once the job's lease could have lapsed. A copy that finds the job running with a
    live heartbeat looks again a lease later; one that finds its worker dead (no heartbeat for a
    lease) takes it over; one that finds it ended stops. So a SIGKILLed worker's job is finished
    by another worker without waiting for the broker's visibility timeout."""
    job = data_job_run(job_id=job_id)
    if job.status == DataJob.RUNNING and not getattr(job, "claimed", False) and not self.app.conf.task_always_eager:
        queue = (self.request.delivery_info or {}).get("routing_key")
        self.apply_async(kwargs={"job_id": job_id}, countdown=settings.EVALSITE_JOB_LEASE_SECONDS + 5, queue=queue)
        return {"job": job.pk, "status": "held elsewhere"}
    return {"job": job.pk, "status": job.status}
