"""HTML views of the annotation app: "My work", the labeling page, the checker review and the
researcher's assignment pages.

Every view fetches its objects through a fetch-and-authorize selector, so another user's or
another cohort's object is a 404 whatever the URL. Saves from the labeling and review pages are
small htmx POSTs answered with the one criterion row (or its state) plus the progress counter
out of band; errors are rendered into the row with status 200 (htmx 2 does not swap 4xx).
Without JavaScript the same forms post normally and redirect back to the page.
"""
import json
from urllib.parse import quote

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from . import selectors
from .access import project_get_for, projects_for, roles_by_project
from .assignments import (
    assignment_reassign,
    assignment_reopen,
    assignment_submit,
    assignment_time_add,
    project_assign,
)
from .forms import AssignForm, GuidanceForm, LabelSaveForm, ReassignForm, ReviewForm, RoleForm, TimeReportForm, label_batch_parse
from .models import Assignment, Case, Criterion, Label, Project
from .projects import STRATUM_GROUPS_DRAFT, project_role_set, project_settings_update, settings_clean
from .reviews import review_complete, review_decision_record
from .rubrics import criterion_guidance_update
from .services import BatchRefused, LabelConflict, label_record, labels_record_batch
from .specs import GUIDANCE_MAX, FieldError
from .tokens import api_token_created, api_token_issue, api_token_revoke


def _error_text(exc: ValidationError) -> str:
    return "; ".join(exc.messages)


# --- annotator ----------------------------------------------------------------------------


@login_required
def home(request):
    """My work (cohort memberships) and the projects the user has a role in."""
    roles = roles_by_project(user=request.user)
    projects = [(p, "superuser" if request.user.is_superuser else roles[p.pk])
                for p in projects_for(user=request.user).only("slug", "name").order_by("slug")]
    return render(request, "annotation/home.html", {"work": selectors.work_list_for_user(user=request.user),
                                                    "projects": projects})


@login_required
def api_token(request):
    """The user's API token: create (or replace) it, shown once, or revoke it."""
    key = None
    if request.method == "POST":
        if request.POST.get("action") == "revoke":
            if api_token_revoke(user=request.user):
                messages.success(request, "Your API token is revoked.")
            return redirect("api-token")
        key = api_token_issue(user=request.user)
    return render(request, "annotation/api_token.html",
                  {"key": key, "created": api_token_created(user=request.user)})


@login_required
def my_items(request):
    """The annotator's own items: filter by project, status and case id; each links back to its
    page (read-only once submitted); a reopened one says why."""
    projects = list(Project.objects.filter(memberships__user=request.user).distinct().order_by("name"))
    project_id = request.GET.get("project", "")
    project_id = int(project_id) if project_id.isdigit() and any(p.pk == int(project_id) for p in projects) else None
    status, query = request.GET.get("status", ""), request.GET.get("q", "")[:200]
    items = selectors.items_for_annotator(user=request.user, project_id=project_id, status=status, case_query=query)
    page = Paginator(items, 50).get_page(request.GET.get("page"))
    return render(request, "annotation/my_items.html", {
        "page": page, "projects": projects, "project_id": project_id, "status": status, "q": query,
        "statuses": Assignment.STATUSES, "open_statuses": selectors.OPEN_STATUSES,
    })


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
def label_save_view(request, assignment_id: int, criterion_id: int):
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
    return render(request, f"annotation/label.html#{partial}-saved", {
        "assignment": assignment, "row": row, "read_only": assignment.status not in selectors.OPEN_STATUSES,
        **selectors.assignment_status_bar(assignment=assignment), "oob": True,
    })


@login_required
@require_POST
def label_batch_view(request, assignment_id: int):
    """Several piled-up clicks of the labeling page in one request (``batch``: JSON), all or none
    (``labels_record_batch``). The answer is every saved row and the progress bar, swapped in
    out of band; a refused batch (409 stale, 400 invalid) saved nothing, and the page sends the
    clicks one by one instead, each told on its own row."""
    assignment = selectors.assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
    try:
        items = label_batch_parse(request.POST.get("batch", ""))
    except forms.ValidationError as exc:
        return HttpResponse("; ".join(exc.messages), status=400, content_type="text/plain")
    try:
        labels = labels_record_batch(assignment_id=assignment.pk, user=request.user,
                                     decisions=[{"criterion_id": c, **kwargs} for c, kwargs in items])
    except BatchRefused as exc:
        return HttpResponse("; ".join(exc.messages), status=409 if exc.conflict else 400, content_type="text/plain")
    except ValidationError as exc:
        return HttpResponse(_error_text(exc), status=400, content_type="text/plain")
    assignment.refresh_from_db(fields=["status"])
    criteria = {c.pk: c for c in selectors.criteria_for_response(response=assignment.response)}
    rows = [selectors.CriterionRow(criterion=criteria[label.criterion_id], label=label) for label in labels]
    return render(request, "annotation/label.html#criterion-rows-batch", {
        "assignment": assignment, "rows": rows, "read_only": assignment.status not in selectors.OPEN_STATUSES,
        **selectors.assignment_status_bar(assignment=assignment), "oob": True,
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
    status = request.GET.get("status") or None
    # Counted and paged in the database: the page's items are the only ones read.
    membership, items = selectors.review_queue_for_checker(user=request.user, project_id=project.pk, status=status)
    counts = selectors.review_queue_counts(membership=membership, user=request.user)
    paginator = Paginator(items, 50)
    paginator.count = counts[status] if status in counts else sum(counts.values())  # counted already
    page = paginator.get_page(request.GET.get("page"))
    page.object_list = selectors.review_queue_rows(items=page.object_list, membership=membership, user=request.user)
    selectors.review_queue_disagreements(rows=[r for r in page if r.status != "waiting"], cohort=membership.cohort)
    return render(request, "annotation/review_queue.html", {
        "project": project, "cohort": membership.cohort, "page": page, "status": status, "counts": counts,
    })


def _next_ready(user, project_id: int, after: int | None = None) -> int | None:
    _, items = selectors.review_queue_for_checker(user=user, project_id=project_id, status="ready")
    return next((item["response_id"] for item in items[:2] if item["response_id"] != after), None)


@login_required
def review_page(request, response_id: int):
    item = selectors.review_item_get_for_checker(response_id=response_id, user=request.user)
    return render(request, "annotation/review.html", selectors.review_page_data(item=item))


@login_required
def review_assignment_page(request, assignment_id: int):
    """Links of the per-assignment review that came before: the item's review page."""
    assignment = get_object_or_404(Assignment.objects.only("response_id"), pk=assignment_id)
    item = selectors.review_item_get_for_checker(response_id=assignment.response_id, user=request.user)
    return redirect("review-page", response_id=item.response.pk)


@login_required
@require_POST
def review_save(request, response_id: int, criterion_id: int):
    item = selectors.review_item_get_for_checker(response_id=response_id, user=request.user)
    criterion = selectors.criterion_get_for_response(response=item.response, criterion_id=criterion_id)
    form = ReviewForm(request.POST)
    error = ""
    if not form.is_valid():
        error = "; ".join(e for errors in form.errors.values() for e in errors)
    else:
        try:
            item, _, _ = review_decision_record(response_id=response_id, criterion_id=criterion.pk, user=request.user,
                                                **form.service_kwargs())
        except ValidationError as exc:
            error = _error_text(exc)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect(reverse("review-page", args=[response_id]) + f"#crit-{criterion.pk}")
    context = selectors.review_page_data(item=item)
    row = next(r for r in context["rows"] if r.criterion.pk == criterion.pk)
    row.error = error
    return render(request, "annotation/review.html#review-row-saved", {**context, "row": row, "oob": True})


@login_required
@require_POST
def review_complete_view(request, response_id: int):
    item = selectors.review_item_get_for_checker(response_id=response_id, user=request.user)
    try:
        review_complete(response_id=item.response.pk, user=request.user)
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
        return redirect("review-page", response_id=item.response.pk)
    names = ", ".join(a.annotator.username for a in item.assignments)
    messages.success(request, f"Checked ({names}). Your decisions are now the cohort's labels.")
    following = _next_ready(request.user, item.project.pk, after=item.response.pk)
    if following is not None:
        return redirect("review-page", response_id=following)
    return redirect("review-queue", slug=item.project.slug)


@login_required
@require_POST
def review_reopen(request, assignment_id: int):
    assignment = get_object_or_404(Assignment.objects.only("response_id"), pk=assignment_id)
    item = selectors.review_item_get_for_checker(response_id=assignment.response_id, user=request.user)
    assignment = next((a for a in item.assignments if a.pk == assignment_id), None)
    if assignment is None:
        raise Http404("No such assignment to reopen")
    try:
        assignment_reopen(assignment=assignment, by=request.user, reason=request.POST.get("reason", ""))
        messages.success(request, f"Reopened for {assignment.annotator.username}.")
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    return redirect("review-queue", slug=item.project.slug)


# --- researcher ---------------------------------------------------------------------------


@login_required
def project_assignments(request, slug: str):
    project = project_get_for(user=request.user, action="manage", slug=slug)
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
    project = project_get_for(user=request.user, action="manage", slug=slug)
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
    project = project_get_for(user=request.user, action="manage", slug=slug)
    assignment = get_object_or_404(Assignment, pk=assignment_id, project=project)
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
    project = project_get_for(user=request.user, action="manage", slug=slug)
    assignment = get_object_or_404(Assignment, pk=assignment_id, project=project)
    try:
        assignment_reopen(assignment=assignment, by=request.user, reason=request.POST.get("reason", ""))
        messages.success(request, "Reopened.")
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    return redirect("project-assignments", slug=slug)


@login_required
@require_POST
def project_guidelines_update(request, slug: str):
    """A manager sets the project's instructions for annotators (Markdown; audited)."""
    project = project_get_for(user=request.user, action="manage", slug=slug)
    try:
        settings = settings_clean({"guidelines": request.POST.get("guidelines", "").replace("\r\n", "\n")})
        project_settings_update(project=project, settings=settings, by=request.user, source="project page")
        messages.success(request, "Guidelines saved.")
    except (ValueError, ValidationError) as exc:
        messages.error(request, str(exc))
    return redirect(reverse("project-detail", args=[project.slug]) + "#project-guidelines")


@login_required
@require_POST
def project_stratum_groups_update(request, slug: str):
    """A manager sets how the coverage page groups themes into capability families and specialties
    into macro-categories: JSON checked by ``stratum_groups_clean`` (audited). Bad input is refused
    with a message naming what is wrong; nothing is saved and the text stays in the form."""
    project = project_get_for(user=request.user, action="manage", slug=slug)
    text = request.POST.get("stratum_groups", "").replace("\r\n", "\n")
    try:
        try:
            value = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise ValueError(f"stratum_groups: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
        settings = settings_clean({"stratum_groups": value})
        changed = project_settings_update(project=project, settings=settings, by=request.user, source="project page")
        request.session.pop(STRATUM_GROUPS_DRAFT, None)
        messages.success(request, "Stratum groups saved." if changed else "Stratum groups unchanged.")
    except (ValueError, ValidationError) as exc:
        request.session[STRATUM_GROUPS_DRAFT] = {"project": project.pk, "text": text}
        messages.error(request, f"Not saved: {_error_text(exc) if isinstance(exc, ValidationError) else exc}")
    return redirect(reverse("project-detail", args=[project.slug]) + "#project-stratum-groups")


@login_required
def project_guidance(request, slug: str):
    """A manager writes each criterion's guidance for annotators (Markdown; audited; no new
    rubric version): the project rubric's criteria, or with ``?case=ID`` that case's."""
    project = project_get_for(user=request.user, action="manage", slug=slug)
    case_id = (request.GET.get("case") or "").strip()
    if request.method == "POST":
        form = GuidanceForm(request.POST)
        if not form.is_valid():
            raise BadRequest(form.errors_text())  # the page's 400, naming the field
        criterion = get_object_or_404(Criterion, project=project, pk=form.cleaned_data["criterion"])
        try:
            changed = criterion_guidance_update(criterion=criterion, guidance=form.cleaned_data["guidance"].replace("\r\n", "\n"),
                                                by=request.user, source="guidance page")
            messages.success(request, f"Guidance of {criterion.external_id} saved." if changed else "Nothing changed.")
        except FieldError as exc:
            messages.error(request, f"{criterion.external_id}: {exc.message}")
        query = f"?case={quote(case_id)}" if case_id else ""
        return redirect(reverse("project-guidance", args=[project.slug]) + query + f"#guidance-{criterion.pk}")
    case, criteria = None, Criterion.objects.filter(project=project, case__isnull=True, rubric_version__is_current=True)
    if case_id:
        case = Case.objects.filter(project=project, external_id=case_id).first()
        if case is None:
            messages.error(request, f"No case {case_id!r} in this project.")
            criteria = Criterion.objects.none()
        else:
            criteria = Criterion.objects.filter(project=project, rubric_version_id=case.rubric_version_id)
    return render(request, "annotation/project_guidance.html", {
        "project": project, "case": case, "case_id": case_id, "criteria": criteria.order_by("position", "pk"),
        "guidance_max": GUIDANCE_MAX,
    })


@login_required
@require_POST
def project_role_update(request, slug: str):
    """A manager gives a user a role in the project, changes it, or takes it away."""
    project = project_get_for(user=request.user, action="manage", slug=slug)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {e}" for k, errors in form.errors.items() for e in errors))
    else:
        try:
            role = project_role_set(project=project, username=form.cleaned_data["username"], role=form.cleaned_data["role"],
                                    by=request.user)
            messages.success(request, f"{form.cleaned_data['username']} is now {role.role if role else 'without a role'} "
                                      f"in {project.slug}.")
        except ValidationError as exc:
            messages.error(request, _error_text(exc))
    return redirect(reverse("project-detail", args=[project.slug]) + "#project-roles")
