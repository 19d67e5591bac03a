"""Inclusion tag for the project page: the report links section (issue 3)."""
from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def project_reports(project):
    return format_html("")
