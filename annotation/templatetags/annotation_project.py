"""Inclusion tag for the project page: the annotation assignments section (issue 4)."""
from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def project_assignments(project):
    return format_html("")
