"""URLs of grading.judges, included at the site root (full prefixes here)."""
from django.urls import path

from . import views

urlpatterns = [
    path("projects/<slug:slug>/judges/", views.judges_page, name="judges-page"),
    path("projects/<slug:slug>/judges/<id:judge_id>/edit/", views.judge_edit, name="judge-edit"),
    path("projects/<slug:slug>/judges/runs/", views.judge_runs, name="judge-runs"),
    path("projects/<slug:slug>/judges/runs/all/", views.judge_run_list, name="judge-run-list"),
    path("projects/<slug:slug>/judges/runs/start/", views.judge_run_start, name="judge-run-start"),
    path("projects/<slug:slug>/judges/runs/<id:run_id>/", views.judge_run_page, name="judge-run-page"),
    path("projects/<slug:slug>/judges/runs/<id:run_id>/stop/", views.judge_run_stop, name="judge-run-stop"),
    path("projects/<slug:slug>/judges/runs/<id:run_id>/resume/", views.judge_run_resume, name="judge-run-resume"),
    path("projects/<slug:slug>/judges/side-by-side/", views.side_by_side_lookup, name="side-by-side-lookup"),
    path("responses/<id:pk>/side-by-side/", views.side_by_side, name="response-side-by-side"),
]
