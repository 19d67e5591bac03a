"""Imported judgments (``Judge.backend`` "replay", the default of a bundle's judge): the answers
of a judge run elsewhere, stored as they came. They are data, not a configuration: never edited,
never called; a run only takes stock of them.
"""
from .base import Badge, JudgeBackend, register


@register
class ReplayBackend(JudgeBackend):
    name = "replay"
    label = "replay of imported judgments"
    position = 20

    def badge(self, judge) -> Badge:
        return Badge("imported")

    def subtitle(self, judge) -> str:
        return f"imported · {judge.model or 'unknown model'} · {judge.condition}"
