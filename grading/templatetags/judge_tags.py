"""Tags of the judge pages: the project page's judge section (runs with live progress, start /
stop / resume) and the sanitized Markdown used for untrusted response text (SPEC §8)."""
from django import template
from django.template.loader import render_to_string

from annotation.markdown import markdown_render

register = template.Library()


@register.simple_tag(takes_context=True)
def project_judges(context, project):
    from grading.judges.views import section_context

    return render_to_string("grading/judges/section.html", section_context(project=project), request=context.get("request"))


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
