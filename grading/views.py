"""HTML views of the grading app that are not a report, judge or adjudication page: the project
page researchers start from (its sections come from inclusion tags of the parts they belong to),
and the project's data jobs — gold export and bundle import from the browser, run by a worker
(``grading.jobs``), with a status partial the page polls while a job runs, and the column step of
an uploaded table (a format read column by column) before its import is queued, and every job of
the project a page at a time; and the project's audit trail (managers; ``?format=csv`` downloads it whole).
"""
import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotation.access import project_get_for, role_of, user_may
from annotation.templatetags.annotation_project import project_roles_page
from annotation.templatetags.pager_tags import htmx_partial
from evalsite.spreadsheet import csv_lines

from . import jobs
from .audit import COLUMNS, audit_actions, audit_row, audit_trail
from .bundles.errors import BundleError
from .forms import BundleUploadForm, NewProjectUploadForm, column_kinds_from, column_mapping_from
from .models import DataJob
from .templatetags.data_tags import data_section_context


@login_required
def project_detail(request, slug: str):
    project = project_get_for(user=request.user, action="view", slug=slug)
    if htmx_partial(request, "role-list"):  # the roles list's pager
        return render(request, "annotation/_project_roles.html#role-list", project_roles_page(project=project, request=request))
    return render(request, "grading/project.html", {"project": project, "role": role_of(project=project, user=request.user),
                                                    "manages": user_may(project=project, user=request.user, action="manage")})


def _section(request, project, form=None, started: DataJob | None = None):
    """The data section again (htmx) or the project page at it; a job just started is followed by a
    banner that keeps up with it until it has finished or failed (``?started=ID`` after a redirect)."""
    if request.htmx:
        return render(request, "grading/_data_section.html",
                      data_section_context(project=project, user=request.user, form=form, started=started and started.pk))
    query = f"?started={started.pk}" if started is not None else ""
    return redirect(reverse("project-detail", args=[project.slug]) + query + "#project-data")


@login_required
@require_POST
def project_export(request, slug: str):
    project = project_get_for(user=request.user, action="export", slug=slug)
    job = jobs.data_job_export_start(project=project, user=request.user)
    return _section(request, project, started=job)


@login_required
@require_POST
def project_import(request, slug: str):
    """Upload a bundle into this project (its project.json must name this project)."""
    project = project_get_for(user=request.user, action="manage", slug=slug)
    form, job = _upload_form(request), None
    if form is not None and form.is_valid():
        try:
            job = jobs.data_job_import_start(upload=form.cleaned_data["bundle"], user=request.user, project=project,
                                             update_settings=form.cleaned_data["update_settings"],
                                             data_format=form.cleaned_data["format"], choose_columns=True)
            if job.awaiting_columns:  # a table: its columns are chosen on the next page
                url = reverse("data-job-columns", args=[job.pk])
                return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
        except ValidationError as exc:
            for name, errors in exc.message_dict.items():
                form.add_error(name if name in form.fields else "bundle", errors)
    return _section(request, project, form=form, started=job)


def _upload_form(request) -> BundleUploadForm:
    """The upload form (a body over the size limit never gets here: evalsite.errors answers 413)."""
    return BundleUploadForm(request.POST, request.FILES)


@login_required
@require_POST
def site_import(request):
    """A bundle for a new project (superusers: creating a project is not a project role)."""
    if not request.user.is_superuser:
        raise PermissionDenied("Only superusers create projects; a project's managers import into it from its page")
    form = NewProjectUploadForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            job = jobs.data_job_import_start(upload=form.cleaned_data["bundle"], user=request.user,
                                             update_settings=form.cleaned_data["update_settings"],
                                             data_format=form.cleaned_data["format"],
                                             project_slug=form.cleaned_data["project"])
            return redirect("data-job", job_id=job.pk)
        except ValidationError as exc:
            for name, errors in exc.message_dict.items():
                form.add_error(name if name in form.fields else "bundle", errors)
    messages.error(request, "; ".join(e for errors in form.errors.values() for e in errors))
    return redirect("home")


JOBS_PAGE = 50  # jobs per page of the jobs page


@login_required
def project_jobs(request, slug: str):
    """Every data job of the project the user may open (adjudicators: exports; managers: exports
    and imports), newest first, a page at a time; the project page's data section shows the recent
    ones and links here. The pager's htmx request gets the table alone."""
    project = project_get_for(user=request.user, action="export", slug=slug)
    _, may_import, every = jobs.data_jobs_for(project=project, user=request.user)
    page = Paginator(every, JOBS_PAGE).get_page(request.GET.get("page"))
    template = "grading/jobs.html#job-list" if htmx_partial(request, "job-list") else "grading/jobs.html"
    return render(request, template, {"project": project, "page": page, "may_import": may_import})


def _job_for(request, job_id: int) -> DataJob:
    return jobs.data_job_get_for(user=request.user, job_id=job_id)


@login_required
def data_job(request, job_id: int):
    job = _job_for(request, job_id)
    if request.htmx and request.GET.get("banner"):  # the banner of a job just started, on the project page
        return render(request, "grading/_job_banner.html", {"job": job})
    template = "grading/_job.html" if request.htmx else "grading/job.html"
    return render(request, template, {"job": job})


@login_required
def data_job_columns(request, job_id: int):
    """The column step of an uploaded table: each table of the file with a menu per field, pre-filled
    by the headers' names, and its first rows; changing a table's kind shows that kind's fields (htmx
    partial ``#columns-form``, or the Show fields button). Import stores the choice with the job and
    queues it; a choice that leaves a table unreadable is shown again with what is missing."""
    job = _job_for(request, job_id)
    if job.kind != DataJob.IMPORT or not job.awaiting_columns:
        return redirect("data-job", job_id=job.pk)
    try:
        tables = jobs.data_job_columns(job=job, mapping={})
        if request.method == "POST":
            tables = jobs.data_job_columns(job=job, mapping=column_kinds_from(request.POST, tables))
            mapping = column_mapping_from(request.POST, tables)
            tables = jobs.data_job_columns(job=job, mapping=mapping)
            if "start" in request.POST and not any(t.problems for t in tables):
                jobs.data_job_columns_choose(job=job, mapping=mapping)
                return _section(request, job.project, started=job)
    except BundleError as exc:  # the file cannot be read: the job failed and says why
        messages.error(request, str(exc))
        return redirect("data-job", job_id=job.pk)
    template = "grading/job_columns.html#columns-form" if request.htmx else "grading/job_columns.html"
    return render(request, template, {"job": job, "tables": tables, "upload_name": jobs.job_path(job).name,
                                      "blocked": request.method == "POST" and any(t.problems for t in tables)})


@login_required
def data_job_download(request, job_id: int):
    job = _job_for(request, job_id)
    if job.kind != DataJob.EXPORT or job.status != DataJob.FINISHED:
        raise Http404("This job has no file to download")
    path = jobs.job_path(job)
    if path is None:
        raise Http404("The file is no longer there; export again")
    return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name, content_type="application/zip")


@login_required
def project_audit(request, slug: str):
    """Who changed what and when in the project: filter by action and user, 100 rows a page."""
    project = project_get_for(user=request.user, action="manage", slug=slug)
    action, who = request.GET.get("action", "")[:60], request.GET.get("who", "")[:150]
    trail = audit_trail(project=project, action=action, who=who)
    if request.GET.get("format") == "csv":
        lines = csv_lines(COLUMNS, ([r["when"].isoformat(), r["who"], r["action"], r["target"], _json(r["before"]),
                                     _json(r["after"]), r["note"]] for r in map(audit_row, trail.iterator(chunk_size=2000))))
        response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{project.slug}-audit.csv"'
        return response
    page = Paginator(trail, 100).get_page(request.GET.get("page"))
    return render(request, "grading/audit.html", {
        "project": project, "page": page,
        "rows": [{**row, "before": _json(row["before"]), "after": _json(row["after"])} for row in map(audit_row, page.object_list)],
        "actions": audit_actions(project=project), "action": action, "who": who})


def _json(value) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)
