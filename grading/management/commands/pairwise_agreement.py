"""``manage.py pairwise_agreement``: the report declared in ``grading.reports`` (SPEC §5; options and JSON from its declaration)."""
from grading.reports.cli import report_command

Command = report_command("pairwise_agreement")
