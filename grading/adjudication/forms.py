"""The adjudication form: one criterion's final decision, confidence, category and note."""
from django import forms

from annotation.vocabulary import DecisionError, choice_parse

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
        try:
            return choice_parse(self.cleaned_data["choice"], values=True)
        except DecisionError as exc:
            raise forms.ValidationError(exc.message) from None

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
