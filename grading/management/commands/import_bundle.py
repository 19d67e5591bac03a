"""``manage.py import_bundle PATH [--format NAME] [--project SLUG] [--judge NAME] [--completions FILE]
[--grades FILE] [--mapping FILE] [--update-settings]``: import a file in one of the declared formats
(``grading.formats``; recognized from the file when not named) into a project, all or nothing
(SPEC §4, §5); a format says which of the further options it reads and refuses the others. An
evalsite bundle is a directory or .zip; over an existing project its settings are only compared,
and those that differ are reported, unless ``--update-settings`` asks for them to be applied
(recorded in the project's audit trail)."""
from pathlib import Path

from evalsite.cli import JsonCommand
from grading.bundles import BundleError
from grading.formats.registry import ImportRequest, format_import, format_names


class Command(JsonCommand):
    help = "Import a file in a declared format (an evalsite bundle: a directory or .zip). All or nothing."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("path")
        parser.add_argument("--format", choices=format_names(reading=True), default=None,
                            help="the file's format (recognized from the file when left out)")
        parser.add_argument("--project", default=None,
                            help="the project the data goes into (a file that names another project is refused)")
        parser.add_argument("--judge", default=None, help="the judge that graded results are imported as (HealthBench --grades)")
        for name, what in (("completions", "the responses to grade (HealthBench: prompt_id, model, completion)"),
                           ("grades", "graded results imported as --judge's judgments"),
                           ("mapping", "a JSON file saying how the file maps onto the project (Label Studio: the fields "
                                       "of prompt and response; Autorubric: names and project settings)")):
            parser.add_argument(f"--{name}", default=None, help=what)
        parser.add_argument(
            "--update-settings", action="store_true",
            help="apply project.json's settings to an existing project, unblinding included (recorded in its history)",
        )

    def run(self, **options) -> dict:
        files = {name: Path(options[name]) for name in ("completions", "grades", "mapping") if options[name]}
        request = ImportRequest(path=Path(options["path"]), project=options["project"],
                                update_settings=options["update_settings"], judge=options["judge"], files=files)
        try:
            return format_import(request, name=options["format"])
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
