"""Celery tasks of the reports: compute one page's result, or one report's result as its API
endpoint asked for it (``background.report_state``), in a worker and cache it, so neither a page
nor an API request over a large project computes inside the web request. Thin: they take ids
and parameter texts, load the project and call the page's builder (``registry.Page.build``) or
the report's ``Report.run``, which caches the result under the key its command reads too."""
import logging

from celery import shared_task

from annotation.models import Project
from grading.sources import project_sources

from .cache import (
    FAILED_SECONDS,
    TIMEOUT_SECONDS,
    report_cached,
    report_key,
    report_store_error,
    report_store_failure,
    report_unmark_pending,
)
from .registry import ReportUnavailable, page_get, report_get
from .subset import model_subset, subset_parse, subset_summary

logger = logging.getLogger(__name__)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__


def report_page_compute(*, project: Project, page: str, params: dict) -> dict:
    """One page's result, with what was left out of it (cases quality control excluded, draft labels,
    each judge's few-shot split cases); under the page's
    model subset (``params["subset"]``, see ``subset``) when it has one, and saying so."""
    build = page_get(page).page.build
    params = dict(params)
    wanted = params.pop("subset", None)
    subset = subset_parse(wanted["models"], wanted["exclude_models"]) if wanted else None
    with model_subset(subset):
        result = build(project=project, **params)
        from .inputs import ReportInputs  # lazy: pandas loads in the worker that computes, not in web processes

        inputs = ReportInputs(project)
        judges = project_sources(project=project)["judges"]
        few_shot = {j.spec: len(inputs.fewshot_cases(j)) for j in judges}
        extra = {"n_excluded_cases": inputs.n_excluded_cases, "n_draft_labels": inputs.n_draft_labels,
                 "few_shot_cases": {spec: n for spec, n in few_shot.items() if n}}
        if subset is not None:
            extra["model_subset"] = subset_summary(subset, inputs.all_models)
    return {**result, **extra}


def page_result(*, project: Project, page: str, params: dict) -> dict:
    """Compute (or read) a page's cached result. A domain error (bad parameters, nothing to
    report yet) is the result, cached as ``{"error"}``; any other failure is logged with its
    traceback and stored briefly as ``{"error", "failed": True}``, so the page shows a one-line
    error with a retry button instead of polling."""
    def compute() -> dict:
        try:
            return report_page_compute(project=project, page=page, params=params)
        except (ValueError, LookupError) as exc:
            return {"error": _first_line(exc)}

    try:
        return report_cached(projects=[project], name=f"page:{page}", params=params, compute=compute)
    except Exception as exc:
        logger.exception("report page %r of project %r failed (params %r)", page, project.slug, params)
        key = report_key(projects=[project], name=f"page:{page}", params=params)
        return report_store_failure(key=key, message=f"{exc.__class__.__name__}: {_first_line(exc)}")


@shared_task(name="grading.reports.page_compute")
def report_page_task(*, project_id: int, page: str, params: dict) -> None:
    page_result(project=Project.objects.get(pk=project_id), page=page, params=params)


def _error_kind(exc: BaseException) -> str:
    """What kind of end a computation without a result had (the API answers 409, 404, 400 or 500)."""
    if isinstance(exc, ReportUnavailable):
        return "unavailable"  # the project's data cannot give it as asked
    if isinstance(exc, (KeyError, IndexError)):
        return "failed"  # a fault of the code, not of the request
    if isinstance(exc, LookupError):
        return "missing"  # the request names something the project does not have
    if isinstance(exc, ValueError):
        return "invalid"
    return "failed"


def report_compute(*, project_id: int, report: str, data: dict, ci: bool, subset: dict | None, key: str) -> None:
    """Compute one report's result (``Report.run``, which caches it) for the parameter texts
    ``data`` under the model subset ``subset``, as requested when its key was ``key``. If the
    project changed since, the result of the current data is computed and its key marked pending
    meanwhile. A computation that ends without a result leaves why (``report_error``): a domain
    error for as long as the data stays as it is, any other failure, logged with its traceback,
    for ``FAILED_SECONDS``; either way the key's pending mark goes."""
    declared, current = report_get(report), key
    wanted = subset_parse(subset["models"], subset["exclude_models"]) if subset else None
    try:
        project = Project.objects.get(pk=project_id)
        with model_subset(wanted):
            params = declared.parse(project=project, data=data, local_only=True)
            current = declared.cache_key(project=project, ci=ci, **params) or key
            declared.run(project=project, ci=ci, **params)
    except Exception as exc:  # noqa: BLE001 - every end without a result is told to whoever waits for it
        kind = _error_kind(exc)
        if kind == "failed":
            logger.exception("report %r of project %s failed (parameters %r)", report, project_id, data)
        detail = _first_line(exc) if kind != "failed" else f"{exc.__class__.__name__}: {_first_line(exc)}"
        report_store_error(key=current, error={"kind": kind, "detail": detail},
                           seconds=FAILED_SECONDS if kind == "failed" else TIMEOUT_SECONDS)
    finally:
        if current != key:
            report_unmark_pending(key=key)  # queued for data that changed since: nobody reads that key again


@shared_task(name="grading.reports.compute")
def report_task(*, project_id: int, report: str, data: dict, ci: bool, subset: dict | None, key: str) -> None:
    report_compute(project_id=project_id, report=report, data=data, ci=ci, subset=subset, key=key)


@shared_task(name="grading.adjudication_queue_count", ignore_result=True)
def queue_count_task(*, project_id: int) -> None:
    """Count the cohorts' decisions of a project for its adjudication queue, which the queue page
    then reads (``adjudication_queue.queue_count``: it logs and remembers a failure)."""
    from .adjudication_queue import queue_count  # lazy: the report brings pandas

    project = Project.objects.filter(pk=project_id).first()
    if project is not None:  # a project deleted meanwhile has nothing to count
        queue_count(project=project)
