"""Settings for a shared deployment: PostgreSQL, Redis or RabbitMQ, a WSGI server.

The default settings of ``manage.py``, Celery and WSGI (``evalsite.settings.DEFAULT_SETTINGS_MODULE``).
Everything comes from the environment; SECRET_KEY must be set, or nothing starts. DEBUG is off
whatever the environment says (the demo's settings are ``local``). HTTPS is assumed: secure cookies, HSTS and
a redirect to HTTPS; behind a proxy that terminates TLS set ``SECURE_PROXY_SSL_HEADER`` to the
header and value it sends, e.g. ``HTTP_X_FORWARDED_PROTO,https``. ``manage.py check --deploy``
with these settings prints no warning (tests/test_hardening.py).
"""
from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F401,F403
from .base import DATABASES, env

DEBUG = False
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY.strip():
    raise ImproperlyConfigured(
        "SECRET_KEY is not set. Production settings (the default of manage.py, Celery and WSGI) need a long random "
        "SECRET_KEY in the environment; for the demo on one machine set DJANGO_SETTINGS_MODULE=evalsite.settings.local "
        "(make demo does)")
CSRF_COOKIE_SECURE = True
SESSION_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
SECURE_REFERRER_POLICY = "same-origin"
_proxy_header = env.list("SECURE_PROXY_SSL_HEADER", default=[])
if _proxy_header:
    if len(_proxy_header) != 2:
        raise ValueError("SECURE_PROXY_SSL_HEADER: write the header and its value, e.g. HTTP_X_FORWARDED_PROTO,https")
    SECURE_PROXY_SSL_HEADER = tuple(_proxy_header)
X_FRAME_OPTIONS = "DENY"
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# Keep database connections across requests (each label save is one small request).
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
# Each request checks a kept connection before using it (one that worked less than a second ago
# and the server has not ended is not checked again: evalsite.postgresql).
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# The statements every request runs go through evalsite.statements: PostgreSQL prepares each once per
# connection after this many executions. Behind a connection pooler in transaction mode that cannot
# keep prepared statements (PgBouncer before 1.21), set DB_PREPARE_THRESHOLD=0: nothing is prepared.
if DATABASES["default"]["ENGINE"] == "evalsite.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "prepare_threshold", env.int("DB_PREPARE_THRESHOLD", default=5) or None)
