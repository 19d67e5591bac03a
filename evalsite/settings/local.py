"""Settings for one machine: `make demo`, development, SQLite and the embedded broker."""
from .base import *  # noqa: F401,F403
from .base import env

DEBUG = env.bool("DEBUG", default=True)
WHITENOISE_AUTOREFRESH = True
