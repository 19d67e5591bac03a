"""``manage.py export_gold --project SLUG --out DIR``: the bundle, gold set and manifest, i.e.
``export_bundle --format evalsite`` (SPEC §5)."""
from .export_bundle import Command as ExportBundle


class Command(ExportBundle):
    help = "Export a project's bundle, gold.jsonl, difficulty slices and manifest.json into DIR."

    def add_format_argument(self, parser):
        parser.set_defaults(format="evalsite")  # always the evalsite bundle
