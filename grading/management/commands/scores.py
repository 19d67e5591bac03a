"""``manage.py scores --project SLUG --source SOURCE [--cannot-assess skip|zero|partial|fail]``:
the weighted score of every response and the mean per model (SPEC §3, §5)."""
from grading.reports.cli import ReportCommand
from grading.reports.services import scores_report


class Command(ReportCommand):
    help = "Weighted rubric score per response under one source."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True)
        parser.add_argument("--cannot-assess", default="skip", help="skip | zero | partial | fail (default skip)")
        parser.add_argument("--length-penalty", default=None, metavar="FREE,CAP,PENALTY[,EXPONENT]",
                            help="Autorubric's length penalty: 0 up to FREE, PENALTY at CAP and beyond (exponent 1)")
        parser.add_argument("--length-unit", default="words", choices=["words", "characters"])

    def run(self, **options) -> dict:
        result = scores_report(project=options["project"], source=options["source"], strategy=options["cannot_assess"],
                               ci=options["ci"], length_penalty=options["length_penalty"], length_unit=options["length_unit"])
        return {key: result[key] for key in (
            "responses", "by_model", "n_excluded_cases", "n_draft_labels", "length_penalty") if key in result}
