"""A panel (``Judge.backend`` "panel"): a derived source voting over its member judges' decisions
(SPEC §3 ensemble vote: majority, weighted, unanimous or any). It is never run; its decisions
are made from its members' by ``grading.selectors.judges_frame``. Its settings are ``members``,
``vote`` and ``weights``; members are judges of the same project and never panels.
"""
from django import forms
from django.core.exceptions import ValidationError

from evalsite.codes import CONFLICT, NOT_FOUND

from ...models import Judge
from ..settings import VOTE_RULES, JudgeSettings, settings_schema
from .base import Badge, JudgeBackend, backend_names, register


def weights_parse(text: str) -> dict[str, float]:
    """``name=weight, name=weight`` as {name: weight}; ValidationError for a part that is not one."""
    weights = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, _, value = part.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            raise ValidationError(f"{part.strip()!r} is not name=weight") from None
    return weights


@register
class PanelBackend(JudgeBackend):
    name = "panel"
    label = "panel of judges (vote)"
    position = 30
    votes_over_members = derived = configurable = True
    column_kind = "panel"
    settings_keys = ("members", "vote", "weights")

    def settings_schema(self) -> dict:
        """Two or more members; a weighted vote names weights (one per member, which the schema
        cannot say: a weight missing or for a judge that is not a member is a 400), the other
        votes none. Members that are not judges of the project are a 404; one that is the panel
        itself or another panel, a 409."""
        others = [v for v in VOTE_RULES if v != "weighted"]
        return settings_schema(self.settings_keys, required=["members"], oneOf=[
            {"properties": {"vote": {"type": "string", "enum": others}}, "not": {"required": ["weights"]}},
            {"properties": {"vote": {"type": "string", "enum": ["weighted"]},
                            "weights": {"type": "object", "minProperties": 2}}, "required": ["vote", "weights"]},
        ])

    def settings_fields(self) -> dict:
        return {
            "panel_members": forms.CharField(required=False, help_text="Panels only: member judge names, separated by commas."),
            "panel_vote": forms.ChoiceField(required=False, choices=[(v, v) for v in VOTE_RULES]),
            "panel_weights": forms.CharField(required=False,
                                             help_text="Panels with a weighted vote: name=weight, separated by commas."),
        }

    def settings_initial(self, settings: JudgeSettings) -> dict:
        return {"panel_members": ", ".join(settings.members), "panel_vote": settings.vote,
                "panel_weights": ", ".join(f"{k}={v:g}" for k, v in settings.weights.items())}

    def settings_write(self, data: dict, settings: dict) -> None:
        for key in ("members", "vote", "weights"):
            settings.pop(key, None)
        settings["members"] = [t for t in (data.get("panel_members") or "").replace(",", " ").split() if t]
        settings["vote"] = data.get("panel_vote") or "majority"
        try:
            weights = weights_parse(data.get("panel_weights") or "")
        except ValidationError as exc:
            raise ValidationError({"panel_weights": exc.messages}) from None
        if weights:
            settings["weights"] = weights

    def validate(self, *, judge, settings: JudgeSettings) -> dict:
        members, weights = settings.members, settings.weights
        if len(members) < 2:
            return {"settings": "settings.members: a panel needs at least two member judges"}
        if len(set(members)) != len(members):
            return {"settings": "settings.members: a judge is listed twice"}
        # A member that is not there (the panel itself too, when it is being created) is a 404; the
        # panel itself or another panel is one that is there but cannot be a member (409).
        found = set(Judge.objects.filter(project_id=judge.project_id, name__in=members).exclude(pk=judge.pk or None)
                    .values_list("name", flat=True)) | ({judge.name} if judge.pk else set())
        missing = [m for m in members if m not in found]
        if missing:
            return {"settings": ValidationError(f"settings.members: no judge {missing[0]!r} in this project", code=NOT_FOUND)}
        if judge.name in members:
            return {"settings": ValidationError("settings.members: a panel cannot be its own member", code=CONFLICT)}
        nested = list(Judge.objects.filter(project_id=judge.project_id, name__in=members,
                                           backend__in=backend_names(votes_over_members=True))
                      .values_list("name", flat=True))
        if nested:
            first = next(m for m in members if m in nested)
            return {"settings": ValidationError(f"settings.members: {first!r} is itself a panel; panels do not nest",
                                                code=CONFLICT)}
        if settings.vote == "weighted":
            absent = [m for m in members if m not in weights]
            if absent:
                return {"settings": f"settings.weights: weighted vote needs a weight for {absent[0]!r}"}
            if sum(weights[m] for m in members) <= 0:
                return {"settings": "settings.weights: at least one weight must be positive"}
        extra = sorted(set(weights) - set(members))
        if extra:
            return {"settings": f"settings.weights: {extra[0]!r} is not a member"}
        return {}

    def badge(self, judge) -> Badge:
        return Badge(f"panel · {self._settings(judge).vote}")

    def subtitle(self, judge) -> str:
        settings = self._settings(judge)
        return f"{settings.vote} vote of {', '.join(settings.members)}"

    def _settings(self, judge) -> JudgeSettings:
        try:
            return self.settings_parse(judge.settings)
        except ValueError:  # shown, not run: a page must still list a misconfigured panel
            return JudgeSettings()
