"""Forms of the grading pages that are not a judge's or an adjudication's."""
from django import forms

from .formats.registry import formats


class BundleUploadForm(forms.Form):
    """An upload to import: the file, its format (the declared formats; empty: recognized from the
    file) and, for a bundle over an existing project, whether its settings apply."""
    bundle = forms.FileField(label="File")
    format = forms.ChoiceField(required=False, label="Format")
    update_settings = forms.BooleanField(
        required=False, label="Also apply the bundle's project settings",
        help_text="Without this, an existing project's settings stay as they are (making a blind project not blind "
                  "only happens when this is ticked, and is recorded).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        readable = formats(reading=True)
        self.fields["format"].choices = [("", "recognize from the file"), *((f.name, f.title) for f in readable)]
        self.fields["bundle"].help_text = "Upload " + "; or ".join(f"{f.upload_help} ({f.title})" for f in readable) + "."
