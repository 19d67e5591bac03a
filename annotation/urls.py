"""URLs of the annotation pages."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
]
