"""URLs of the quality-control page, to be included under ``projects/<slug:slug>/quality/``."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.qc_page, name="qc-page"),
    path("screen/", views.qc_screen_submit, name="qc-screen"),
    path("sample/", views.qc_sample_submit, name="qc-sample"),
    path("cases/<id:case_id>/outcome/", views.qc_outcome_submit, name="qc-outcome"),
    path("cases/<id:case_id>/reinstate/", views.qc_reinstate_submit, name="qc-reinstate"),
]
