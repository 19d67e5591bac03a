"""``manage.py trait_scores --project SLUG --source SOURCE [--reference SOURCE]``: the trait scores
of RULERS compiled rubrics per response under one source and, with a reference, the
quadratic-weighted kappa per trait (SPEC §3 "Trait score", §5; issue 13)."""
from grading.reports.cli import ReportCommand
from grading.reports.services import trait_scores_report


class Command(ReportCommand):
    help = "Trait scores (RULERS compiled rubrics) per response, and QWK per trait against a reference."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True, help="cohort:NAME, judge:NAME or gold")
        parser.add_argument("--reference", default=None, help="a second source: adds QWK per trait")

    def run(self, **options) -> dict:
        result = trait_scores_report(project=options["project"], source=options["source"], reference=options["reference"],
                                     ci=options["ci"])
        keys = ("responses", "traits", "source", "n_excluded_cases", "n_draft_labels")
        keys += (("qwk", "reference") if options["reference"] else ())
        keys += ("qwk_ci",) if options["reference"] and options["ci"] else ()
        return {key: result[key] for key in keys}
