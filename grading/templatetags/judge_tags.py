"""Inclusion tag for the project page: the judge runs section (issue 5)."""
from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def project_judges(project):
    return format_html("")
