"""Settings for one machine: `make demo`, development, SQLite and the embedded broker."""
from .base import *  # noqa: F401,F403
from .base import env

DEBUG = env.bool("DEBUG", default=True)
WHITENOISE_AUTOREFRESH = True

# The demo's judges call servers on this machine only (loopback, any port).
LOOPBACK_JUDGE_URLS = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
EVALSITE_JUDGE_BASE_URLS = env.list("EVALSITE_JUDGE_BASE_URLS", default=LOOPBACK_JUDGE_URLS)
EVALSITE_JUDGE_CREDENTIALS = env.list("EVALSITE_JUDGE_CREDENTIALS", default=["OPENAI_API_KEY"])
