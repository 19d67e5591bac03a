"""Forms of the judge pages and admin: a judge (its ``settings`` JSON edited through named
fields), a panel, a cross-evaluation, and starting a run. Forms turn bad input into errors
next to the field; the services check the same rules again inside their transaction."""
from django import forms
from django.core.exceptions import ValidationError

from annotation.models import Response

from ..models import Judge
from .endpoints import allowed_base_urls, allowed_credentials
from .services import judge_validate
from .settings import REASONING_EFFORTS, VOTE_RULES, SettingsError, judge_settings_parse


def endpoint_help(fields) -> None:
    """Say under the base URL and key fields what this deployment allows."""
    urls, keys = allowed_base_urls(), allowed_credentials()
    fields["base_url"].help_text = ("Must start with one of: " + ", ".join(urls) if urls else
                                    "No endpoint is allowed yet (EVALSITE_JUDGE_BASE_URLS).")
    fields["api_key_env"].help_text = ("The name (never the key) of one of: " + ", ".join(keys) if keys else
                                       "No key variable is allowed yet (EVALSITE_JUDGE_CREDENTIALS); leave empty.")


SETTING_FIELDS = {
    "json_mode": "json_mode", "timeout_seconds": "timeout_seconds", "shuffle_options": "shuffle_options",
    "shuffle_seed": "shuffle_seed", "min_evidence": "min_evidence", "max_tokens": "max_tokens",
    "reasoning_effort": "reasoning_effort", "requests_per_minute": "requests_per_minute",
    "tokens_per_minute": "tokens_per_minute",
}
LIMIT_HELP = ("The provider's limit for this endpoint (base URL + key variable), shared by every judge and run "
              "on it; the strictest one set applies. Empty or 0: none.")


def _ids(text: str) -> list[str]:
    return [t for t in text.replace(",", " ").split() if t]


def _weights(text: str) -> dict[str, float]:
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


class JudgeForm(forms.ModelForm):
    json_mode = forms.BooleanField(required=False, initial=True, help_text="Ask for JSON mode where the server has it.")
    timeout_seconds = forms.FloatField(min_value=0.001, initial=60, help_text="Per request.")
    max_tokens = forms.IntegerField(required=False, min_value=1, initial=1024, help_text="Most output tokens per answer.")
    reasoning_effort = forms.ChoiceField(required=False, choices=[("", "(not sent)"), *[(e, e) for e in REASONING_EFFORTS]],
                                         help_text="For reasoning models; dropped if the server does not know it.")
    requests_per_minute = forms.IntegerField(required=False, min_value=0, label="Requests per minute", help_text=LIMIT_HELP)
    tokens_per_minute = forms.IntegerField(required=False, min_value=0, label="Tokens per minute", help_text=LIMIT_HELP)
    shuffle_options = forms.BooleanField(required=False, help_text="Shuffle ordinal / nominal options per item.")
    shuffle_seed = forms.IntegerField(initial=0)
    min_evidence = forms.IntegerField(min_value=0, initial=0, help_text="Verbatim quotes required (raises the criterion's own minimum).")
    few_shot_cohort = forms.CharField(required=False, help_text="Cohort whose labels give the few-shot examples.")
    few_shot_k = forms.IntegerField(min_value=0, initial=0, help_text="Examples per item, verdict-balanced.")
    few_shot_seed = forms.IntegerField(initial=0)
    few_shot_cases = forms.CharField(required=False, label="Few-shot cases",
                                     help_text="Case ids the examples may come from, separated by commas (empty: a seeded "
                                               "fifth of the cases). Reports of this judge leave these cases out.")
    panel_members = forms.CharField(required=False, help_text="Panels only: member judge names, separated by commas.")
    panel_vote = forms.ChoiceField(required=False, choices=[(v, v) for v in VOTE_RULES])
    panel_weights = forms.CharField(required=False, help_text="Panels with a weighted vote: name=weight, separated by commas.")

    class Meta:
        model = Judge
        fields = [
            "project", "name", "backend", "model", "base_url", "api_key_env", "condition", "temperature", "samples",
            "concurrency", "max_retries", "price_in_per_mtok", "price_out_per_mtok", "prompt_template",
        ]

    def __init__(self, *args, project=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        endpoint_help(self.fields)
        if project is not None:
            del self.fields["project"]
            self.fields["backend"].choices = [(Judge.OPENAI, "OpenAI-compatible chat completions"), (Judge.BASELINE, "offline baseline")]
            for name in ("panel_members", "panel_vote", "panel_weights"):  # panels have their own form there
                del self.fields[name]
        try:
            current = judge_settings_parse(self.instance.settings)
        except SettingsError:
            current = judge_settings_parse({})
        if self.instance.pk:
            for name in SETTING_FIELDS:
                self.initial.setdefault(name, getattr(current, name))
            self.initial.setdefault("few_shot_cohort", current.few_shot_cohort)
            self.initial.setdefault("few_shot_k", current.few_shot_k)
            self.initial.setdefault("few_shot_seed", current.few_shot_seed)
            self.initial.setdefault("few_shot_cases", ", ".join(current.few_shot_split.get("cases", [])))
            self.initial.setdefault("panel_members", ", ".join(current.members))
            self.initial.setdefault("panel_vote", current.vote)
            self.initial.setdefault("panel_weights", ", ".join(f"{k}={v:g}" for k, v in current.weights.items()))

    def clean(self):
        data = super().clean()
        settings = dict(self.instance.settings or {})
        for name, key in SETTING_FIELDS.items():
            if data.get(name) is not None:
                settings[key] = data[name]
        for key in ("reasoning_effort", "requests_per_minute", "tokens_per_minute"):
            if not data.get(key):
                settings.pop(key, None)  # emptied or not set: kept out of the settings JSON
        settings.pop("few_shot", None)
        if data.get("few_shot_cohort") or data.get("few_shot_k"):
            settings["few_shot"] = {"cohort": data.get("few_shot_cohort") or "", "k": data.get("few_shot_k") or 0,
                                    "seed": data.get("few_shot_seed") or 0}
            named = _ids(data.get("few_shot_cases") or "")
            if named:
                settings["few_shot"]["split"] = {"cases": named}
        for key in ("members", "vote", "weights"):
            settings.pop(key, None)
        if data.get("backend") == Judge.PANEL:
            settings["members"] = _ids(data.get("panel_members") or "")
            settings["vote"] = data.get("panel_vote") or "majority"
            try:
                weights = _weights(data.get("panel_weights") or "")
            except ValidationError as exc:
                self.add_error("panel_weights", exc)
                weights = {}
            if weights:
                settings["weights"] = weights
        self.instance.settings = settings
        if self.project is not None:
            self.instance.project = self.project
            taken = Judge.objects.filter(project=self.project, name=data.get("name")).exclude(pk=self.instance.pk)
            if data.get("name") and taken.exists():
                self.add_error("name", "a judge of this project already has this name")
        for name in self._meta.fields:
            if name in data:
                setattr(self.instance, name, data[name])
        if getattr(self.instance, "project_id", None):
            try:
                judge_validate(judge=self.instance)
            except ValidationError as exc:
                for field_name, messages in exc.message_dict.items():
                    self.add_error(field_name if field_name in self.fields else None, messages)
        return data


class PanelForm(forms.Form):
    name = forms.CharField(max_length=100)
    members = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    vote = forms.ChoiceField(choices=[(v, v) for v in VOTE_RULES])
    weights = forms.CharField(required=False, help_text="For a weighted vote: name=weight, separated by commas.")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        names = Judge.objects.filter(project=project).exclude(backend=Judge.PANEL).values_list("name", flat=True)
        self.fields["members"].choices = [(n, n) for n in names]

    def clean_weights(self) -> dict[str, float]:
        return _weights(self.cleaned_data["weights"])


class CrossEvaluationForm(forms.Form):
    models = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, help_text="Judge models that also wrote responses.")
    base_url = forms.CharField(max_length=500)
    api_key_env = forms.CharField(max_length=100, required=False, label="API key environment variable")
    temperature = forms.FloatField(initial=0.7)
    samples = forms.IntegerField(min_value=1, initial=10)

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        endpoint_help(self.fields)
        models = Response.objects.filter(project=project, author_kind=Response.MODEL).values_list("model", flat=True).distinct()
        self.fields["models"].choices = [(m, m) for m in sorted(set(models))]


class RunStartForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    cases = forms.CharField(required=False, help_text="Case ids (empty: all)")
    models = forms.CharField(required=False, help_text="Source models (empty: all)")
    criteria = forms.CharField(required=False, help_text="Criterion ids (empty: all)")
    budget_usd = forms.DecimalField(required=False, min_value=0, max_digits=12, decimal_places=4, label="Budget (USD)",
                                    help_text="The run pauses when its cost reaches this (empty: no cap).")
    variant = forms.ChoiceField(required=False, label="Rubric", choices=[
        ("", "as written"), ("reversed", "reversed (options and checklists last to first)"),
        ("paraphrased", "paraphrased (the bundle's alternative criterion texts)")],
        help_text="A variant runs as its own judge, NAME~variant, for the robustness table.")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = (Judge.objects.filter(project=project)
                                         .exclude(backend__in=(Judge.PANEL, Judge.CALIBRATED)).order_by("name"))

    def scope(self) -> dict:
        return {k: _ids(self.cleaned_data.get(k) or "") for k in ("cases", "models", "criteria") if self.cleaned_data.get(k)}

