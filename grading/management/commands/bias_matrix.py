"""``manage.py bias_matrix --project SLUG --condition attributed|anonymized [--reference SOURCE]``:
consensus-deviation bias of the judges of one condition and, with a reference, the
human-LLM bias matrix (SPEC §3, §5)."""
from evalsite.cli import JsonCommand
from grading.reports.services import bias_report

KEYS = ("judges", "targets", "scores", "bias", "self_bias", "n_excluded_cases")


class Command(JsonCommand):
    help = "Consensus-deviation and human-LLM bias matrices of the judges of one condition."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--condition", required=True, choices=["attributed", "anonymized"])
        parser.add_argument("--reference", default=None, help="human source for the human-LLM matrix, e.g. cohort:NAME")

    def run(self, **options) -> dict:
        result = bias_report(project=options["project"], condition=options["condition"], reference=options["reference"])
        keys = KEYS + (("human_bias", "mean_human_bias") if options["reference"] else ())
        return {key: result[key] for key in keys}
