"""``manage.py calibrate --project SLUG --source judge:NAME --reference SOURCE [--criterion ID]
[--calibration-size N] [--seed S]``: RULERS score calibration of a judge (SPEC §3, §5; issue 13):
fitted on a seeded split, applied to the other items and stored as ``judge:NAME@calibrated``."""
from grading.calibration_write import judge_calibrate
from grading.reports.cli import ReportCommand

KEYS = ("n_calibration", "n_holdout", "qwk_before", "qwk_after", "method", "source", "reference", "criterion", "seed",
        "levels", "distributions", "n_excluded_cases", "n_draft_labels")


class Command(ReportCommand):
    help = "Calibrate a judge's scores to a human reference and store them as judge:NAME@calibrated."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", required=True, help="judge:NAME")
        parser.add_argument("--reference", required=True, help="the human source, e.g. cohort:NAME")
        parser.add_argument("--criterion", default=None, help="an ordinal criterion or trait id (default: every trait)")
        parser.add_argument("--calibration-size", type=int, default=None,
                            help="items in the calibration split (default 200, or half when fewer than 400)")
        parser.add_argument("--seed", type=int, default=0)

    def run(self, **options) -> dict:
        result = judge_calibrate(project=options["project"], source=options["source"], reference=options["reference"],
                                 criterion=options["criterion"], calibration_size=options["calibration_size"],
                                 seed=options["seed"], ci=options["ci"])
        return {key: result[key] for key in KEYS + (("qwk_before_ci", "qwk_after_ci") if options["ci"] else ())}
