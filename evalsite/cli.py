"""Shared behaviour of evalsite's management commands (SPEC §5): ``--json`` prints exactly
one JSON object on stdout; bad arguments and domain errors exit non-zero with one line on
stderr saying what is wrong.
"""
import json

from django.core.management.base import BaseCommand, CommandError


class JsonCommand(BaseCommand):
    """Subclasses implement ``run(**options) -> dict`` and ``render(result) -> str``."""

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except CommandError:
            raise
        except (ValueError, LookupError) as exc:  # domain errors: one clear line, exit 1
            raise CommandError(str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__) from exc

    def handle(self, *args, **options):
        result = self.run(**options)
        if options["json"]:
            self.stdout.write(json.dumps(result, sort_keys=True, default=str))
        else:
            self.stdout.write(self.render(result))

    def run(self, **options) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def render(self, result: dict) -> str:
        return json.dumps(result, indent=2, sort_keys=True, default=str)


def fail(message: str) -> None:
    """Raise the one-line error every command uses for bad arguments."""
    raise CommandError(message)

