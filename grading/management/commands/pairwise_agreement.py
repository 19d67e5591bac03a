"""``manage.py pairwise_agreement --project SLUG --source cohort:NAME [--grader SOURCE] [--by tag]
[--min-n 50]``: HealthBench's pairwise physician protocol (SPEC §3, §5; issue 14): each annotator's
MF1 against every other annotator of the same items, the n-weighted mean, and the grader's MF1
against every individual label with its percentile among the annotators."""
from grading.reports.cli import ReportCommand
from grading.reports.services import pairwise_report


class Command(ReportCommand):
    help = "Each annotator against every other (pairs pooled), and a grader's percentile among them."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True, help="cohort:NAME")
        parser.add_argument("--grader", default=None, help="a source placed among the annotators, e.g. judge:NAME")
        parser.add_argument("--by", choices=["tag"], default=None)
        parser.add_argument("--min-n", type=int, default=50, help="annotators with this many pairs or fewer are left out")

    def run(self, **options) -> dict:
        result = pairwise_report(project=options["project"], source=options["source"], grader=options["grader"],
                                 by=options["by"], min_n=options["min_n"], ci=options["ci"])
        keys = ["min_n", "annotators", "weighted_mean_mf1", "source", "n_excluded_cases", "n_draft_labels"]
        keys += ["weighted_mean_mf1_ci"] if options["ci"] else []
        keys += ["grader"] if options["grader"] else []
        keys += ["by_tag", "by_theme"] if options["by"] else []
        return {key: result[key] for key in keys}
