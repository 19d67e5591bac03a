"""``manage.py verbosity --project SLUG --source SOURCE [--k K]``: does length buy score? Pooled
Pearson and Spearman of response length with the CACS@k contribution and with rubric accuracy,
and the partial correlation controlling for model and case (SPEC §3, §5; issue 14)."""
from grading.reports.cli import ReportCommand
from grading.reports.services import verbosity_report


class Command(ReportCommand):
    help = "Length against CACS@k contribution and rubric accuracy: Pearson, Spearman, partial (model, case)."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True)
        parser.add_argument("--k", type=int, default=None, help="threshold (default: the project's coverage k)")

    def run(self, **options) -> dict:
        result = verbosity_report(project=options["project"], source=options["source"], k=options["k"], ci=options["ci"])
        return {key: result[key] for key in ("source", "k", "n", "cacs", "rubric_accuracy", "n_excluded_cases", "n_draft_labels")}
