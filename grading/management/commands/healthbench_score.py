"""``manage.py healthbench_score``: the report declared in ``grading.reports`` (SPEC §5; options and JSON from its declaration)."""
from grading.reports.cli import report_command

Command = report_command("healthbench_score")
