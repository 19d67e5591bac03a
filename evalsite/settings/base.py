"""Settings shared by every environment, read from environment variables.

DATABASE_URL, CELERY_BROKER_URL, SECRET_KEY, DEBUG and ALLOWED_HOSTS configure a deployment;
without them evalsite runs embedded: a SQLite file and a file-system Celery broker under
``var/`` so that nothing else has to be installed (SPEC §6).
"""
import os
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(environ.Env().str("EVALSITE_VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env(DEBUG=(bool, False))

SECRET_KEY = env("SECRET_KEY", default="insecure-local-key-change-me")
DEBUG = env("DEBUG")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_htmx",
    "template_partials",
    "django_celery_results",
    "annotation",
    "grading",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "evalsite.urls"
WSGI_APPLICATION = "evalsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'evalsite.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server and the worker read while the other writes.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].update(
        {"transaction_mode": "IMMEDIATE", "timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"}
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "evalsite_cache",
    }
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {"TITLE": "evalsite API", "VERSION": "1.0.0"}

# Celery: Redis/RabbitMQ in production; an embedded file-system broker by default.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="filesystem://")
_broker_dir = VAR_DIR / "broker"
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    # Redis hands an unacknowledged task to another worker after this long. Longer than a judge
    # run's lease (60 s) and than the watch countdown of a held run (grading.tasks), so a
    # redelivered copy of a live run only watches it; a dead worker's run is taken over by the
    # copy Celery re-queues (reject_on_worker_lost) or by this redelivery.
    else {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=900)}
)
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default="django-db")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="WARNING")},
}

# Background data jobs (gold export, bundle import from the browser): their files live here.
EVALSITE_JOBS_DIR = Path(env.str("EVALSITE_JOBS_DIR", default=str(VAR_DIR / "jobs")))
# Judges (issue 11): the environment variables a judge may name for its API key, and the URL
# prefixes its base URL must start with (SSRF and secret exfiltration guard). Empty: none.
EVALSITE_JUDGE_CREDENTIALS = env.list("EVALSITE_JUDGE_CREDENTIALS", default=[])
EVALSITE_JUDGE_BASE_URLS = env.list("EVALSITE_JUDGE_BASE_URLS", default=[])
# A judge run belongs to one worker at a time; a worker silent for this long loses it to another.
EVALSITE_JUDGE_LEASE_SECONDS = env.float("EVALSITE_JUDGE_LEASE_SECONDS", default=60.0)
# Provider rate limits (requests / tokens per minute per endpoint) are shared through this Redis
# server (default: the broker, when it is Redis), else through lock files in this directory.
EVALSITE_RATE_LIMIT_REDIS_URL = env.str(
    "EVALSITE_RATE_LIMIT_REDIS_URL", default=CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "")
EVALSITE_RATE_LIMIT_DIR = Path(env.str("EVALSITE_RATE_LIMIT_DIR", default=str(VAR_DIR / "ratelimits")))
# Gold export of a project with at least this many responses is split over this many processes
# (default: one per core, at most 2); 1 exports in one process.
EVALSITE_EXPORT_PROCESSES = env.int("EVALSITE_EXPORT_PROCESSES", default=min(2, os.cpu_count() or 1))
EVALSITE_EXPORT_PARALLEL_MIN_RESPONSES = env.int("EVALSITE_EXPORT_PARALLEL_MIN_RESPONSES", default=2000)
# The largest bundle a browser may upload; bigger uploads are refused before they are read.
EVALSITE_MAX_UPLOAD_BYTES = env.int("EVALSITE_MAX_UPLOAD_BYTES", default=200 * 1024 * 1024)
# Uploads above this size go to a temporary file instead of memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
