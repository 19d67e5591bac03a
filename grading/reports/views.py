"""The researchers' report pages (any role in the project: viewer, adjudicator, manager), one view
for every page the registry declares (``registry.Page``): it parses the page's query parameters
with the page's schema, reads the page's cached result — queuing its computation in a Celery
task on a miss and polling with htmx until it is there — and renders the page's template (its
``report`` partial for htmx) with its SVG charts; ``?format=csv&table=NAME`` downloads any table
of the page as CSV.
"""
import time

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify

from annotation.access import project_get_for, user_may
from annotation.models import Project
from evalsite.spreadsheet import csv_lines

from .cache import report_forget, report_key, report_mark_pending, report_peek, report_pending_since
from .glossary import glossary, strategies
from .registry import page_get, page_title, pages, reports
from .subset import subset_parse
from .tasks import report_page_task

# A computation queued this long ago without a result may have lost its worker: offer a retry.
STUCK_SECONDS = 120


def report_menu(project: Project) -> list[tuple[str, str, str]]:
    """(page key, title, URL) of every report page, in menu order."""
    index = reverse("report-index", args=[project.slug])
    return [(key, page_title(report), f"{index}{key}/") for key, report in pages()]


def _page_result(project: Project, page: str, params: dict) -> tuple[dict | None, float | None]:
    """The page's cached result (or None while it is computed) and, while pending, how many
    seconds ago its computation was queued."""
    key = report_key(projects=[project], name=f"page:{page}", params=params)
    result = report_peek(key=key)
    if result is None and report_mark_pending(key=key):
        # Nothing was written, so there is no commit to wait for before queuing.
        report_page_task.delay(project_id=project.pk, page=page, params=params)
        result = report_peek(key=key)  # eager Celery (tests, small setups) has computed it already
    since = report_pending_since(key=key) if result is None else None
    return result, (time.time() - since) if since is not None else None


def _csv(result: dict, name: str, project: Project, page: str) -> HttpResponse:
    table = (result or {}).get("tables", {}).get(name)
    if table is None:
        raise Http404(f"no table {name!r} on this report (yet)")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{page}-{slugify(name)}.csv"'
    response.writelines(csv_lines(table["columns"], table["rows"]))  # text can never run as a formula
    return response


def _render(request, project: Project, page: str, report) -> HttpResponse:
    """Parse params, read or queue the result, render. A POST with ``retry`` forgets a failed (or
    stuck) computation and shows the page again, which queues it anew."""
    declared = report.page
    error, result, params, failed, waited = None, None, {}, False, None
    try:
        # a multiple select sends a parameter once per choice: the page's parameters take them comma-separated
        # (kept a QueryDict: DRF reads an empty form value of a field that may be null as "not given")
        data = QueryDict(mutable=True)
        for name, values in request.GET.lists():
            data[name] = ",".join(values)
        params = declared.parse(project=project, data=data)
        subset = subset_parse(",".join(request.GET.getlist("models")), ",".join(request.GET.getlist("exclude_models")))
        if subset is not None:  # every page: only some source models (issue 14)
            params["subset"] = subset.key()
    except (ValueError, LookupError) as exc:
        error = str(exc)
        params = params or data.dict()  # the form shows what was asked, so a refused choice is not lost
    if error is None and request.method == "POST" and request.POST.get("retry"):
        report_forget(key=report_key(projects=[project], name=f"page:{page}", params=params))
        return redirect(request.get_full_path())
    if error is None:
        result, waited = _page_result(project, page, params)
        if request.GET.get("format") == "csv":
            return _csv(result, request.GET.get("table", ""), project, page)
        if result is not None and "error" in result:
            error, failed, result = result["error"], bool(result.get("failed")), None
    query = request.GET.copy()
    for name in ("format", "table"):
        query.pop(name, None)
    context = {
        "project": project, "page": page, "title": page_title(report), "nav": report_menu(project), "params": params,
        "result": result, "error": error, "failed": failed, "pending": result is None and error is None,
        "query": query.urlencode(), "stuck": waited is not None and waited > STUCK_SECONDS,
        "charts": declared.charts(result, project) if result is not None and declared.charts else {},
        # row links only for a role that may follow them (the side-by-side page is for adjudicators and managers)
        "links": declared.links(result, project) if result is not None and declared.links
        and user_may(project=project, user=request.user, action="inspect") else {},
        "fields": list(declared.params().fields.items()),  # the generic page's controls (``param_field``)
    }
    return render(request, f"{declared.template}#report" if request.htmx else declared.template, context)


def _project(request, slug: str) -> Project:
    """The project, for a user whose role in it allows reading reports (404 / 403 otherwise)."""
    return project_get_for(user=request.user, action="view", slug=slug)


@login_required
def report_index(request, slug: str):
    project = _project(request, slug)
    return render(request, "grading/reports/index.html",
                  {"project": project, "nav": report_menu(project), "page": "reports", "title": "Reports"})


@login_required
def report_page(request, slug: str, page: str):
    """Any report page the registry declares (``/projects/SLUG/reports/PAGE/``)."""
    try:
        report = page_get(page)
    except LookupError:
        raise Http404(f"no report page {page!r}") from None
    project = project_get_for(user=request.user, action=report.action, slug=slug)
    return _render(request, project, page, report)


@login_required
def metrics_help(request):
    """Every figure the reports show, in plain words: the terms of the tables, the cannot-assess
    strategies and what each report answers."""
    described = [(r.title, r.help) for r in reports() if r.help]
    return render(request, "grading/reports/help.html", {"sections": glossary(), "strategies": strategies(),
                                                         "reports": sorted(described, key=lambda item: item[0].lower())})
