"""URL routing: admin, auth, the two apps' pages and the API with its OpenAPI schema."""
from django.contrib import admin
from django.urls import include, path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from .converters import IdConverter

register_converter(IdConverter, "id")  # every <id:...> of the apps' URLs

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The documentation page: Swagger UI from drf-spectacular-sidecar's packaged assets, its
    # start-up script a separate file (no inline script, so it runs under the CSP).
    path("api/", include("grading.api.urls")),
    path("api/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("grading.urls")),
    path("", include("annotation.urls")),
]

# A server error: the site's 500 page with an error id, never Django's (evalsite.errors).
handler500 = "evalsite.errors.server_error"
