"""HTML views of the annotation app: "My work", the labeling page, the checker review and the
researcher's assignment pages.

Every view fetches its objects through a fetch-and-authorize selector, so another user's or
another cohort's object is a 404 whatever the URL. Saves from the labeling and review pages are
small htmx POSTs answered with the one criterion row (or its state) plus the progress counter
out of band; errors are rendered into the row with status 200 (htmx 2 does not swap 4xx).
Without JavaScript the same forms post normally and redirect back to the page.
"""
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from . import selectors
from .assignments import (
    assignment_reassign, assignment_reopen, assignment_submit, assignment_time_add, project_assign,
)
from .forms import AssignForm, LabelSaveForm, ReassignForm, ReviewForm, TimeReportForm
from .models import Assignment, Label, Project
from .services import LabelConflict, assignment_check_complete, checker_label_record, label_record


def _error_text(exc: ValidationError) -> str:
    return "; ".join(exc.messages)


def _staff_only(user) -> None:
    if not user.is_staff:
        raise PermissionDenied("Researchers only")


# --- annotator ----------------------------------------------------------------------------


@login_required
def home(request):
    projects = Project.objects.only("slug", "name") if request.user.is_staff else []
    return render(request, "annotation/home.html", {"work": selectors.work_list_for_user(user=request.user),
                                                    "projects": projects})


@login_required
def next_item(request):
    project_id = request.GET.get("project")
    assignment = selectors.assignment_next_for_annotator(
        user=request.user, project_id=int(project_id) if project_id and project_id.isdigit() else None
    )
    if assignment is None:
        messages.info(request, "Nothing left in your queue. Thank you!")
        return redirect("home")
    return redirect("label-page", assignment_id=assignment.pk)


@login_required
def label_page(request, assignment_id: int):
    assignment = selectors.assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
    return render(request, "annotation/label.html", selectors.labeling_page_data(assignment=assignment))


@login_required
@require_POST
def label_save(request, assignment_id: int, criterion_id: int):
    form = LabelSaveForm(request.POST)
    row, assignment = selectors.CriterionRow(criterion=None), None
    if not form.is_valid():
        row.error = "; ".join(e for errors in form.errors.values() for e in errors)
    else:
        try:  # label_record fetches and authorizes (404 for anybody else's assignment)
            assignment, row.criterion, row.label = label_record(
                assignment_id=assignment_id, criterion_id=criterion_id, user=request.user, **form.service_kwargs()
            )
        except LabelConflict as exc:
            row.error, row.conflict = _error_text(exc) + " — now showing the latest; click again to apply.", True
        except ValidationError as exc:
            row.error = _error_text(exc)
    if assignment is None:  # nothing saved: load what the row shows, with the same authorization
        assignment = selectors.assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
        row.criterion = selectors.criterion_get_for_assignment(assignment=assignment, criterion_id=criterion_id)
        row.label = Label.objects.filter(response_id=assignment.response_id, criterion=row.criterion, annotator=request.user).first()
    if not request.htmx:
        if row.error:
            messages.error(request, row.error)
        return redirect(reverse("label-page", args=[assignment.pk]) + f"#crit-{row.criterion.pk}")
    partial = "criterion-state" if request.POST.get("part") == "state" and not row.conflict else "criterion-row"
    decided, total = selectors.assignment_progress(assignment=assignment)
    return render(request, f"annotation/label.html#{partial}-saved", {
        "assignment": assignment, "row": row, "read_only": assignment.status not in selectors.OPEN_STATUSES,
        "decided": decided, "total": total, "oob": True,
    })


@login_required
@require_POST
def label_submit(request, assignment_id: int):
    assignment = selectors.assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
    time_form = TimeReportForm(request.POST)
    if time_form.is_valid():
        assignment_time_add(assignment=assignment, seconds=time_form.cleaned_data["seconds"])
    try:
        assignment_submit(assignment=assignment, user=request.user)
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
        return redirect("label-page", assignment_id=assignment.pk)
    messages.success(request, "Submitted. Thank you!")
    return redirect(reverse("next-item") + f"?project={assignment.project_id}")


@login_required
@require_POST
def label_time(request, assignment_id: int):
    """Active-time heartbeat from the labeling page (sent with navigator.sendBeacon)."""
    assignment = selectors.assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
    form = TimeReportForm(request.POST)
    if not form.is_valid():
        return HttpResponse(status=400)
    if assignment.status in selectors.OPEN_STATUSES:
        assignment_time_add(assignment=assignment, seconds=form.cleaned_data["seconds"])
    return HttpResponse(status=204)


# --- checker ------------------------------------------------------------------------------


@login_required
def review_queue(request, slug: str):
    project = get_object_or_404(Project, slug=slug)
    membership, queue = selectors.review_queue_for_checker(user=request.user, project_id=project.pk)
    page = Paginator(queue, 50).get_page(request.GET.get("page"))
    return render(request, "annotation/review_queue.html", {"project": project, "cohort": membership.cohort, "page": page})


@login_required
def review_page(request, assignment_id: int):
    assignment = selectors.assignment_get_for_checker(assignment_id=assignment_id, user=request.user)
    return render(request, "annotation/review.html", selectors.review_page_data(assignment=assignment))


@login_required
@require_POST
def review_save(request, assignment_id: int, criterion_id: int):
    assignment = selectors.assignment_get_for_checker(assignment_id=assignment_id, user=request.user)
    criterion = selectors.criterion_get_for_assignment(assignment=assignment, criterion_id=criterion_id)
    form = ReviewForm(request.POST)
    error = ""
    if not form.is_valid():
        error = "; ".join(e for errors in form.errors.values() for e in errors)
    else:
        data = form.cleaned_data
        try:
            checker_label_record(
                assignment_id=assignment.pk, criterion_id=criterion.pk, user=request.user,
                confirm=data["action"] == "confirm", note=data["note"], **data["choice"],
            )
        except ValidationError as exc:
            error = _error_text(exc)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect(reverse("review-page", args=[assignment.pk]) + f"#crit-{criterion.pk}")
    context = selectors.review_page_data(assignment=assignment)
    row = next(r for r in context["rows"] if r.criterion.pk == criterion.pk)
    row.error = error
    return render(request, "annotation/review.html#review-row-saved", {**context, "row": row, "oob": True})


@login_required
@require_POST
def review_complete(request, assignment_id: int):
    assignment = selectors.assignment_get_for_checker(assignment_id=assignment_id, user=request.user)
    try:
        assignment_check_complete(assignment_id=assignment.pk, user=request.user)
        messages.success(request, "Checked. The confirmed and overridden labels are now the cohort's labels.")
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    return redirect("review-queue", slug=assignment.project.slug)


@login_required
@require_POST
def review_reopen(request, assignment_id: int):
    assignment = selectors.assignment_get_for_checker(assignment_id=assignment_id, user=request.user)
    try:
        assignment_reopen(assignment=assignment, by=request.user)
        messages.success(request, f"Reopened for {assignment.annotator.username}.")
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    return redirect("review-queue", slug=assignment.project.slug)


# --- researcher ---------------------------------------------------------------------------


@login_required
def project_assignments(request, slug: str):
    _staff_only(request.user)
    project = get_object_or_404(Project, slug=slug)
    queryset = Assignment.objects.filter(project=project).select_related("cohort", "annotator", "response__case")
    status = request.GET.get("status")
    if status in dict(Assignment.STATUSES):
        queryset = queryset.filter(status=status)
    page = Paginator(queryset.order_by("cohort__position", "annotator__username", "position"), 100).get_page(
        request.GET.get("page")
    )
    return render(request, "annotation/project_assignments.html", {
        "project": project, "page": page, "status": status, "statuses": Assignment.STATUSES,
        "summary": selectors.project_assignment_summary(project=project),
        "form": AssignForm(project=project),
    })


@login_required
@require_POST
def project_assign_view(request, slug: str):
    _staff_only(request.user)
    project = get_object_or_404(Project, slug=slug)
    form = AssignForm(request.POST, project=project)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {e}" for k, errors in form.errors.items() for e in errors))
        return redirect("project-assignments", slug=slug)
    data = form.cleaned_data
    try:
        created = project_assign(project=project, cohort_id=data["cohort"], overlap=data["overlap"],
                                 method=data["method"], seed=data["seed"], by=request.user)
        messages.success(request, f"{len(created)} assignments created.")
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    return redirect("project-assignments", slug=slug)


@login_required
@require_POST
def project_reassign(request, slug: str, assignment_id: int):
    _staff_only(request.user)
    assignment = get_object_or_404(Assignment, pk=assignment_id, project__slug=slug)
    form = ReassignForm(request.POST)
    user = get_user_model().objects.filter(username=form.data.get("username", "")).first() if form.is_valid() else None
    try:
        if user is None:
            raise ValidationError({"username": "no such user"})
        assignment_reassign(assignment=assignment, annotator=user, by=request.user)
        messages.success(request, f"Reassigned to {user.username}.")
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    return redirect("project-assignments", slug=slug)


@login_required
@require_POST
def project_reopen(request, slug: str, assignment_id: int):
    _staff_only(request.user)
    assignment = get_object_or_404(Assignment, pk=assignment_id, project__slug=slug)
    try:
        assignment_reopen(assignment=assignment, by=request.user)
        messages.success(request, "Reopened.")
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    return redirect("project-assignments", slug=slug)
