"""Settings for the test suite: fast hashing, local-memory cache, eager Celery by default.

DATABASE_URL selects SQLite (default) or PostgreSQL; the broker test that needs a real worker
reads CELERY_BROKER_URL itself and skips when it is not set.
"""
from .base import *  # noqa: F401,F403
from .base import env

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if env.str("EVALSITE_TEST_CACHE_TABLE", default=""):
    # A worker process of a broker test shares a cache table of the test database with the test (reports).
    CACHES = {"default": {"BACKEND": "evalsite.cache.DatabaseCache", "LOCATION": env.str("EVALSITE_TEST_CACHE_TABLE")}}
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
CELERY_TASK_EAGER_PROPAGATES = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_AUTOREFRESH = True

# Judges call the tests' loopback Chat Completions server only, with no key or one of these variables.
LOOPBACK_JUDGE_URLS = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
EVALSITE_JUDGE_ENDPOINTS = [(url, name) for url in LOOPBACK_JUDGE_URLS
                            for name in ("OPENAI_API_KEY", "JUDGE_TEST_KEY", "LOCAL_KEY", "MISSING_JUDGE_KEY")]

# The suite calls the API far faster than a person would; the throttling tests set their own rates.
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {  # noqa: F405
    **REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "anon": "100000/min", "user": "100000/min",
    "report_intervals": "100000/min"}}  # noqa: F405
