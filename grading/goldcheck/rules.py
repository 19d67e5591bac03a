"""The settings of annotator quality and their limits, checked in one place for the page, the API and
the bundle importer (``annotation.projects.quality_settings_clean``), and how many check items a queue holds."""
from annotation.projects import (
    QUALITY_MAX_COUNT,
    QUALITY_MAX_RATE,
    QUALITY_SETTINGS,
    quality_settings_clean,  # noqa: F401  (the page, the API and the services check here)
)

# The settings and their one check live with the project's other settings (a bundle's project.json
# carries them too); here under their names of this package.
MAX_RATE, MAX_COUNT, SETTINGS = QUALITY_MAX_RATE, QUALITY_MAX_COUNT, QUALITY_SETTINGS


def check_target(*, regular: int, rate: float) -> int:
    """How many check items a queue of ``regular`` items holds at ``rate`` (their share of the whole queue)."""
    if rate <= 0 or regular <= 0:
        return 0
    rate = min(rate, MAX_RATE)
    return int(round(rate * regular / (1.0 - rate)))
