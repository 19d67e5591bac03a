"""The pipeline API's routes (under ``/api/``); ids in paths are the database ids the list
endpoints return, projects go by slug."""
from django.urls import include, path

from . import adjudication, judges, projects, quality, reports, work

P = "projects/<slug:slug>/"
urlpatterns = [
    path("projects/", projects.ProjectListApi.as_view(), name="api-projects"),
    path(P, projects.ProjectDetailApi.as_view(), name="api-project"),
    path(P + "roles/", projects.ProjectRoleApi.as_view(), name="api-project-roles"),
    path(P + "import/", projects.ProjectImportApi.as_view(), name="api-project-import"),
    path(P + "gold/", projects.GoldExportApi.as_view(), name="api-gold-export"),
    path(P + "jobs/", projects.JobListApi.as_view(), name="api-project-jobs"),
    path(P + "cases/", projects.CaseListApi.as_view(), name="api-cases"),
    path(P + "criteria/", projects.CriterionListApi.as_view(), name="api-criteria"),
    path(P + "rubric-versions/", projects.RubricVersionListApi.as_view(), name="api-rubric-versions"),
    path(P + "responses/", projects.ResponseListApi.as_view(), name="api-responses"),
    path(P + "cohorts/", projects.CohortListApi.as_view(), name="api-cohorts"),
    path(P + "cohorts/<id:cohort_id>/members/", projects.CohortMemberApi.as_view(), name="api-cohort-members"),
    path(P + "assignments/", work.ProjectAssignmentListApi.as_view(), name="api-project-assignments"),
    path(P + "assignments/<id:assignment_id>/reassign/", work.AssignmentReassignApi.as_view(), name="api-assignment-reassign"),
    path(P + "routing/", work.RoutingExtendApi.as_view(), name="api-routing"),
    path(P + "annotator-quality/", quality.AnnotatorQualityApi.as_view(), name="api-annotator-quality"),
    path(P + "annotator-quality/checks/", quality.CheckSeedApi.as_view(), name="api-check-seed"),
    path(P + "my-feedback/", quality.MyFeedbackApi.as_view(), name="api-my-feedback"),
    path(P + "judges/", judges.JudgeListApi.as_view(), name="api-judges"),
    path(P + "judges/<id:judge_id>/", judges.JudgeDetailApi.as_view(), name="api-judge"),
    path(P + "runs/", judges.RunListApi.as_view(), name="api-runs"),
    path(P + "runs/<id:run_id>/", judges.RunDetailApi.as_view(), name="api-run"),
    path(P + "runs/<id:run_id>/stop/", judges.RunStopApi.as_view(), name="api-run-stop"),
    path(P + "runs/<id:run_id>/resume/", judges.RunResumeApi.as_view(), name="api-run-resume"),
    path(P + "judgments/", judges.JudgmentListApi.as_view(), name="api-judgments"),
    path(P + "adjudications/", adjudication.AdjudicationListApi.as_view(), name="api-adjudications"),
    path(P + "reports/", include(reports)),  # one route per report of the registry
    path("jobs/<id:job_id>/", projects.JobDetailApi.as_view(), name="api-job"),
    path("jobs/<id:job_id>/download/", projects.JobDownloadApi.as_view(), name="api-job-download"),
]
