"""``manage.py reliability_report --project SLUG --a SOURCE --b SOURCE [--by criterion|tag|model]``:
the reliability report of any two sources, pooled and per group (issue 14, SPEC §5):
``{"pooled": GROUP, "groups": {KEY: GROUP}}``."""
from grading.reports.cli import ReportCommand
from grading.reports.services import reliability_ab_report


class Command(ReportCommand):
    help = "Agreement of two sources per criterion, tag or model: binary and ordinal figures (scikit-learn, scipy)."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--a", required=True, help="reference source, e.g. cohort:NAME")
        parser.add_argument("--b", required=True, help="compared source, e.g. judge:NAME")
        parser.add_argument("--by", choices=["criterion", "tag", "model"], default=None)

    def run(self, **options) -> dict:
        result = reliability_ab_report(project=options["project"], a=options["a"], b=options["b"], by=options["by"], ci=options["ci"])
        return {key: result[key] for key in ("a", "b", "by", "pooled", "groups", "n_excluded_cases", "n_draft_labels")}
