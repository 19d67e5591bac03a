"""The report commands of SPEC §5, made from the declarations (``registry``).

``report_command(key)`` is the whole of ``grading/management/commands/<key>.py``: an option per
parameter of the report's schema (``--cannot-assess`` for ``cannot_assess``; its type, default,
choices and help from the field), ``--project``, ``--json``, and on every report ``--models`` /
``--exclude-models`` (issue 14, point 4: the computation runs under that model subset and the
result says which models were asked for and used, ``model_subset``) and ``--ci`` (issue 14,
point 5: bootstrap 95% intervals resampling cases). ``ReportCommand`` is that base, also used
by ``calibrate``, which writes and so is no report. A report command reads the cache entry the
report's page builders and API share (``background.report_settled``): a result computed (or being
computed) for the same inputs is printed without computing it again.
"""
from django.core.management.base import CommandError
from rest_framework import serializers

from annotation.models import Response
from evalsite.cli import JsonCommand
from grading.sources import project_get

from .background import report_settled
from .registry import report_get
from .subset import model_subset, subset_parse, subset_summary


class ReportCommand(JsonCommand):
    subset = True
    intervals = True

    def add_arguments(self, parser):
        super().add_arguments(parser)
        if self.subset:
            parser.add_argument("--models", default=None, help="only these source models (comma-separated)")
            parser.add_argument("--exclude-models", default=None, help="leave these source models out (comma-separated)")
        if self.intervals:
            parser.add_argument("--ci", action="store_true",
                                help="add a bootstrap 95%% interval (resampling cases, seeded) to every mean")

    def handle(self, *args, **options):
        if not self.subset:
            return super().handle(*args, **options)
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


def option_flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_field_option(parser, name: str, f: serializers.Field) -> None:
    """One command-line option from one serializer field."""
    kwargs = {"help": (f.help_text or None) and str(f.help_text).replace("%", "%%")}
    if isinstance(f, serializers.BooleanField):
        parser.add_argument(option_flag(name), action="store_true", dest=name, **kwargs)
        return
    if f.required:
        kwargs["required"] = True
    else:
        kwargs["default"] = None  # absent: the schema's default applies
    if isinstance(f, serializers.IntegerField):
        kwargs["type"] = int
    elif isinstance(f, serializers.FloatField):
        kwargs["type"] = float
    if isinstance(f, serializers.ChoiceField):
        kwargs["choices"] = list(f.choices)
    if f.style.get("metavar"):
        kwargs["metavar"] = f.style["metavar"]
    parser.add_argument(option_flag(name), dest=name, **kwargs)


def report_command(key: str):
    """The management command class of the report ``key``."""
    report = report_get(key)

    class Command(ReportCommand):
        help = report.help or report.title
        requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start
        subset = report.subset
        intervals = report.intervals

        def add_arguments(self, parser):
            super().add_arguments(parser)
            parser.add_argument("--project", required=True)
            for name, f in report.params().fields.items():
                add_field_option(parser, name, f)

        def run(self, **options) -> dict:
            project = project_get(slug=options["project"])
            fields = report.params().fields
            data = {name: options[name] for name in fields if options.get(name) is not None}
            params = report.parse(project=project, data=data)
            ci = bool(options.get("ci")) if report.intervals else False
            # the result a page or an API request computed, or is computing, is the command's too
            result = report_settled(report=report, project=project, ci=ci, **params)
            return report.printed(result, {**params, "ci": ci})

    Command.__name__ = f"{key.title().replace('_', '')}Command"
    Command.__doc__ = report.help
    return Command


def fail(message: str) -> None:
    raise CommandError(message)
