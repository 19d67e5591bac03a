"""Celery tasks of the grading app. Tasks are thin: they take ids, load, call one service,
and own the retry policy."""
from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from .jobs import (
    data_job_dispatch,  # noqa: F401  (sent by name from there; tests and bench import it here)
    data_job_resend_unsent,
    data_job_run,
)
from .judges.dispatch import judge_run_dispatch  # noqa: F401  (sent by name from there; tests import it here)
from .judges.sweep import judge_run_sweep
from .models import DataJob, JudgeRun


@shared_task(
    name="grading.judge_run_execute", acks_late=True, reject_on_worker_lost=True,
    autoretry_for=(OperationalError,), retry_backoff=2, retry_backoff_max=60, max_retries=5,
)
def judge_run_execute_task(*, run_id: int, handoff: str = "") -> dict:
    """Execute or resume a judge run (``handoff``: the token the sweeper handed it over with).
    Finished calls are never repeated, and two copies never execute the same run at once: a copy
    that finds the run held by a live execution (a redelivery, a double click, a hand-off another
    sweep superseded) ends here. A worker that dies holding the run is no copy's business: the
    sweeper (``judge_run_sweep_task``) hands its run over once the lease lapses."""
    from .judges.runner import RunHeld, judge_run_execute  # lazy: the runner brings pandas: loaded by the worker that runs a judge

    run = JudgeRun.objects.select_related("judge__project", "judge__prompt_template").get(pk=run_id)
    try:
        return judge_run_execute(run=run, handoff=handoff).as_dict()
    except RunHeld:
        return {"run": run_id, "status": "held elsewhere"}
    except OperationalError:  # e.g. a locked SQLite file: queue the run again and let Celery retry
        JudgeRun.objects.filter(pk=run_id, status=JudgeRun.FAILED).update(status=JudgeRun.QUEUED)
        raise


@shared_task(name="grading.judge_run_sweep", ignore_result=True)
def judge_run_sweep_task() -> dict:
    """Sent by Celery beat every ``EVALSITE_JUDGE_SWEEP_SECONDS`` (``CELERY_BEAT_SCHEDULE``; it
    expires after one interval, so sweeps that waited behind busy workers do not pile up): hand
    over the runs whose worker died, stop the stopping ones, and send again the runs and data jobs
    queued for ``EVALSITE_QUEUED_RESEND_SECONDS`` whose message may be lost. No result is stored."""
    return {**judge_run_sweep().as_dict(), "jobs_resent": list(data_job_resend_unsent())}


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
