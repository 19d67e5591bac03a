"""The settings of annotator quality and their limits, checked in one place for the page and the API."""
from django.core.exceptions import ValidationError

from annotation.models import Project

MAX_RATE = Project.CHECK_RATE_MAX  # at most half of a queue: checks must stay a minority of an annotator's work
MAX_COUNT = 10_000
# The project fields and what each may hold.
SETTINGS = {
    "check_rate": (float, 0.0, MAX_RATE),
    "check_alert_threshold": (float, 0.0, 1.0),
    "check_min_items": (int, 1, MAX_COUNT),
    "check_window": (int, 1, MAX_COUNT),
    "check_feedback": (bool, None, None),
}
WORDS = {
    "check_rate": "check-item rate", "check_alert_threshold": "alert threshold", "check_min_items": "minimum check items",
    "check_window": "rolling window", "check_feedback": "annotator feedback",
}


def quality_settings_clean(data: dict) -> dict:
    """The quality settings in ``data`` (only those present) as typed values, or ValidationError naming the field."""
    clean = {}
    for name, (kind, low, high) in SETTINGS.items():
        if name not in data:
            continue
        value = data[name]
        if kind is bool:
            if not isinstance(value, bool):
                raise ValidationError({name: f"{WORDS[name]} must be true or false"})
            clean[name] = value
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise ValidationError({name: f"{WORDS[name]} must be a number"})
        if kind is int and int(value) != value:
            raise ValidationError({name: f"{WORDS[name]} must be a whole number"})
        if not low <= value <= high:
            raise ValidationError({name: f"{WORDS[name]} must be from {low:g} to {high:g}"})
        clean[name] = kind(value)
    return clean


def check_target(*, regular: int, rate: float) -> int:
    """How many check items a queue of ``regular`` items holds at ``rate`` (their share of the whole queue)."""
    if rate <= 0 or regular <= 0:
        return 0
    rate = min(rate, MAX_RATE)
    return int(round(rate * regular / (1.0 - rate)))
