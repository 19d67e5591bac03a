"""``manage.py adjudication_queue --project SLUG [--threshold 0.6] [--all] [--model M] ...``: the report
declared in ``grading.reports.adjudication_queue`` (SPEC §5; options and JSON from its declaration)."""
from grading.reports.cli import report_command

Command = report_command("adjudication_queue")
