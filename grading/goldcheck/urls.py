"""URLs of the annotator-quality page, included under ``projects/<slug:slug>/annotator-quality/``."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.quality_page, name="quality-annotators"),
    path("settings/", views.quality_settings_submit, name="quality-annotators-settings"),
    path("seed/", views.quality_seed_submit, name="quality-annotators-seed"),
]
