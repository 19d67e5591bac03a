"""Settings for one machine: `make demo`, development, SQLite and the embedded broker.

Used only when DJANGO_SETTINGS_MODULE names them (``make demo``, ``make bench``); ``manage.py``,
Celery and WSGI default to production (``evalsite.settings.DEFAULT_SETTINGS_MODULE``).
"""
from .base import *  # noqa: F401,F403
from .base import env, judge_endpoints_parse

DEBUG = env.bool("DEBUG", default=True)
WHITENOISE_AUTOREFRESH = True

# The demo's judges call servers on this machine only (loopback, any port), without a key or with
# OPENAI_API_KEY, which is sent nowhere else. EVALSITE_JUDGE_ENDPOINTS in the environment replaces this.
LOOPBACK_JUDGE_URLS = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
EVALSITE_JUDGE_ENDPOINTS = judge_endpoints_parse(
    env.str("EVALSITE_JUDGE_ENDPOINTS", default=",".join(f"{url}=OPENAI_API_KEY" for url in LOOPBACK_JUDGE_URLS)))
