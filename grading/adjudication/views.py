"""The adjudication pages (for the project's adjudicators and managers, ``annotation.access``):
the queue with its filters and progress, the page of one response, saving one criterion's
decision through htmx (the row comes back, with the progress out of band; errors are shown in
the row with status 200, as htmx 2 does not swap 4xx), and "next item".
"""
import time

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.access import project_get_for
from annotation.models import Criterion, Response

from .forms import AdjudicationForm
from .item import adjudication_item
from .services import AdjudicationConflict, adjudication_record

# A background count of the queue still under way after this long is said to be slow (a full-scale
# project's takes 10-20 s on two cores).
COUNTING_SLOW_SECONDS = 120


def _queue():
    """The queue report's module: it brings pandas, so it loads with the first queue read, not with the URLs."""
    from ..reports import adjudication_queue  # lazy: pandas and the report code load on first use

    return adjudication_queue


def _filters(request) -> dict:
    return {name: request.GET.get(name, "") for name in _queue().FILTERS if request.GET.get(name)}


@login_required
def queue_page(request, slug: str):
    project = project_get_for(user=request.user, action="adjudicate", slug=slug)
    filters = _filters(request)
    error = None
    try:
        try:
            queue = _queue().adjudication_queue(project=project, filters=filters, background=True)
        except ValueError as exc:
            error, queue = str(exc), _queue().adjudication_queue(project=project, background=True)
    except _queue().QueueCounting as counting:
        waited = None if counting.since is None else max(0, round(time.time() - counting.since))
        return render(request, "grading/adjudication/queue.html", {
            "project": project, "counting": counting, "filters": filters, "waited": waited,
            "stuck": waited is not None and waited > COUNTING_SLOW_SECONDS,
            "counting_minutes": _queue().COUNTING_SECONDS // 60,
        })
    page = Paginator(queue.items, 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "grading/adjudication/queue.html", {
        "project": project, "queue": queue, "page": page, "filters": filters, "error": error, "query": query.urlencode(),
    })


def _response(project, response_id: int) -> Response:
    response = Response.objects.select_related("project", "case").filter(pk=response_id, project=project).first()
    if response is None:
        raise Http404("No such response in this project")
    return response


@login_required
def item_page(request, slug: str, response_id: int):
    project = project_get_for(user=request.user, action="adjudicate", slug=slug)
    context = adjudication_item(response=_response(project, response_id))
    return render(request, "grading/adjudication/item.html", context)


@login_required
@require_POST
def item_save(request, slug: str, response_id: int, criterion_id: int):
    project = project_get_for(user=request.user, action="adjudicate", slug=slug)
    response = _response(project, response_id)
    criterion = Criterion.objects.filter(pk=criterion_id, project=project).first()
    if criterion is None:
        raise Http404("No such criterion")
    form = AdjudicationForm(request.POST)
    error = ""
    if not form.is_valid():
        error = "; ".join(e for errors in form.errors.values() for e in errors)
    else:
        try:
            adjudication_record(response=response, criterion=criterion, user=request.user, **form.service_kwargs())
        except AdjudicationConflict as exc:
            error = "; ".join(exc.messages)
        except ValidationError as exc:
            error = "; ".join(exc.messages)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect(reverse("adjudication-item", args=[slug, response_id]) + f"#crit-{criterion.pk}")
    context = adjudication_item(response=response)
    row = next((r for r in context["rows"] if r.criterion.pk == criterion.pk), None)
    if row is None:
        raise Http404("No such criterion in this response's rubric")
    row.error = error
    return render(request, "grading/adjudication/item.html#adjudication-row-saved", {**context, "row": row, "oob": True})


@login_required
def next_item(request, slug: str):
    """The first open item of the queue (after ``?after=<response id>``, wrapping around), or the
    queue page when nothing is left."""
    project = project_get_for(user=request.user, action="adjudicate", slug=slug)
    try:
        queue = _queue().adjudication_queue(project=project, filters={**_filters(request), "status": "open"},
                                            background=True)
    except (_queue().QueueCounting, ValueError):
        return redirect("adjudication-queue", slug=slug)  # it says how the count stands
    after = request.GET.get("after")
    ids = [i.response_id for i in queue.items]
    if after and after.isdigit() and int(after) in ids:
        at = ids.index(int(after))
        ids = ids[at + 1:] + ids[:at]
    if not ids:
        messages.success(request, "Nothing left to adjudicate here.")
        return redirect("adjudication-queue", slug=slug)
    return redirect("adjudication-item", slug=slug, response_id=ids[0])
