"""URLs of the quality-control page, to be included under ``projects/<slug:slug>/quality/``."""
from django.urls import path

from . import qc_views

urlpatterns = [
    path("", qc_views.qc_page, name="qc-page"),
    path("screen/", qc_views.qc_screen_submit, name="qc-screen"),
    path("sample/", qc_views.qc_sample_submit, name="qc-sample"),
    path("cases/<id:case_id>/outcome/", qc_views.qc_outcome_submit, name="qc-outcome"),
    path("cases/<id:case_id>/reinstate/", qc_views.qc_reinstate_submit, name="qc-reinstate"),
]
