"""``manage.py export_bundle --project SLUG --out DIR [--format NAME]``: write a project in one of
the declared formats that export (``grading.formats``; default evalsite's bundle with its gold
files and manifest) → ``{"files": {name: sha256}, "counts": {...}}`` (SPEC §5)."""
from annotation.models import Project
from evalsite.cli import JsonCommand, fail
from grading.formats.registry import format_export, format_names


class Command(JsonCommand):
    help = "Export a project into DIR in a declared format (default: the evalsite bundle, gold and manifest)."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--out", required=True)
        self.add_format_argument(parser)

    def add_format_argument(self, parser):
        parser.add_argument("--format", choices=format_names(writing=True), default="evalsite")

    def run(self, **options) -> dict:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            fail(f"unknown project {options['project']!r}")
        return format_export(project=project, out_dir=options["out"], name=options["format"])

    def render(self, result: dict) -> str:
        return "\n".join(f"{name}: {result['counts'].get(name, '-')} lines, sha256 {digest}"
                         for name, digest in sorted(result["files"].items()))
