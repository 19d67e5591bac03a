"""Tags of case quality control: the project page's section (``{% project_quality project %}``), with
the counts of screened, flagged, audited and excluded cases and a link to the quality page, shown
to the project's managers only."""
from django import template
from django.template.loader import render_to_string

from annotation.access import user_may
from grading.qc.selectors import qc_counts

register = template.Library()


@register.simple_tag(takes_context=True)
def project_quality(context, project):
    request = context.get("request")
    if request is None or not user_may(project=project, user=request.user, action="manage"):
        return ""  # quality control is the managers'
    return render_to_string("grading/qc/section.html", {"project": project, "counts": qc_counts(project=project)}, request=request)
