"""URLs of routed labelling's writes, under ``projects/<slug:slug>/routing/`` (its figures are the
``routing`` report's page)."""
from django.urls import path

from . import views

urlpatterns = [
    path("extend/", views.routing_extend_submit, name="routing-extend"),
]
