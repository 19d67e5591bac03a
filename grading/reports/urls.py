"""URLs of the report pages, under ``projects/<slug>/reports/`` (see ``grading.urls``): the index and
one route per page the registry declares, named ``report-<page>``, read from the registry each
time the routes are read, so a report registered later (a test's) is routed as well."""
from django.urls import path

from . import views
from .registry import RegistryRoutes, pages


def _routes() -> list:
    return [path("", views.report_index, name="report-index"),
            *[path(f"{key}/", views.report_page, {"page": key}, name=f"report-{key}") for key, _ in pages()]]


urlpatterns = RegistryRoutes(_routes)
