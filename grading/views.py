"""HTML views of the grading app that are not a report or a judge page: the project page
researchers start from. Its sections come from inclusion tags of the parts they belong to.
"""
from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import get_object_or_404, render

from annotation.models import Project


@staff_member_required
def project_detail(request, slug: str):
    project = get_object_or_404(Project, slug=slug)
    return render(request, "grading/project.html", {"project": project})
