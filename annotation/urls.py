"""URLs of the annotation pages and of the annotator API. Only ids appear in them, never a
response's source model or external id, so nothing in a URL can unblind a project."""
from django.urls import path

from . import apis, views

urlpatterns = [
    path("", views.home, name="home"),
    path("account/api-token/", views.api_token, name="api-token"),
    path("work/next/", views.next_item, name="next-item"),
    path("work/items/", views.my_items, name="my-items"),
    path("work/<id:assignment_id>/", views.label_page, name="label-page"),
    path("work/<id:assignment_id>/criteria/<id:criterion_id>/", views.label_save_view, name="label-save"),
    path("work/<id:assignment_id>/submit/", views.label_submit, name="label-submit"),
    path("work/<id:assignment_id>/batch/", views.label_batch_view, name="label-save-batch"),
    path("work/<id:assignment_id>/time/", views.label_time, name="label-time"),
    path("review/<slug:slug>/", views.review_queue, name="review-queue"),
    path("review/items/<id:response_id>/", views.review_page, name="review-page"),
    path("review/items/<id:response_id>/criteria/<id:criterion_id>/", views.review_save, name="review-save"),
    path("review/items/<id:response_id>/complete/", views.review_complete_view, name="review-complete"),
    path("review/assignments/<id:assignment_id>/", views.review_assignment_page, name="review-assignment"),
    path("review/assignments/<id:assignment_id>/reopen/", views.review_reopen, name="review-reopen"),
    path("projects/<slug:slug>/roles/", views.project_role_update, name="project-role-update"),
    path("projects/<slug:slug>/guidelines/", views.project_guidelines_update, name="project-guidelines-update"),
    path("projects/<slug:slug>/guidance/", views.project_guidance, name="project-guidance"),
    path("projects/<slug:slug>/stratum-groups/", views.project_stratum_groups_update, name="project-stratum-groups-update"),
    path("projects/<slug:slug>/assignments/", views.project_assignments, name="project-assignments"),
    path("projects/<slug:slug>/assignments/assign/", views.project_assign_view, name="project-assign"),
    path("projects/<slug:slug>/assignments/<id:assignment_id>/reassign/", views.project_reassign, name="project-reassign"),
    path("projects/<slug:slug>/assignments/<id:assignment_id>/reopen/", views.project_reopen, name="project-reopen"),
    path("api/assignments/", apis.AssignmentListApi.as_view(), name="api-assignments"),
    path("api/assignments/<id:assignment_id>/", apis.AssignmentDetailApi.as_view(), name="api-assignment"),
    path("api/assignments/<id:assignment_id>/labels/", apis.LabelBatchApi.as_view(), name="api-assignment-labels"),
    path("api/assignments/<id:assignment_id>/submit/", apis.AssignmentSubmitApi.as_view(), name="api-assignment-submit"),
    path("api/labels/", apis.LabelSaveApi.as_view(), name="api-labels"),
]
