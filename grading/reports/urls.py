"""URLs of the report pages, under ``projects/<slug>/reports/`` (see ``grading.urls``)."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.report_index, name="report-index"),
    path("agreement/", views.agreement_report_page, name="report-agreement"),
    path("coverage/", views.coverage_report_page, name="report-coverage"),
    path("judges/", views.judges_report_page, name="report-judges"),
    path("bias/", views.bias_report_page, name="report-bias"),
    path("calibration/", views.calibration_report_page, name="report-calibration"),
    path("traits/", views.traits_report_page, name="report-traits"),
    path("reliability/", views.reliability_report_page, name="report-reliability"),
    path("scores/", views.scores_report_page, name="report-scores"),
]
