"""``manage.py agreement --project SLUG --a SOURCE --b SOURCE [--cannot-assess STRATEGY]``:
agreement of source B with reference source A (SPEC §5). ``--b`` may name a source of
another project (``other-slug:cohort:NAME``), whose rows are aligned by text."""
from evalsite.cli import JsonCommand
from grading.reports.services import agreement_report


class Command(JsonCommand):
    help = "MF1, kappa, alpha and the case-level MF1 distribution of source B against reference A."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--a", required=True, help="reference source: cohort:NAME, judge:NAME or gold")
        parser.add_argument("--b", required=True, help="compared source; [OTHER-PROJECT:]cohort:NAME, judge:NAME or gold")
        parser.add_argument("--cannot-assess", default="zero", help="skip | zero | partial | fail (default zero)")

    def run(self, **options) -> dict:
        result = agreement_report(
            project=options["project"], a=options["a"], b=options["b"], strategy=options["cannot_assess"]
        )
        return result["summary"]
