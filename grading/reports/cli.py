"""The base of the report commands (SPEC §5): ``--models`` and ``--exclude-models`` on every one
(issue 14, point 4), the computation run under that model subset (``subset.model_subset``), and
the result saying which models were asked for and used (``model_subset``); and ``--ci`` on every
one (issue 14, point 5): bootstrap 95% intervals resampling cases, seeded, of every mean it
reports (and of its agreement and correlation figures where they are no mean)."""
from annotation.models import Response
from evalsite.cli import JsonCommand

from .subset import model_subset, subset_parse, subset_summary


class ReportCommand(JsonCommand):
    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--models", default=None, help="only these source models (comma-separated)")
        parser.add_argument("--exclude-models", default=None, help="leave these source models out (comma-separated)")
        parser.add_argument("--ci", action="store_true",
                            help="add a bootstrap 95%% interval (resampling cases, seeded) to every mean")

    def handle(self, *args, **options):
        subset = subset_parse(options.get("models"), options.get("exclude_models"))
        run = self.run

        def restricted(**opts) -> dict:
            with model_subset(subset):
                result = run(**opts)
            if subset is not None:
                present = Response.objects.filter(project__slug=opts["project"]).values_list("model", flat=True).distinct()
                result = {**result, "model_subset": subset_summary(subset, present)}
            return result

        self.run = restricted
        try:
            return super().handle(*args, **options)
        finally:
            self.run = run
