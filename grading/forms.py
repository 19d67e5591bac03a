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



def column_kinds_from(post, tables) -> dict:
    """The kinds the upload's column step posts (``i.table`` for the file's table ``i``), as a column
    mapping; a kind its menu does not offer is left out (the table's columns then say what it is)."""
    mapping: dict = {"tables": {}}
    for i, table in enumerate(tables):
        kind = post.get(f"{i}.table", "")
        mapping["tables"][table.name] = {"table": kind} if kind in {k for k, _ in table.kinds} else {}
    return mapping


def column_mapping_from(post, tables) -> dict:
    """The column mapping the upload's column step posts (``grading/job_columns.html``), given the
    file's ``tables`` read with the posted kinds (``column_kinds_from``): each table's kind and, when
    the menus shown were that kind's (``i.shown``), each field's column (``i.FIELD``; empty: none). A
    column the menus do not offer is left out (the field then gets the column named like it)."""
    mapping = column_kinds_from(post, tables)
    for i, table in enumerate(tables):
        entry = mapping["tables"][table.name]
        if table.kind and entry.get("table") == table.kind == post.get(f"{i}.shown"):
            columns = {}
            for field in table.fields:
                value = post.get(f"{i}.{field.name}")
                if value == "":
                    columns[field.name] = None
                elif value in table.headers:
                    columns[field.name] = value
            entry["columns"] = columns
    return mapping


class NewProjectUploadForm(BundleUploadForm):
    """The upload of the home page's "new project": a bundle names its project; a file that names
    none (HealthBench, Label Studio, ...) goes into the project named here, or else into a new
    project named after the file."""
    project = forms.SlugField(
        required=False, max_length=100, label="Project",
        help_text="For a file that names no project (HealthBench, Label Studio): the slug of the project it goes into "
                  "(made when new). Empty: a new project named after the file.",
    )
