"""Forms of the grading pages that are not a judge's or an adjudication's."""
from django import forms


class BundleUploadForm(forms.Form):
    bundle = forms.FileField(help_text="A .zip of the bundle's folder (project.json and the .jsonl files).")
    update_settings = forms.BooleanField(
        required=False, label="Also apply the bundle's project settings",
        help_text="Without this, an existing project's settings stay as they are (making a blind project not blind "
                  "only happens when this is ticked, and is recorded).",
    )
