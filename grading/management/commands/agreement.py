"""``manage.py agreement --project SLUG --a SOURCE --b SOURCE [--cannot-assess STRATEGY] [--pairs FILE]``:
agreement of source B with reference source A (SPEC §5), declared in ``grading.reports.agreement``.
``--b`` may name a source of another project (``other-slug:cohort:NAME``), whose rows are aligned
by text. ``--pairs`` (the command line only) also writes the paired decisions behind the figures,
one JSON object per line, to audit them."""
import json
from pathlib import Path

from evalsite.cli import fail
from grading.reports.agreement import AGREEMENT, agreement_pairs
from grading.reports.cli import report_command
from grading.reports.inputs import ReportInputs
from grading.sources import project_get


class Command(report_command("agreement")):
    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--pairs", metavar="FILE", help="also write the paired decisions as JSON Lines to FILE")

    def run(self, **options) -> dict:
        result = super().run(**options)
        if options.get("pairs"):
            target = Path(options["pairs"])
            if not target.parent.is_dir():
                fail(f"--pairs: no directory {str(target.parent)!r}")
            project = project_get(slug=options["project"])
            params = AGREEMENT.parse(project=project, data={name: options[name] for name in AGREEMENT.params().fields
                                                            if options[name] is not None})
            pairs = agreement_pairs(inputs=ReportInputs(project), a=params["a"], b=params["b"], strategy=params["strategy"])
            with target.open("w", encoding="utf-8") as out:
                for pair in pairs:
                    out.write(json.dumps(pair, sort_keys=True) + "\n")
        return result
