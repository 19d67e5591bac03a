"""URLs of the grading pages: the project page, reports and judges."""
from django.urls import include, path

from . import views

urlpatterns = [
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
    path("projects/<slug:slug>/reports/", include("grading.reports.urls")),
    path("", include("grading.judges.urls")),
]
