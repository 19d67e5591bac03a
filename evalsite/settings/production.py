"""Settings for a shared deployment: PostgreSQL, Redis or RabbitMQ, a WSGI server.

Everything comes from the environment; SECRET_KEY must be set.
"""
from .base import *  # noqa: F401,F403
from .base import DATABASES, env

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY")
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# Keep database connections across requests (each label save is one small request).
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
