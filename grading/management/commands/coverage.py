"""``manage.py coverage --project SLUG --source SOURCE [--k K]``: rubric accuracy, Pass@k
and CACS@k (percent) overall, per model and per stratum (SPEC §5)."""
from evalsite.cli import JsonCommand
from grading.reports.services import coverage_report

KEYS = ("k", "overall", "by_model", "by_stratum", "n_excluded_cases")


class Command(JsonCommand):
    help = "Coverage of the rubric by one source: rubric accuracy, Pass@k and CACS@k."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True)
        parser.add_argument("--k", type=int, default=None, help="threshold (default: the project's coverage k)")

    def run(self, **options) -> dict:
        result = coverage_report(project=options["project"], source=options["source"], k=options["k"])
        return {key: result[key] for key in KEYS}
