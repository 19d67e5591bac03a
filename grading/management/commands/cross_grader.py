"""``manage.py cross_grader --project SLUG --a SOURCE --b SOURCE``: cross-grader robustness of any
two sources, judges included (SPEC §3, §5; issue 14): Spearman ρ, Kendall τ, mean absolute
difference in points and top-3 / top-5 overlap of the per-model positive rates."""
from grading.reports.cli import ReportCommand
from grading.reports.services import cross_grader_report


class Command(ReportCommand):
    help = "Do two sources rank the models alike? Per-model positive rates compared."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--a", required=True)
        parser.add_argument("--b", required=True)

    def run(self, **options) -> dict:
        result = cross_grader_report(project=options["project"], a=options["a"], b=options["b"], ci=options["ci"])
        keys = ["a", "b", "n_models", "spearman_rho", "kendall_tau", "mean_abs_diff_pp", "top3_overlap", "top5_overlap",
                "rates", "n_excluded_cases", "n_draft_labels"]
        keys += ["mean_abs_diff_pp_ci", "spearman_rho_ci", "kendall_tau_ci"] if options["ci"] else []
        return {key: result[key] for key in keys}
