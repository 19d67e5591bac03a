"""``manage.py route_labels --project SLUG --cohort NAME --budget N [--judges A,B] [--seed S]``: raise the
cohort's routing budget to N responses, draw the new ones (favouring those the judges are unsure about)
and assign them to the cohort's annotators (``grading.routing.services.routing_extend``)."""
from django.core.exceptions import ValidationError

from annotation.models import Cohort
from evalsite.cli import JsonCommand
from grading.routing.services import routing_extend
from grading.sources import project_get


class Command(JsonCommand):
    help = "Route a cohort's next labels to the responses the judges are unsure about, and assign them."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--cohort", required=True, help="the cohort's name")
        parser.add_argument("--budget", required=True, type=int, help="responses to label in all (it only grows)")
        parser.add_argument("--judges", default="", help="judges whose uncertainty steers the draw, comma-separated "
                                                         "(first draw only; default: every judge of the project)")
        parser.add_argument("--seed", type=int, default=None, help="seed of the draw (first draw only; default 0)")

    def run(self, **options) -> dict:
        project = project_get(slug=options["project"])
        cohort = Cohort.objects.filter(project=project, name=options["cohort"]).first()
        if cohort is None:
            raise LookupError(f"no cohort {options['cohort']!r} in project {project.slug!r}")
        judges = [name.strip() for name in options["judges"].split(",") if name.strip()] or None
        try:
            done = routing_extend(project=project, cohort=cohort, budget=options["budget"], by=None, judges=judges,
                                  seed=options["seed"])
        except ValidationError as exc:
            raise ValueError("; ".join(exc.messages)) from exc
        return {"cohort": cohort.name, "budget": done.design.budget, "round": done.design.rounds,
                "judges": done.design.judges, "chosen_now": done.chosen_now, "chosen": done.chosen,
                "responses": done.population, "assignments": done.assignments}

    def render(self, result: dict) -> str:
        return (f"cohort {result['cohort']}: budget {result['budget']} (round {result['round']}), {result['chosen_now']} "
                f"responses drawn now, {result['chosen']} of {result['responses']} in all, "
                f"{result['assignments']} assignments made")
