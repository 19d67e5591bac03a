"""URL routing: admin, auth, the two apps' pages and the API with its OpenAPI schema."""
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("", include("grading.urls")),
    path("", include("annotation.urls")),
]
