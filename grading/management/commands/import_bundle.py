"""``manage.py import_bundle PATH [--update-settings]``: import a bundle directory or .zip (SPEC §4,
§5). Over an existing project the bundle's settings are only compared, and those that differ are
reported, unless ``--update-settings`` asks for them to be applied (recorded in the project's
audit trail)."""
from evalsite.cli import JsonCommand
from grading.bundles import BundleError, bundle_import


class Command(JsonCommand):
    help = "Import a bundle (directory or .zip). All or nothing; re-importing changes nothing."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("path")
        parser.add_argument(
            "--update-settings", action="store_true",
            help="apply project.json's settings to an existing project, unblinding included (recorded in its history)",
        )

    def run(self, **options) -> dict:
        try:
            return bundle_import(path=options["path"], update_settings=options["update_settings"]).as_dict()
        except BundleError as exc:
            raise ValueError(f"import failed, nothing was written: {exc}") from exc

    def render(self, result: dict) -> str:
        counts = ", ".join(f"{result[k]} {k}" for k in ("cases", "criteria", "responses", "labels", "judgments"))
        lines = [f"Imported into {result['project']}: {counts} written."]
        changed = result.get("settings_changed") or {}
        if changed:
            lines.append("Settings changed: " + "; ".join(f"{k} {old!r} -> {new!r}" for k, (old, new) in changed.items()))
        ignored = result.get("settings_ignored") or {}
        if ignored:
            lines.append(
                "Settings left as they are (--update-settings applies them): "
                + "; ".join(f"{k} {current!r} (bundle: {new!r})" for k, (current, new) in ignored.items())
            )
        return "\n".join(lines)
