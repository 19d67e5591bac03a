"""Background data jobs for browser users (issue 10, point 7): a gold export (a .zip to download)
or an import (an uploaded file in one of the declared formats, ``grading.formats``), each a
Celery task, never run inside the web request.

``data_job_*_start`` create the job and queue it once the transaction commits; ``data_job_run``
(the task's one service) claims a queued job — or a running one whose worker fell silent for
longer than ``EVALSITE_JOB_LEASE_SECONDS`` (it died: the broker delivered the task again) — so a
job runs once at a time even if the broker delivers it twice; it runs it with progress and a
heartbeat written as it goes, and ends it finished with its result or failed with the one-line
error (an import's error names the file, line and field); an import's upload is removed when it
ends, finished or failed (a failed job is not run again). A killed worker leaves nothing
half-written: an import is one transaction, and a new attempt at an export first removes what
the dead one left in the job's directory.
"""
import json
import logging
import shutil
import threading
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q, QuerySet
from django.http import Http404
from django.utils import timezone

from annotation.access import project_check, user_may
from annotation.models import Project

from .formats.registry import FormatError, ImportRequest, format_for, format_get, format_import, formats, upload_suffixes
from .models import DataJob
from .queueing import task_send

logger = logging.getLogger(__name__)
PROGRESS_EVERY_SECONDS = 0.5


def size_text(n: int) -> str:
    """A byte count as people read it: 950 bytes, 12.3 kB, 200 MB."""
    if n < 1000:
        return f"{n} bytes"
    if n < 1000**2:
        return f"{n / 1000:.1f} kB"
    return f"{n / 1000**2:.1f} MB" if n < 10 * 1000**2 else f"{n / 1000**2:.0f} MB"


def jobs_dir(job: DataJob) -> Path:
    path = Path(settings.EVALSITE_JOBS_DIR) / str(job.pk)
    path.mkdir(parents=True, exist_ok=True)
    return path


def job_path(job: DataJob) -> Path | None:
    """The job's file (export result or upload), if it has one and it is still there."""
    if not job.file:
        return None
    path = Path(settings.EVALSITE_JOBS_DIR) / job.file
    return path if path.is_file() else None


def data_job_get_for(*, user, job_id: int) -> DataJob:
    """A job, for whoever's role in its project allows its kind of work (export: adjudicators and
    managers; import: managers), by the rule of ``annotation.access``: 404 without a role there,
    403 for a role that does not allow it. Starting a job gives no lasting right to it: a user who
    lost the role loses the job's page and file with it. A job of no project (a new project's
    import, which only superusers start) is the superusers'. Pages and the API both ask here."""
    job = DataJob.objects.select_related("project", "user").filter(pk=job_id).first()
    if job is None or (job.project_id is None and not user.is_superuser):
        raise Http404("No such job")
    if job.project_id is not None:
        project_check(project=job.project_id, user=user, action="export" if job.kind == DataJob.EXPORT else "manage")
    return job


def data_jobs_for(*, project, user) -> tuple[bool, bool, QuerySet]:
    """Whether the user may export and import, and the project's jobs of the kinds the user may
    open (an adjudicator sees exports, not the managers' imports, whose status partial would
    answer them 403), newest first with the user who started each: the section's recent jobs and
    the jobs page's and the API's list."""
    may_export = user_may(project=project, user=user, action="export")
    may_import = user_may(project=project, user=user, action="manage")
    kinds = [kind for kind, allowed in ((DataJob.EXPORT, may_export), (DataJob.IMPORT, may_import)) if allowed]
    jobs = DataJob.objects.filter(project=project, kind__in=kinds).select_related("user").order_by("-created_at", "-pk")
    return may_export, may_import, jobs


JOB_TASK = "grading.data_job_run"


def data_job_dispatch(*, job_id: int, send=None, watch_after: float | None = None) -> None:
    """Queue a data job by the task's name (``grading.tasks``): the copy that runs it and a
    watcher copy (see the task). ``send``: how to send a copy (default: the current app);
    ``watch_after``: seconds (default: the lease plus five)."""
    task_send(JOB_TASK, kwargs={"job_id": job_id}, send=send,
              watch_after=settings.EVALSITE_JOB_LEASE_SECONDS + 5 if watch_after is None else watch_after)


def _enqueue(job: DataJob) -> None:
    transaction.on_commit(lambda: data_job_dispatch(job_id=job.pk))


def data_job_resend_unsent(*, now=None, send=None) -> tuple[int, ...]:
    """Send again every job queued for ``EVALSITE_QUEUED_RESEND_SECONDS`` since it was last sent
    (``heartbeat_at`` of a queued job; never re-sent: ``created_at``), whose copies were lost with
    the broker's state (a Redis restart without persistence, a purge): the watcher copy cannot
    help, it was lost too. Called by the periodic sweep (``grading.judge_run_sweep``). Each job is
    marked sent with one conditional UPDATE (of several sweepers one sends it); if its first copy
    still exists, the copy that comes second finds the job taken or ended (``data_job_run``'s
    claim). Returns the jobs sent."""
    now = now or timezone.now()
    due = now - timedelta(seconds=settings.EVALSITE_QUEUED_RESEND_SECONDS)
    unsent = (Q(status=DataJob.QUEUED) & ~Q(stage=DataJob.COLUMNS_STAGE)
              & (Q(heartbeat_at__lt=due) | Q(heartbeat_at__isnull=True, created_at__lt=due)))
    sent = []
    for job_id in DataJob.objects.filter(unsent).order_by("pk").values_list("pk", flat=True):
        if DataJob.objects.filter(Q(pk=job_id) & unsent).update(heartbeat_at=now):
            data_job_dispatch(job_id=job_id, send=send)
            sent.append(job_id)
    return tuple(sent)


@transaction.atomic
def data_job_export_start(*, project: Project, user) -> DataJob:
    """Queue a gold export of ``project`` (the caller checked the user may export)."""
    job = DataJob.objects.create(kind=DataJob.EXPORT, project=project, user=user, stage="queued")
    _enqueue(job)
    return job


@transaction.atomic
def data_job_import_start(*, upload, user, project: Project | None = None, update_settings: bool = False,
                          data_format: str = "", choose_columns: bool = False, project_slug: str = "",
                          name_says_format: bool = True) -> DataJob:
    """Store an uploaded file and queue its import in ``data_format`` (a declared format's name;
    empty: recognized from the file when the job runs). ``project``: the project the upload must
    belong to (checked when the job runs); None for a new project, which a file that names no
    project makes under ``project_slug`` or, without one, named after the file
    (``ImportRequest.project_slug``). ``choose_columns``: an upload in a format read column by
    column is held (``DataJob.COLUMNS_STAGE``) until its uploader has chosen its columns
    (``data_job_columns_choose``); without it such a file is read by its headers' names.
    ``name_says_format``: the file's name must end with a suffix of its format, or of some format
    when none is named (a person's upload: a wrong file is refused at once, saying what to upload);
    False (the API, whose schema cannot state a file's name): a named format reads the file
    whatever its name, and a file whose name says no format is recognized from its content when
    the job runs (which fails, saying so, when nothing reads it)."""
    limit = settings.EVALSITE_MAX_UPLOAD_BYTES
    if upload.size > limit:
        raise ValidationError({"bundle": f"the file is {size_text(upload.size)}; the limit is {size_text(limit)}"})
    if data_format:
        try:
            chosen = [format_get(data_format, reading=True)]
        except FormatError as exc:
            raise ValidationError({"format": exc.message}) from None
    else:
        chosen = formats(reading=True)
    suffixes = tuple(s for f in chosen for s in f.suffixes) if data_format else upload_suffixes()
    suffix = next((s for s in suffixes if upload.name.lower().endswith(s)), None)
    if suffix is None and name_says_format:
        raise ValidationError({"bundle": "upload " + "; or ".join(f.upload_help for f in chosen)})
    if suffix is None:
        suffix = chosen[0].suffixes[0] if data_format else ""
    job = DataJob.objects.create(kind=DataJob.IMPORT, project=project, user=user, stage="queued",
                                 params={"update_settings": bool(update_settings), "name": upload.name[:200],
                                         "expect_slug": project.slug if project else None, "format": data_format,
                                         **({"slug": project_slug} if project is None and project_slug else {})})
    target = jobs_dir(job) / f"upload{suffix}"
    with open(target, "wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    job.file = f"{job.pk}/upload{suffix}"
    job.save(update_fields=["file"])
    columned = _columns_format(target, data_format) if choose_columns else None
    if columned is not None:  # held: the uploader chooses its columns first
        job.stage, job.params = DataJob.COLUMNS_STAGE, {**job.params, "format": columned.name}
        job.save(update_fields=["stage", "params"])
        return job
    _enqueue(job)
    return job


def _columns_format(path: Path, data_format: str):
    """The format that reads ``path`` when it is read column by column; None otherwise (a file no
    format recognizes is queued as it is, and its job says why it failed)."""
    try:
        found = format_for(path, name=data_format or None)
    except FormatError:
        return None
    return found if found.columns is not None else None


def data_job_columns(*, job: DataJob, mapping: dict) -> list:
    """The held upload's tables as ``mapping`` would have them read (``DataFormat.columns``); a file
    that cannot be read fails the job with the reason (BundleError)."""
    from .bundles import BundleError  # lazy: the bundle code brings pandas: loaded by the page of a held upload

    fmt, path = format_get(job.params["format"], reading=True), job_path(job)
    try:
        if path is None:
            raise BundleError("upload", "the uploaded file is gone; upload it again")
        return fmt.columns(path, mapping)
    except BundleError as exc:
        DataJob.objects.filter(pk=job.pk, status=DataJob.QUEUED, stage=DataJob.COLUMNS_STAGE).update(
            status=DataJob.FAILED, error=str(exc)[:2000], finished_at=timezone.now(), stage="failed")
        raise


@transaction.atomic
def data_job_columns_choose(*, job: DataJob, mapping: dict) -> bool:
    """Store the column mapping a held upload is imported with and queue it; only a job that is
    still held takes one (locked, checked, written), so a job is queued once. False otherwise."""
    held = DataJob.objects.select_for_update().filter(pk=job.pk, status=DataJob.QUEUED, stage=DataJob.COLUMNS_STAGE).first()
    if held is None:
        return False
    held.params = {**held.params, "mapping": mapping}
    held.stage, held.heartbeat_at = "queued", timezone.now()  # a queued job's: when it was sent
    held.save(update_fields=["params", "stage", "heartbeat_at"])
    _enqueue(held)
    return True


class _Progress:
    """Writes a job's progress at most twice a second."""

    def __init__(self, job: DataJob):
        self.job, self.last = job, 0.0

    def __call__(self, fraction: float, stage: str) -> None:
        now = time.monotonic()
        if now - self.last >= PROGRESS_EVERY_SECONDS or fraction >= 1.0:
            self.last = now
            DataJob.objects.filter(pk=self.job.pk).update(progress_pct=round(100 * fraction, 1), stage=stage[:200],
                                                          heartbeat_at=timezone.now())


def data_job_run(*, job_id: int) -> DataJob:
    """Run a queued job here and now (what the Celery task calls), or take over a running one
    whose worker has been silent for longer than the lease."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.EVALSITE_JOB_LEASE_SECONDS)
    claimed = DataJob.objects.filter(
        (Q(status=DataJob.QUEUED) & ~Q(stage=DataJob.COLUMNS_STAGE)) | Q(status=DataJob.RUNNING, heartbeat_at__lt=stale),
        pk=job_id,
    ).update(status=DataJob.RUNNING, started_at=now, heartbeat_at=now, stage="starting", attempts=F("attempts") + 1)
    job = DataJob.objects.select_related("project", "user").get(pk=job_id)
    job.claimed = bool(claimed)
    if not claimed:
        return job  # ran already, or is running elsewhere with a live heartbeat
    heartbeat = _Heartbeat(job.pk)
    heartbeat.start()
    try:
        result = _export(job) if job.kind == DataJob.EXPORT else _import(job)
    except Exception as exc:  # the job shows the error; unexpected ones are logged with their traceback
        from .bundles import BundleError  # lazy: the bundle code brings pandas: loaded by the worker that runs a job

        if not isinstance(exc, (BundleError, ValidationError)):
            logger.exception("data job %s (%s) failed", job.pk, job.kind)
        message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        if job.kind == DataJob.IMPORT:
            _upload_remove(job)  # a failed import is not retried: its upload would stay on disk for good
        DataJob.objects.filter(pk=job.pk).update(status=DataJob.FAILED, error=_storable(message[:2000]),
                                                 finished_at=timezone.now(), stage="failed")
    else:
        DataJob.objects.filter(pk=job.pk).update(status=DataJob.FINISHED, result=result, progress_pct=100.0,
                                                 finished_at=timezone.now(), stage="done")
    finally:
        heartbeat.stop()
    job.refresh_from_db()
    job.claimed = True
    return job


class _Heartbeat(threading.Thread):
    """Writes the running job's heartbeat every sixth of the lease, whatever the job is doing (an
    import is one long transaction with no progress in between), on a connection of its own."""

    def __init__(self, job_id: int):
        super().__init__(daemon=True, name=f"data-job-{job_id}-heartbeat")
        self.job_id, self.done = job_id, threading.Event()

    def run(self) -> None:
        try:
            while not self.done.wait(settings.EVALSITE_JOB_LEASE_SECONDS / 6):
                try:
                    DataJob.objects.filter(pk=self.job_id, status=DataJob.RUNNING).update(heartbeat_at=timezone.now())
                except DatabaseError:  # SQLite while an import holds the write lock: the next beat
                    pass
        finally:
            connection.close()

    def stop(self) -> None:
        self.done.set()
        self.join(timeout=5)


def _export(job: DataJob) -> dict:
    from .bundles import gold_export_zip  # lazy: the bundle code brings pandas: loaded by the worker that runs a job

    if job.attempts > 1:  # a worker died exporting: what it wrote is incomplete
        shutil.rmtree(jobs_dir(job), ignore_errors=True)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    name = f"{job.project.slug}-gold-{stamp}.zip"
    result = gold_export_zip(project=job.project, zip_path=jobs_dir(job) / name, progress=_Progress(job))
    DataJob.objects.filter(pk=job.pk).update(file=f"{job.pk}/{name}")
    return {"counts": result["counts"], "provenance": result["provenance"], "excluded_cases": result["excluded_cases"],
            "files": result["files"]}


def _import(job: DataJob) -> dict:
    from .bundles import BundleError  # lazy: the bundle code brings pandas: loaded by the worker that runs a job

    path = job_path(job)
    if path is None:
        raise BundleError("upload", "the uploaded file is gone; upload it again")
    progress = _Progress(job)
    progress(0.05, "importing")
    files = {}
    if job.params.get("mapping"):  # the column mapping chosen on the upload's column step
        files["mapping"] = path.parent / "mapping.json"
        files["mapping"].write_text(json.dumps(job.params["mapping"]), encoding="utf-8")
    expected = job.params.get("expect_slug")
    request = ImportRequest(path=path, user=job.user, project=expected or job.params.get("slug"),
                            update_settings=job.params.get("update_settings", False), files=files,
                            upload_name=None if expected else job.params.get("name"))
    result = format_import(request, name=job.params.get("format") or None)
    project = Project.objects.filter(slug=result["project"]).first()
    DataJob.objects.filter(pk=job.pk).update(project=project)
    _upload_remove(job)  # the data is in the database now
    return result


def _upload_remove(job: DataJob) -> None:
    """Remove an import's upload and its folder (``EVALSITE_JOBS_DIR/<id>/``), once it ended."""
    shutil.rmtree(Path(settings.EVALSITE_JOBS_DIR) / str(job.pk), ignore_errors=True)


def _storable(message: str) -> str:
    """An error as a text column holds it: a NUL or a lone surrogate a message quotes, escaped."""
    return message.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")
