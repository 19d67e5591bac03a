"""Template tags of the annotation app: the assignments section of the project page (issue 4)
and the ``markdown`` filter that renders untrusted text as sanitized HTML."""
from django import template
from django.template.loader import render_to_string

from annotation.access import user_may
from annotation.assignments import METHODS
from annotation.forms import AssignForm
from annotation.markdown import markdown_render
from annotation.models import ProjectRole
from annotation.selectors import decision_display, project_assignment_summary

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text):
    return markdown_render(text or "")


@register.simple_tag(takes_context=True)
def project_assignments(context, project):
    """Per cohort: members, assignments by status, the assign form and links (researchers only)."""
    request = context.get("request")
    if request is None or not user_may(project=project, user=request.user, action="manage"):
        return ""
    return render_to_string(
        "annotation/_project_section.html",
        {"project": project, "summary": project_assignment_summary(project=project),
         "form": AssignForm(project=project), "methods": METHODS},
        request=request,
    )


@register.filter(name="decision_text")
def decision_text(label):
    return decision_display(label)


@register.simple_tag(takes_context=True)
def project_roles(context, project):
    """Who has which role in the project, and (for managers) the form to change it."""
    request = context.get("request")
    if request is None or not user_may(project=project, user=request.user, action="view"):
        return ""
    roles = ProjectRole.objects.filter(project=project).select_related("user").order_by("role", "user__username")
    return render_to_string("annotation/_project_roles.html", {
        "project": project, "roles": roles, "may_manage": user_may(project=project, user=request.user, action="manage"),
    }, request=request)
