"""URLs of the adjudication pages, under ``projects/<slug>/adjudication/``."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.queue_page, name="adjudication-queue"),
    path("next/", views.next_item, name="adjudication-next"),
    path("items/<id:response_id>/", views.item_page, name="adjudication-item"),
    path("items/<id:response_id>/criteria/<id:criterion_id>/", views.item_save, name="adjudication-save"),
]
