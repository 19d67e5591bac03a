"""``manage.py qc_screen --project SLUG --source SOURCE --models A,B,C [--threshold 50]``: flag the
cases whose mean rubric accuracy over the screening models' responses is at or above the threshold
(percent) for exclusion (SPEC §5; ``grading.qc.services.qc_screen``)."""
from evalsite.cli import JsonCommand
from grading.qc.services import qc_screen
from grading.sources import project_get

KEYS = ("threshold", "n_cases", "flagged", "by_case")


class Command(JsonCommand):
    help = "Screen a project's cases: flag those the screening responses already cover well."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True, help="cohort:NAME, judge:NAME or gold")
        parser.add_argument("--models", required=True, help="screening models, comma-separated")
        parser.add_argument("--threshold", type=float, default=50.0, help="percent (default 50)")

    def run(self, **options) -> dict:
        project = project_get(slug=options["project"])
        result = qc_screen(project=project, source=options["source"], models=options["models"],
                           threshold_pct=options["threshold"])
        return {key: result[key] for key in KEYS}

    def render(self, result: dict) -> str:
        lines = [f"{result['n_cases']} cases screened; {len(result['flagged'])} at or above {result['threshold']:g} %:"]
        lines += [f"  {case}  {pct:.1f} %" for case, pct in result["by_case"].items() if case in set(result["flagged"])]
        return "\n".join(lines)
