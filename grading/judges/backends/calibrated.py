"""Another judge's calibrated scores (``Judge.backend`` "calibrated"): the judge ``NAME@calibrated``
that ``manage.py calibrate`` (``grading.reports.calibrated``) writes, one judgment per held-out
item. Its judgments are stored, not called: a run only takes stock of them. Its settings carry
``calibration``, the summary of the fit (judge, reference, held-out agreement before and after).
"""
from dataclasses import asdict, dataclass, field

from ..settings import JudgeSettings, SettingsError
from .base import Badge, JudgeBackend, register


@dataclass(frozen=True)
class CalibratedSettings(JudgeSettings):
    calibration: dict = field(default_factory=dict)  # what the calibration that made the judge found


@register
class CalibratedBackend(JudgeBackend):
    name = "calibrated"
    label = "another judge's calibrated scores (manage.py calibrate)"
    position = 40
    derived = True
    decides_own_criteria = True  # fitted for one ordinal criterion (or one scale of traits): nothing else

    def settings_parse(self, data: dict | None) -> CalibratedSettings:
        data = dict(data or {}) if isinstance(data, dict) else data
        calibration = data.pop("calibration", {}) if isinstance(data, dict) else {}
        if not isinstance(calibration, dict):
            raise SettingsError("calibration", "must be the JSON object manage.py calibrate stored")
        return CalibratedSettings(**asdict(super().settings_parse(data)), calibration=calibration)

    def badge(self, judge) -> Badge:
        return Badge("calibrated")

    def subtitle(self, judge) -> str:
        try:
            info = self.settings_parse(judge.settings).calibration
        except ValueError:
            info = {}
        return f"calibrated scores of {info.get('judge', '?')} against {info.get('reference', '?')}"
