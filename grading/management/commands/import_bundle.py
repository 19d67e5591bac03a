"""``manage.py import_bundle PATH``: import a bundle directory or .zip (SPEC §4, §5)."""
from evalsite.cli import JsonCommand
from grading.bundles import BundleError, bundle_import


class Command(JsonCommand):
    help = "Import a bundle (directory or .zip). All or nothing; re-importing changes nothing."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("path")

    def run(self, **options) -> dict:
        try:
            return bundle_import(path=options["path"]).as_dict()
        except BundleError as exc:
            raise ValueError(f"import failed, nothing was written: {exc}") from exc

    def render(self, result: dict) -> str:
        counts = ", ".join(f"{result[k]} {k}" for k in ("cases", "criteria", "responses", "labels", "judgments"))
        return f"Imported into {result['project']}: {counts} written."
