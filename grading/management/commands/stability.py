"""``manage.py stability --project SLUG --judge NAME``: Monte Carlo stability of one judge over its
samples (SPEC §3, §5; issue 13): per (target, criterion) μ, σ and the samples behind them, and per
criterion kind the mean σ of its items."""
from grading.reports.cli import ReportCommand
from grading.reports.services import stability_report


class Command(ReportCommand):
    help = "Monte Carlo stability of one judge: μ ± σ per (target, criterion), mean σ per criterion kind."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--judge", required=True, help="the judge's name (not a panel)")

    def run(self, **options) -> dict:
        return stability_report(project=options["project"], judge=options["judge"], ci=options["ci"])
