"""``manage.py ppi_estimate``: the report declared in ``grading.reports`` (options and JSON from its declaration)."""
from grading.reports.cli import report_command

Command = report_command("ppi_estimate")
