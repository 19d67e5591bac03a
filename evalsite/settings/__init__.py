"""Settings split by environment: base (shared), local, test and production.

One default everywhere (SPEC §6): ``manage.py``, the Celery application and the WSGI application
use ``DEFAULT_SETTINGS_MODULE``, production, unless DJANGO_SETTINGS_MODULE names another; the
demo (``make demo``, ``make bench``) and the tests (``pytest.ini``, ``make test``) name theirs.
So a worker or a command started without it never runs with the demo's DEBUG and endpoints.
"""
import os

DEFAULT_SETTINGS_MODULE = "evalsite.settings.production"


def settings_module_default() -> str:
    """Set DJANGO_SETTINGS_MODULE to the default unless it is set; returns the module used."""
    return os.environ.setdefault("DJANGO_SETTINGS_MODULE", DEFAULT_SETTINGS_MODULE)
