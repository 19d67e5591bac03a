"""``manage.py bias_matrix --project SLUG --condition attributed|anonymized [--reference SOURCE]
[--criterion ID|all] [--scale native|unit] [--human mean|decision]``: consensus-deviation bias of
the judges of one condition in the rubric's own scale (or on [0, 1]), every cell with its Monte
Carlo μ ± σ, and, with a reference, the human-LLM bias matrix (SPEC §3, §5; issue 13)."""
from grading.reports.cli import ReportCommand
from grading.reports.services import bias_report

KEYS = ("judges", "targets", "scores", "bias", "self_bias", "n_excluded_cases", "n_draft_labels",
        "scale", "range", "criterion", "n_criteria",
        "counts", "mu", "sd", "samples", "n_judges", "warnings")
REFERENCE_KEYS = ("human_bias", "mean_human_bias", "human_scores", "human", "reference")


class Command(ReportCommand):
    help = "Consensus-deviation and human-LLM bias matrices of the judges of one condition."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--condition", required=True, choices=["attributed", "anonymized"])
        parser.add_argument("--reference", default=None, help="human source for the human-LLM matrix, e.g. cohort:NAME")
        parser.add_argument("--criterion", default="all",
                            help="a criterion id, or all (default): the criteria sharing one scale, pooled")
        parser.add_argument("--scale", default="native", choices=["native", "unit"],
                            help="native (default): the rubric's own points; unit: every criterion rescaled to [0, 1]")
        parser.add_argument("--human", default="mean", choices=["mean", "decision"],
                            help="a cohort reference's human score: the mean of its experts' values (default) or its decision")

    def run(self, **options) -> dict:
        result = bias_report(project=options["project"], condition=options["condition"], reference=options["reference"],
                             scale=options["scale"], criterion=options["criterion"], human=options["human"], ci=options["ci"])
        keys = KEYS + (REFERENCE_KEYS if options["reference"] else ()) + tuple(
            k for k in ("per_criterion", "panel", "scores_ci") if k in result)
        return {key: result[key] for key in keys}
