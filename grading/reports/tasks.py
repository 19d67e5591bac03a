"""Celery task of the report pages: compute one page's result in a worker and cache it,
so a page over a large project never computes inside the web request. Thin: it takes
ids, loads the project and calls one service."""
from celery import shared_task

from annotation.models import Project

from .cache import report_cached
from .pages import report_page_compute


def page_result(*, project: Project, page: str, params: dict) -> dict:
    """Compute (or read) a page's cached result; a domain error is cached as ``{"error"}``
    so the page shows it instead of waiting forever."""
    def compute() -> dict:
        try:
            return report_page_compute(project=project, page=page, params=params)
        except (ValueError, LookupError) as exc:
            return {"error": str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__}

    return report_cached(projects=[project], name=f"page:{page}", params=params, compute=compute)


@shared_task(name="grading.reports.page_compute")
def report_page_task(*, project_id: int, page: str, params: dict) -> None:
    page_result(project=Project.objects.get(pk=project_id), page=page, params=params)
