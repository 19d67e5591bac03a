"""URLs of the grading pages (the project page, reports and judges) and of the researcher API."""
from django.urls import include, path

from . import views
from .api.decisions import DecisionListApi
from .goldcheck import views as goldcheck_views
from .reports.views import metrics_help

urlpatterns = [
    path("help/", metrics_help, name="metrics-help"),
    path("projects/import/", views.site_import, name="site-import"),
    path("projects/<slug:slug>/export/", views.project_export, name="project-export"),
    path("projects/<slug:slug>/import/", views.project_import, name="project-import"),
    path("jobs/<id:job_id>/", views.data_job, name="data-job"),
    path("jobs/<id:job_id>/download/", views.data_job_download, name="data-job-download"),
    path("jobs/<id:job_id>/columns/", views.data_job_columns, name="data-job-columns"),
    path("api/projects/<slug:slug>/decisions/", DecisionListApi.as_view(), name="api-decisions"),
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
    path("projects/<slug:slug>/jobs/", views.project_jobs, name="project-jobs"),
    path("projects/<slug:slug>/audit/", views.project_audit, name="project-audit"),
    path("projects/<slug:slug>/reports/", include("grading.reports.urls")),
    path("projects/<slug:slug>/adjudication/", include("grading.adjudication.urls")),
    path("projects/<slug:slug>/quality/", include("grading.qc.urls")),
    path("projects/<slug:slug>/routing/", include("grading.routing.urls")),
    path("projects/<slug:slug>/annotator-quality/", include("grading.goldcheck.urls")),
    path("work/feedback/<slug:slug>/", goldcheck_views.feedback_page, name="annotator-feedback"),
    path("", include("grading.judges.urls")),
]
