"""The adjudication form: one criterion's final decision, confidence, category and note."""
from django import forms

from annotation.decisions import VERDICTS

from ..models import Adjudication


class AdjudicationForm(forms.Form):
    """``choice`` ("verdict:met", "option:<label>" or "value:7.5"); any of confidence, category and
    note may come alone to change just that; ``revision`` is the one the page showed."""

    choice = forms.CharField(max_length=220, required=False)
    confidence = forms.ChoiceField(choices=[("", "")] + Adjudication.CONFIDENCES, required=False)
    category = forms.ChoiceField(choices=[("", "")] + Adjudication.CATEGORIES, required=False)
    note = forms.CharField(max_length=5000, required=False)
    revision = forms.IntegerField(min_value=0, required=False)

    def clean_choice(self) -> dict:
        raw = self.cleaned_data["choice"]
        if not raw:
            return {}
        kind, _, value = raw.partition(":")
        if kind == "verdict" and value in VERDICTS:
            return {"verdict": value}
        if kind == "option" and value:
            return {"option_label": value}
        if kind == "value":
            try:
                return {"value": float(value)}
            except ValueError:
                pass
        raise forms.ValidationError("choose one of the offered decisions")

    def service_kwargs(self) -> dict:
        data, posted = self.cleaned_data, self.data
        return {
            **data["choice"],
            # A field the row did not post is left as it is.
            "confidence": data["confidence"] if "confidence" in posted else None,
            "category": data["category"] if "category" in posted else None,
            "note": data["note"] if "note" in posted else None,
            "expected_revision": data["revision"],
        }
