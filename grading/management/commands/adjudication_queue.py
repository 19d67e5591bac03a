"""``manage.py adjudication_queue --project SLUG [--threshold 0.6] [--all] [--model M] ...``: the
responses an adjudicator should look at, in queue order (SPEC §5): lowest case-level MF1 between
the first two cohorts first, then every other response with a disputed decision. Only items
with a criterion still waiting for an adjudicator, unless ``--all``."""
from evalsite.cli import JsonCommand
from grading.adjudication.queue import adjudication_queue, queue_json
from grading.sources import project_get


class Command(JsonCommand):
    help = "The adjudication queue of a project, in order."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--threshold", type=float, help="low-agreement threshold (default: the project's)")
        parser.add_argument("--all", action="store_true", help="also the items whose disputes are all adjudicated")
        for name in ("model", "difficulty", "register", "theme", "specialty", "tag"):
            parser.add_argument(f"--{name}", help=f"only items of this {name}")

    def run(self, **options) -> dict:
        project = project_get(slug=options["project"])
        filters = {name: options.get(name) for name in ("model", "difficulty", "register", "theme", "specialty", "tag")}
        filters["status"] = "all" if options["all"] else "open"
        return queue_json(adjudication_queue(project=project, threshold=options["threshold"], filters=filters))
