"""URLs of grading.judges."""
urlpatterns: list = []
