"""Celery task of the report pages: compute one page's result in a worker and cache it,
so a page over a large project never computes inside the web request. Thin: it takes
ids, loads the project and calls the page's builder (``registry.Page.build``)."""
import logging

from celery import shared_task

from annotation.models import Project
from grading.sources import project_sources

from .cache import report_cached, report_key, report_store_failure
from .inputs import ReportInputs
from .registry import page_get
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
