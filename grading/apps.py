"""App configuration for grading."""
from django.apps import AppConfig
from django.core import checks

from .judges.endpoints import endpoints_check


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "Grading"

    def ready(self) -> None:
        # Every judge backend declares itself on import: discovered once, as the admin discovers
        # admin modules, so ``Judge.kind`` knows them in every process.
        from .judges.backends import backends  # lazy: models must be loaded before the backends import them

        backends()
        # EVALSITE_JUDGE_ENDPOINTS is checked by ``manage.py check`` (and so by migrate and runserver).
        checks.register(endpoints_check)
