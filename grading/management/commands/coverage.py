"""``manage.py coverage --project SLUG --source SOURCE [--k K] [--sensitivity 7,8,12,15]``: rubric
accuracy, Pass@k and CACS@k (percent) overall, per model and per stratum, and the threshold
sensitivity of the model ranking (SPEC §5; issue 14)."""
from grading.reports.cli import ReportCommand
from grading.reports.services import coverage_report

KEYS = ("k", "overall", "by_model", "by_stratum", "sensitivity", "n_excluded_cases", "n_draft_labels")


class Command(ReportCommand):
    help = "Coverage of the rubric by one source: rubric accuracy, Pass@k and CACS@k."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True)
        parser.add_argument("--k", type=int, default=None, help="threshold (default: the project's coverage k)")
        parser.add_argument("--sensitivity", default=None,
                            help="alternative thresholds k' compared with CACS@k, with rubric accuracy and Pass@k "
                                 "(default 7,8,12,15)")

    def run(self, **options) -> dict:
        result = coverage_report(project=options["project"], source=options["source"], k=options["k"],
                                 sensitivity=options["sensitivity"], ci=options["ci"])
        return {key: result[key] for key in KEYS}
