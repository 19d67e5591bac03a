"""URLs of grading.reports."""
urlpatterns: list = []
