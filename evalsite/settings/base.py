"""Settings shared by every environment, read from environment variables.

DATABASE_URL, CELERY_BROKER_URL, SECRET_KEY, DEBUG and ALLOWED_HOSTS configure a deployment;
without them evalsite runs embedded: a SQLite file and a file-system Celery broker under
``var/`` so that nothing else has to be installed (SPEC §6). Which of the settings modules is
used: ``evalsite.settings.DEFAULT_SETTINGS_MODULE`` (production) unless DJANGO_SETTINGS_MODULE
says otherwise, as ``make demo`` does.
"""
import os
import re
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

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
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "django_htmx",
    "template_partials",
    "django_celery_results",
    "annotation",
    "grading",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "evalsite.errors.RequestSizeMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # An answer to a signed-in user or a token is never stored by a browser or a proxy.
    "evalsite.headers.NoStoreMiddleware",
    # A NUL character in the URL, the query or a form field: a 400 before any view reads it.
    "evalsite.errors.RequestTextMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    "evalsite.errors.ErrorPagesMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
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
    # Django's SQLite backend, reading a decimal column beyond its digits without raising (evalsite.sqlite).
    DATABASES["default"]["ENGINE"] = "evalsite.sqlite"
    # Tests: Django's in-memory database, named so, as the engine is not Django's own (pytest-django
    # gives each xdist worker a suffixed copy of a named file otherwise; an in-memory one needs none).
    DATABASES["default"].setdefault("TEST", {}).setdefault("NAME", ":memory:")
    # WAL lets the web server and the worker read while the other writes.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].update(
        {"transaction_mode": "IMMEDIATE", "timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"}
    )

elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's PostgreSQL backend, skipping the health check's round trip for a connection that
    # worked a moment ago (evalsite.postgresql).
    DATABASES["default"]["ENGINE"] = "evalsite.postgresql"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-axes counts failed logins (the login form and the admin's): after AXES_FAILURE_LIMIT
# failures for one user name, or from one address, that user or address waits AXES_COOLOFF_TIME.
# Django's ModelBackend, with the session's user read by one plain statement (evalsite.auth_backends).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "evalsite.auth_backends.UserBackend"]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

# Client identity for every throttle, the login lockout above included (evalsite.throttling): the
# number of proxies of the operator's in front of the app. 0: X-Forwarded-For is ignored and the
# connection's address counts; N: the N-th address from the right of X-Forwarded-For.
EVALSITE_TRUSTED_PROXIES = env.str("EVALSITE_TRUSTED_PROXIES", default="0").strip()
if not EVALSITE_TRUSTED_PROXIES.isdigit():
    raise ImproperlyConfigured(f"EVALSITE_TRUSTED_PROXIES={EVALSITE_TRUSTED_PROXIES!r}: write the number of trusted proxies "
                               "in front of the app (0, the default, when clients connect to it directly)")
EVALSITE_TRUSTED_PROXIES = int(EVALSITE_TRUSTED_PROXIES)
AXES_CLIENT_IP_CALLABLE = "evalsite.throttling.client_address"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))  # where collectstatic writes

# Django's database sessions, loaded with one plain statement instead of an ORM query (evalsite.sessions).
SESSION_ENGINE = "evalsite.sessions"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Cached reports, the adjudication queue's counts and the API throttles' histories (read and written
# on every API request): Django's database cache with a one-statement get and set (evalsite.cache).
# Above MAX_ENTRIES a new entry culls a third of the table in key order, which takes the reports and
# the queue's counts first (their keys sort before the throttles'): Django's default of 300 is
# reached by a few readers of a large study, and culled queue counts must be counted again.
CACHES = {
    "default": {
        "BACKEND": "evalsite.cache.DatabaseCache",
        "LOCATION": "evalsite_cache",
        "OPTIONS": {"MAX_ENTRIES": env.int("EVALSITE_CACHE_MAX_ENTRIES", default=10_000)},
    }
}

# The API: per-user tokens (``Authorization: Token KEY``; a wrong key counts against the caller's
# address, see evalsite.api_auth) or the browser's session. No Basic authentication. Throttles count
# an anonymous caller by its address (evalsite.throttling.client_address).
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "evalsite.api_auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Request bodies are JSON (the uploads are multipart: their views say so): a form cannot carry
    # null, a number or a list as the schema states them.
    "DEFAULT_PARSER_CLASSES": ["evalsite.api_parsers.JSONParser"],
    "EXCEPTION_HANDLER": "evalsite.api_errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "evalsite.api_schema.Schema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "evalsite.api_pagination.Pagination",
    "DEFAULT_THROTTLE_CLASSES": ["evalsite.throttling.AnonRateThrottle", "evalsite.throttling.UserRateThrottle"],
    # DRF's own reading of X-Forwarded-For, for any throttle that is not evalsite.throttling's: the same number.
    "NUM_PROXIES": EVALSITE_TRUSTED_PROXIES,
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_ANON_RATE", default="60/min"),
        "user": env.str("API_USER_RATE", default="6000/min"),
        # Report requests with bootstrap intervals (ci=true) per user (grading.api.reports).
        "report_intervals": env.str("API_REPORT_INTERVALS_RATE", default="30/hour"),
        # Failed token authentications per address (evalsite.api_auth).
        "token_failure": env.str("API_TOKEN_FAILURE_RATE", default="10/15min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "evalsite API",
    "DESCRIPTION": "Projects, rubrics, labels, judges, reports, adjudication and gold of evalsite. "
                   "Authenticate with `Authorization: Token KEY` (create the key on /account/api-token/ "
                   "or with `manage.py api_token USER`).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The two verdict choice sets (a label's, with human names, and the API inputs') are one enum.
    "ENUM_NAME_OVERRIDES": {"Verdict": "annotation.decisions.VERDICTS"},
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "evalsite.api_schema.parameters_refuse_nul"],
}

# Content-Security-Policy on every page: scripts and styles from this site only, nothing inline
# but style attributes (htmx and the charts set them); no plug-ins, no framing, no base-URI tricks.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

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
    # Redis hands an unacknowledged task to another worker after this long (a worker SIGKILLed
    # keeps its messages from everyone until then). Nothing waits for it: a dead worker's judge
    # run is handed over by the sweeper (below) once its lease lapses, and a redelivered copy of
    # a run that is alive or finished ends at once.
    else {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=900)}
)
# The embedded broker writes each message whole before a worker can read it (evalsite.broker).
CELERY_BROKER_TRANSPORT = "evalsite.broker:FilesystemTransport" if CELERY_BROKER_URL.startswith("filesystem") else None
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default="django-db")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# The queue tasks go to unless routed (workers: `-Q`); one name for the site, its workers and beat.
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_TASK_DEFAULT_QUEUE", default="celery")
# Acknowledged when a task ends, not when it starts: a task whose worker dies is delivered again
# (after the visibility timeout on Redis) instead of being lost. With it, one message prefetched
# per worker process: a busy worker holds only the messages it is executing, never a queued
# run's that another worker could start now. A pool process that dies (OOM, SIGKILL of the child)
# puts its message back at once (reject_on_worker_lost on the tasks that are safe to run again).
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery beat (`celery -A evalsite beat`, one per deployment; `worker -B` in the demo) sends the
# judge-run sweeper every EVALSITE_JUDGE_SWEEP_SECONDS: a run whose worker died (no heartbeat for
# EVALSITE_JUDGE_LEASE_SECONDS) is handed to another worker within a lease plus one interval of
# its last heartbeat (grading.judges.sweep). A sweep not started within an interval expires.
EVALSITE_JUDGE_SWEEP_SECONDS = env.float("EVALSITE_JUDGE_SWEEP_SECONDS", default=5.0)
# The same sweep sends a judge run or a data job again when it has been queued this long since it
# was last sent with nobody executing it: its message was lost (a Redis restart without
# persistence, a purge). A copy that finds the work taken or ended does nothing, so a message that
# was only waiting behind busy workers costs one short task per interval.
EVALSITE_QUEUED_RESEND_SECONDS = env.float("EVALSITE_QUEUED_RESEND_SECONDS", default=300.0)
# A worker lowers its CPU priority by this much when it starts (0 leaves it as started): the
# reports, imports and exports it computes take whole cores for seconds, and where they share a
# machine with the web processes the annotators' saves must not wait behind them (issue 26: p95
# 20.8 ms with a full-scale report computing at the same priority, 16.8 ms niced by 10, in one
# pair of runs; later runs varied more than that, docs/deploy.md). Judge runs mostly wait on the
# network and lose nothing by it.
EVALSITE_WORKER_NICE = env.int("EVALSITE_WORKER_NICE", default=10)
if not 0 <= EVALSITE_WORKER_NICE <= 19:
    raise ImproperlyConfigured(f"EVALSITE_WORKER_NICE={EVALSITE_WORKER_NICE}: write a niceness from 0 (none) to 19")
CELERY_BEAT_SCHEDULE = {
    "judge-run-sweep": {"task": "grading.judge_run_sweep", "schedule": EVALSITE_JUDGE_SWEEP_SECONDS,
                        "options": {"expires": EVALSITE_JUDGE_SWEEP_SECONDS}},
}
# Where beat keeps the time of its last sends (`celery beat -s` overrides it).
CELERY_BEAT_SCHEDULE_FILENAME = env.str("CELERY_BEAT_SCHEDULE_FILENAME", default=str(VAR_DIR / "celerybeat-schedule"))
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# With DEBUG on (the demo), Django's debug pages would show the settings and the environment for an
# error raised outside a view: the site's error page with an error id instead (evalsite.errors).
DEFAULT_EXCEPTION_REPORTER = "evalsite.errors.SiteExceptionReporter"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="WARNING")},
    # evalsite/errors.py logs 4xx answers in one line each (evalsite.refused) and server errors with
    # their error id and traceback (evalsite.errors); django.request keeps only what neither logs.
    "loggers": {"django.request": {"level": "ERROR"}},
}

# Background data jobs (gold export, bundle import from the browser): their files live here.
EVALSITE_JOBS_DIR = Path(env.str("EVALSITE_JOBS_DIR", default=str(VAR_DIR / "jobs")))
# A running data job writes a heartbeat every sixth of this; one silent for this long lost its
# worker and is taken over by the worker the broker hands its task to next.
EVALSITE_JOB_LEASE_SECONDS = env.float("EVALSITE_JOB_LEASE_SECONDS", default=120.0)
# Judges (issues 11 and 27; grading.judges.endpoints): the endpoints a judge may call, each a
# base-URL prefix paired with the one environment variable whose value (an API key) is sent to it,
# or with none. In the environment: comma-separated PREFIX=VARIABLE or PREFIX entries, e.g.
# "https://api.openai.com/v1=OPENAI_API_KEY,http://127.0.0.1:11434/v1". Empty: no judge calls out.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def judge_endpoints_parse(text: str) -> list[tuple[str, str]]:
    """``EVALSITE_JUDGE_ENDPOINTS``'s value as (base-URL prefix, variable name or "") pairs."""
    pairs = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        prefix, _, name = entry.rpartition("=") if "=" in entry else (entry, "", "")
        prefix, name = prefix.strip(), name.strip()
        if not prefix or (name and not _ENV_NAME.fullmatch(name)):
            raise ImproperlyConfigured(f"EVALSITE_JUDGE_ENDPOINTS: {entry!r} is not PREFIX=VARIABLE or PREFIX "
                                       "(e.g. https://api.openai.com/v1=OPENAI_API_KEY)")
        pairs.append((prefix, name))
    return pairs


_REPLACED = [name for name in ("EVALSITE_JUDGE_CREDENTIALS", "EVALSITE_JUDGE_BASE_URLS") if os.environ.get(name, "").strip()]
if _REPLACED:
    # Read together they would send every listed key to every listed URL (issue 27, point 6).
    raise ImproperlyConfigured(
        f"{' and '.join(_REPLACED)}: replaced by EVALSITE_JUDGE_ENDPOINTS, which pairs each base URL with the one "
        "variable sent to it, e.g. EVALSITE_JUDGE_ENDPOINTS=https://api.openai.com/v1=OPENAI_API_KEY; "
        "unset the old variables (README, Deployment: moving to EVALSITE_JUDGE_ENDPOINTS)")
EVALSITE_JUDGE_ENDPOINTS = judge_endpoints_parse(env.str("EVALSITE_JUDGE_ENDPOINTS", default=""))
# A judge run belongs to one worker at a time; a worker silent for this long loses it to another
# (the sweeper, EVALSITE_JUDGE_SWEEP_SECONDS above, hands the run over).
EVALSITE_JUDGE_LEASE_SECONDS = env.float("EVALSITE_JUDGE_LEASE_SECONDS", default=60.0)
# Provider rate limits (requests / tokens per minute per endpoint) are shared through this Redis
# server (default: the broker, when it is Redis), else through lock files in this directory.
EVALSITE_RATE_LIMIT_REDIS_URL = env.str(
    "EVALSITE_RATE_LIMIT_REDIS_URL", default=CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "")
EVALSITE_RATE_LIMIT_DIR = Path(env.str("EVALSITE_RATE_LIMIT_DIR", default=str(VAR_DIR / "ratelimits")))
# Gold export of a project with at least this many responses is split over this many processes
# (default: one per core, at most 2); 1 exports in one process.
EVALSITE_EXPORT_PROCESSES = env.int("EVALSITE_EXPORT_PROCESSES", default=min(2, os.cpu_count() or 1))
# gold.xlsx is written for a gold set of at most this many rows (a workbook costs about 90 µs a row to
# write; gold.csv and gold.parquet always hold the whole set, and the manifest says when the XLSX is left out).
EVALSITE_GOLD_XLSX_MAX_ROWS = env.int("EVALSITE_GOLD_XLSX_MAX_ROWS", default=250_000)
EVALSITE_EXPORT_PARALLEL_MIN_RESPONSES = env.int("EVALSITE_EXPORT_PARALLEL_MIN_RESPONSES", default=2000)
# The largest bundle a browser may upload; bigger uploads are refused before they are read.
EVALSITE_MAX_UPLOAD_BYTES = env.int("EVALSITE_MAX_UPLOAD_BYTES", default=200 * 1024 * 1024)
# Bundles (grading.bundles.reader, grading.bundles.limits): the most a bundle's files may add up to
# uncompressed (counted as they are read), the most a zip entry may expand, the most entries a zip
# may hold (counted from its end record, before its directory is read), the longest line of a
# .jsonl file, the most blank lines in one and the most blank space (whitespace-only lines and the
# whitespace around a line's JSON), each checked while the file streams.
EVALSITE_BUNDLE_MAX_BYTES = env.int("EVALSITE_BUNDLE_MAX_BYTES", default=8 * 1024**3)
EVALSITE_BUNDLE_MAX_RATIO = env.int("EVALSITE_BUNDLE_MAX_RATIO", default=100)
EVALSITE_BUNDLE_MAX_ENTRIES = env.int("EVALSITE_BUNDLE_MAX_ENTRIES", default=1000)
EVALSITE_BUNDLE_MAX_LINE_BYTES = env.int("EVALSITE_BUNDLE_MAX_LINE_BYTES", default=16 * 1024**2)
EVALSITE_BUNDLE_MAX_BLANK_LINES = env.int("EVALSITE_BUNDLE_MAX_BLANK_LINES", default=10_000)
EVALSITE_BUNDLE_MAX_BLANK_BYTES = env.int("EVALSITE_BUNDLE_MAX_BLANK_BYTES", default=1024**2)
# Any other request body: the most it may hold (a batch of 1,000 labels with long rationales fits).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)
# Uploads above this size go to a temporary file instead of memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
