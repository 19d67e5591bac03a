"""``manage.py calibrate_k --project SLUG --source SOURCE``: the coverage threshold k as the
rounded mean hits of the human-authored responses under one source (SPEC §3, §5)."""
from grading.reports.cli import ReportCommand
from grading.reports.services import calibrate_k_report


class Command(ReportCommand):
    help = "Calibrate the coverage threshold k from human-authored responses."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True)

    def run(self, **options) -> dict:
        return calibrate_k_report(project=options["project"], source=options["source"], ci=options["ci"])
