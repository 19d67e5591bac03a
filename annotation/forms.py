"""Forms that turn request input into clean values (or a clear 400) before a service sees it."""
import json

from django import forms

from evalsite.converters import ID_MAX

from .assignments import METHODS, ROUND_ROBIN
from .labels import BATCH_MAX, MAX_RATIONALE
from .vocabulary import VERDICTS, DecisionError, choice_parse


class LabelSaveForm(forms.Form):
    """One save from a criterion row: a decision and/or the rationale and/or one evidence change."""

    revision = forms.IntegerField(min_value=0, required=False)
    verdict = forms.ChoiceField(choices=[(v, v) for v in VERDICTS], required=False)
    option = forms.CharField(max_length=200, required=False)
    rationale = forms.CharField(max_length=MAX_RATIONALE, required=False, strip=False)
    evidence_add = forms.CharField(max_length=2000, required=False, strip=False)
    evidence_remove = forms.CharField(max_length=2000, required=False, strip=False)

    def service_kwargs(self) -> dict:
        data = self.cleaned_data
        return {
            "verdict": data["verdict"] or None,
            "option_label": data["option"] or None,
            # A row that posts no rationale field leaves the stored one alone.
            "rationale": data["rationale"] if "rationale" in self.data else None,
            "evidence_add": data["evidence_add"] or None,
            "evidence_remove": data["evidence_remove"] or None,
            "expected_revision": data["revision"],
        }


def label_batch_parse(raw: str) -> list[tuple[int, dict]]:
    """The labeling page's batch of piled-up clicks (a JSON list of criterion rows' fields, each
    with its ``criterion``) as (criterion id, ``label_record`` keyword arguments) pairs, each
    checked by ``LabelSaveForm``; raises ``forms.ValidationError`` naming what is wrong."""
    try:
        items = json.loads(raw or "")
    except (ValueError, RecursionError):
        raise forms.ValidationError("the batch is not JSON (or nested too deeply)") from None
    if not isinstance(items, list) or not items or len(items) > BATCH_MAX:
        raise forms.ValidationError(f"the batch must be a list of 1 to {BATCH_MAX} saves")
    parsed = []
    for index, item in enumerate(items):
        criterion = item.get("criterion") if isinstance(item, dict) else None
        if not isinstance(criterion, int) or isinstance(criterion, bool):
            raise forms.ValidationError(f"save {index + 1}: no criterion")
        form = LabelSaveForm({k: v for k, v in item.items() if k != "criterion"})
        if not form.is_valid():
            problems = "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
            raise forms.ValidationError(f"save {index + 1} (criterion {criterion}): {problems}")
        parsed.append((criterion, form.service_kwargs()))
    return parsed


class ReviewForm(forms.Form):
    """A checker's decision on one criterion: ``action=confirm`` takes the annotators' shared
    decision; otherwise ``choice`` ("verdict:met" or "option:<label>") is the cohort's decision."""

    action = forms.ChoiceField(choices=[("confirm", "confirm"), ("choose", "choose")], required=False)
    choice = forms.CharField(max_length=220, required=False, help_text='"verdict:met" or "option:<label>"')
    note = forms.CharField(max_length=MAX_RATIONALE, required=False)
    revision = forms.IntegerField(min_value=0, max_value=2**31 - 1, required=False,
                                  help_text="The cohort label's revision the checker saw (0: none yet).")

    def clean_choice(self) -> dict:
        """One button group for every decision, so a checker can never send two at once."""
        try:
            return choice_parse(self.cleaned_data["choice"])
        except DecisionError as exc:
            raise forms.ValidationError(exc.message) from None

    def clean(self):
        data = super().clean()
        if data.get("action") != "confirm" and "choice" in data and not data["choice"]:
            self.add_error("choice", "choose a decision, or confirm the shared one")
        return data

    def service_kwargs(self) -> dict:
        data = self.cleaned_data
        decision = {} if data.get("action") == "confirm" else data["choice"]
        return {**decision, "note": data["note"], "expected_revision": data.get("revision")}


class AssignForm(forms.Form):
    cohort = forms.TypedChoiceField(coerce=int, choices=[])
    overlap = forms.IntegerField(min_value=1, max_value=50)
    method = forms.ChoiceField(choices=METHODS, initial=ROUND_ROBIN)
    seed = forms.IntegerField(required=False, help_text="Only for random assignment; the same seed gives the same draw.")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["cohort"].choices = [(c.pk, c.name) for c in project.cohorts.all()]
        self.fields["overlap"].initial = project.overlap


class ReassignForm(forms.Form):
    username = forms.CharField(max_length=150)


class TimeReportForm(forms.Form):
    seconds = forms.FloatField(min_value=0, max_value=3600)


class RoleForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=[(r, r) for r in ("manager", "adjudicator", "viewer", "none")])


class GuidanceForm(forms.Form):
    """One criterion's guidance from the guidance page. The criterion is the page's hidden id: one
    that is not a whole number in the id range is a bad request, never a database error."""
    criterion = forms.IntegerField(min_value=1, max_value=ID_MAX)
    guidance = forms.CharField(required=False, strip=False)  # its length and Markdown: criterion_guidance_update

    def errors_text(self) -> str:
        return "; ".join(f"{name}: {' '.join(errors)}" for name, errors in self.errors.items())
