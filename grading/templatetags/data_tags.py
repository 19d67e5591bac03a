"""The data section of the project page: export gold, import a bundle, and the recent jobs (the
project's jobs page lists them all)."""
from django import template
from django.template.loader import render_to_string

from ..forms import BundleUploadForm, NewProjectUploadForm
from ..jobs import data_jobs_for

register = template.Library()
RECENT_JOBS = 5


def data_section_context(*, project, user, form=None, started: int | str | None = None) -> dict:
    """The section's forms and recent jobs: only the kinds of job the user may open (an adjudicator
    sees exports, not the managers' imports, whose status partial would answer them 403).
    ``started``: the id of a job the user has just started, followed by a banner (ignored unless it
    is one of the jobs listed)."""
    may_export, may_import, every = data_jobs_for(project=project, user=user)
    recent = list(every[:RECENT_JOBS])
    return {
        "project": project, "may_export": may_export, "may_import": may_import, "jobs": recent,
        "jobs_total": every.count(),
        "started": next((job for job in recent if str(job.pk) == str(started) and job.user_id == user.pk), None),
        "form": form or BundleUploadForm(),
    }


@register.simple_tag(takes_context=True)
def project_data(context, project):
    request = context.get("request")
    if request is None:
        return ""
    data = data_section_context(project=project, user=request.user, started=request.GET.get("started"))
    if not (data["may_export"] or data["may_import"]):
        return ""
    return render_to_string("grading/_data_section.html", data, request=request)


@register.simple_tag
def upload_format_field():
    """The upload's format menu, for a form this app does not render (the home page's new project)."""
    return BundleUploadForm()["format"]


@register.simple_tag
def new_project_field():
    """The new-project upload's project slug field (for the home page's form)."""
    return NewProjectUploadForm()["project"]
