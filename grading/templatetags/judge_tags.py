"""Tags of the judge pages: the project page's judge section (runs with live progress, start /
stop / resume) and the sanitized Markdown used for untrusted response text (SPEC §8)."""
from django import template
from django.template.loader import render_to_string

from annotation.access import user_may
from annotation.markdown import markdown_render

register = template.Library()


@register.simple_tag(takes_context=True)
def project_judges(context, project):
    from grading.judges.forms import RunStartForm  # lazy: the judges' forms and selectors (pandas) load with the judges section
    from grading.judges.selectors import judge_section_data  # lazy: the judges' forms and selectors (pandas) load with the judges section

    request = context.get("request")
    if request is None or not user_may(project=project, user=request.user, action="manage"):
        return ""  # runs and judge settings are the managers'
    data = {**judge_section_data(project=project), "run_form": RunStartForm(project=project)}
    return render_to_string("grading/judges/section.html", data, request=request)


@register.filter
def markdown_safe(text: str) -> str:
    """Untrusted text as sanitized HTML, with the same sanitizer as the annotation pages."""
    return markdown_render(text or "")


@register.simple_tag
def percent(part, whole) -> str:
    """``{% percent done total %}``: a whole-number percentage, 0 when the total is 0."""
    try:
        return f"{100 * float(part) / float(whole):.0f}" if float(whole) else "0"
    except (TypeError, ValueError):
        return "0"
