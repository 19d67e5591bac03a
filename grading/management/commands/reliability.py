"""``manage.py reliability --project SLUG --source SOURCE [--level nominal|ordinal|interval]``:
Krippendorff's alpha among the individual raters inside one source (SPEC §5)."""
from grading.reports.cli import ReportCommand
from grading.reports.services import reliability_report


class Command(ReportCommand):
    help = "Krippendorff's alpha among the raters of a cohort, the samples of a judge or the members of a panel."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True)
        parser.add_argument("--level", default="nominal", choices=["nominal", "ordinal", "interval"])

    def run(self, **options) -> dict:
        return reliability_report(project=options["project"], source=options["source"], level=options["level"], ci=options["ci"])
