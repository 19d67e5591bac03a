"""``manage.py export_gold --project SLUG --out DIR``: the bundle, gold set and manifest."""
from annotation.models import Project
from evalsite.cli import JsonCommand, fail
from grading.bundles import gold_export


class Command(JsonCommand):
    help = "Export a project's bundle, gold.jsonl, difficulty slices and manifest.json into DIR."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--out", required=True)

    def run(self, **options) -> dict:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            fail(f"unknown project {options['project']!r}")
        result = gold_export(project=project, out_dir=options["out"])
        return {"files": result["files"], "counts": result["counts"]}  # SPEC §5; the manifest has the rest

    def render(self, result: dict) -> str:
        lines = [f"{name}: {result['counts'].get(name, '-')} lines, sha256 {digest}" for name, digest in sorted(result["files"].items())]
        return "\n".join(lines)
