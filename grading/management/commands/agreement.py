"""``manage.py agreement --project SLUG --a SOURCE --b SOURCE [--cannot-assess STRATEGY] [--pairs FILE]``:
agreement of source B with reference source A (SPEC §5). ``--b`` may name a source of
another project (``other-slug:cohort:NAME``), whose rows are aligned by text. ``--pairs``
also writes the paired decisions behind the figures, one JSON object per line, to audit them."""
import json
from pathlib import Path

from evalsite.cli import fail
from grading.reports.cli import ReportCommand
from grading.reports.services import agreement_pairs_report, agreement_report


class Command(ReportCommand):
    help = "MF1, kappa, alpha and the case-level MF1 distribution of source B against reference A."
    requires_system_checks: list = []  # read-only: skip loading every URLconf and view at start

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--a", required=True, help="reference source: cohort:NAME, judge:NAME or gold")
        parser.add_argument("--b", required=True, help="compared source; [OTHER-PROJECT:]cohort:NAME, judge:NAME or gold")
        parser.add_argument("--cannot-assess", default="zero", help="skip | zero | partial | fail (default zero)")
        parser.add_argument("--pairs", metavar="FILE", help="also write the paired decisions as JSON Lines to FILE")

    def run(self, **options) -> dict:
        result = agreement_report(
            project=options["project"], a=options["a"], b=options["b"], strategy=options["cannot_assess"], ci=options["ci"]
        )
        if options.get("pairs"):
            target = Path(options["pairs"])
            if not target.parent.is_dir():
                fail(f"--pairs: no directory {str(target.parent)!r}")
            pairs = agreement_pairs_report(project=options["project"], a=options["a"], b=options["b"],
                                           strategy=options["cannot_assess"])
            with target.open("w", encoding="utf-8") as out:
                for pair in pairs:
                    out.write(json.dumps(pair, sort_keys=True) + "\n")
        return {**result["summary"], "n_excluded_cases": result["n_excluded_cases"],
                "n_draft_labels": result["n_draft_labels"]}
