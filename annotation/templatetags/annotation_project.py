"""Template tags of the annotation app: the assignments section of the project page (issue 4)
and the ``markdown`` filter that renders untrusted text as sanitized HTML."""
import json

from django import template
from django.core.paginator import Paginator
from django.template.loader import render_to_string

from annotation.access import user_may
from annotation.assignments import METHODS
from annotation.forms import AssignForm
from annotation.markdown import markdown_render
from annotation.models import ProjectRole
from annotation.projects import STRATUM_GROUPS_DRAFT
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
    may_manage = user_may(project=project, user=request.user, action="manage")
    groups_text, rejected = "", False
    if may_manage:  # the text the last refused save sent, else the saved groups
        draft = request.session.get(STRATUM_GROUPS_DRAFT) if hasattr(request, "session") else None
        if isinstance(draft, dict) and draft.get("project") == project.pk:
            groups_text, rejected = str(draft.get("text", "")), True
            del request.session[STRATUM_GROUPS_DRAFT]  # shown once, with the message that says why
        elif project.stratum_groups:
            groups_text = json.dumps(project.stratum_groups, indent=2, ensure_ascii=False)
    return render_to_string("annotation/_project_roles.html", {
        **project_roles_page(project=project, request=request), "may_manage": may_manage,
        "stratum_groups_text": groups_text, "stratum_groups_rejected": rejected,
    }, request=request)


ROLES_PAGE = 50  # roles per page of the project page's list


def project_roles_page(*, project, request) -> dict:
    """The page of the project's roles that ``?roles_page`` names (the project page's list, and its
    htmx partial ``#role-list``)."""
    roles = ProjectRole.objects.filter(project=project).select_related("user").order_by("role", "user__username", "pk")
    return {"project": project, "roles": Paginator(roles, ROLES_PAGE).get_page(request.GET.get("roles_page"))}
