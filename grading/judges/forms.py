"""Forms of the judge pages and admin: a judge (its ``settings`` JSON edited through the fields
its backend declares), a panel, a cross-evaluation, and starting a run. Forms turn bad input into
errors next to the field; the services check the same rules again inside their transaction."""
from django import forms
from django.core.exceptions import ValidationError

from annotation.models import Response

from ..models import Judge, JudgeRun
from .backends import backend_for, backend_get, backend_names, backends
from .backends.panel import weights_parse
from .endpoints import endpoints_described, judge_endpoints
from .services import judge_validate
from .settings import VOTE_RULES, SettingsError


def endpoint_help(fields) -> None:
    """Say under the base URL and key fields what this deployment allows: its endpoints, each with
    the one key variable sent to it (EVALSITE_JUDGE_ENDPOINTS)."""
    listed = judge_endpoints()
    fields["base_url"].help_text = ("Must start with one of: " + endpoints_described() if listed else
                                    "No endpoint is allowed yet (EVALSITE_JUDGE_ENDPOINTS).")
    fields["api_key_env"].help_text = ("The name (never the key) of the variable paired with the base URL's endpoint "
                                       "above; empty for none." if listed else
                                       "No key variable is allowed yet (EVALSITE_JUDGE_ENDPOINTS); leave empty.")


def _ids(text: str) -> list[str]:
    return [t for t in text.replace(",", " ").split() if t]


def _settings_fields(offered) -> dict[str, forms.Field]:
    """The settings form fields of the ``offered`` backends, each name once (a field two backends
    share, such as ``min_evidence``, is declared alike by both)."""
    fields: dict[str, forms.Field] = {}
    for backend in offered:
        for name, field in backend.settings_fields().items():
            fields.setdefault(name, field)
    return fields


class _JudgeForm(forms.ModelForm):
    """A judge: its columns, and its ``settings`` JSON through the form fields its backend declares
    (``JudgeBackend.settings_fields``); the backend's name is parsed into its registered backend
    here. On the judges page (``project`` given) the backends the judge form configures are
    offered (panels have their own form there); in the admin, every backend."""

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
        offered = [b for b in backends() if b.page_form or project is None]
        if project is not None:
            del self.fields["project"]
        self.fields["backend"] = forms.ChoiceField(choices=[(b.name, b.label) for b in offered],
                                                   initial=self.fields["backend"].initial)
        wanted = _settings_fields(offered)
        for name in [n for n in self.fields if n in DECLARED_SETTINGS and n not in wanted]:
            del self.fields[name]
        for name, field in wanted.items():
            self.fields.setdefault(name, field)  # a backend registered after this module was loaded
        if self.instance.pk:
            try:
                own = backend_for(self.instance)
                initial = own.settings_initial(own.settings_parse(self.instance.settings))
            except (LookupError, SettingsError):
                initial = {}
            for name, value in initial.items():
                self.initial.setdefault(name, value)

    def clean(self):
        data = super().clean()
        settings = dict(self.instance.settings or {})
        if data.get("backend"):
            try:
                backend_get(data["backend"]).settings_write(data, settings)
            except ValidationError as exc:
                self._add_errors(exc)
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
                self._add_errors(exc)
        return data

    def _add_errors(self, exc: ValidationError) -> None:
        if not hasattr(exc, "error_dict"):
            self.add_error(None, exc)
            return
        for field_name, messages in exc.message_dict.items():
            self.add_error(field_name if field_name in self.fields else None, messages)


# The settings fields of the backends registered when this module loads are declared on the class
# (the admin's fieldsets name them); a backend registered later (a test's) gets its fields added to
# each form in ``__init__``.
DECLARED_SETTINGS = _settings_fields(backends())
JudgeForm = type("JudgeForm", (_JudgeForm,), {"__module__": __name__, "__doc__": _JudgeForm.__doc__,
                                              **_settings_fields(backends())})


class PanelForm(forms.Form):
    name = forms.CharField(max_length=100)
    members = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    vote = forms.ChoiceField(choices=[(v, v) for v in VOTE_RULES])
    weights = forms.CharField(required=False, help_text="For a weighted vote: name=weight, separated by commas.")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        names = (Judge.objects.filter(project=project).exclude(backend__in=backend_names(votes_over_members=True))
                 .values_list("name", flat=True))
        self.fields["members"].choices = [(n, n) for n in names]

    def clean_weights(self) -> dict[str, float]:
        return weights_parse(self.cleaned_data["weights"])


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


def budget_field() -> forms.DecimalField:
    """A run's budget as the forms take it: dollars that fit ``JudgeRun.budget_usd`` (12 digits, 4
    after the point), so 1e400 or 2⁶³ is an error next to the field, not a database error."""
    column = JudgeRun._meta.get_field("budget_usd")
    return forms.DecimalField(required=False, min_value=0, max_digits=column.max_digits, decimal_places=column.decimal_places,
                              label="Budget (USD)", help_text="The run pauses when its cost reaches this (empty: no cap).")


class RunStartForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    cases = forms.CharField(required=False, help_text="Case ids (empty: all)")
    models = forms.CharField(required=False, help_text="Source models (empty: all)")
    criteria = forms.CharField(required=False, help_text="Criterion ids (empty: all)")
    budget_usd = budget_field()
    variant = forms.ChoiceField(required=False, label="Rubric", choices=[
        ("", "as written"), ("reversed", "reversed (options and checklists last to first)"),
        ("paraphrased", "paraphrased (the bundle's alternative criterion texts)")],
        help_text="A variant runs as its own judge, NAME~variant, for the robustness table.")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = (Judge.objects.filter(project=project)
                                         .exclude(backend__in=backend_names(derived=True)).order_by("name"))

    def scope(self) -> dict:
        return {k: _ids(self.cleaned_data.get(k) or "") for k in ("cases", "models", "criteria") if self.cleaned_data.get(k)}



class RunResumeForm(forms.Form):
    """Resuming a run from the runs table: optionally with a new budget."""
    budget_usd = budget_field()

    def errors_text(self) -> str:
        return "; ".join(f"{self.fields[name].label if name in self.fields else name}: {' '.join(errors)}"
                         for name, errors in self.errors.items())
