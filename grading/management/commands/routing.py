"""``manage.py routing``: the routed-labelling report declared in ``grading.reports`` (options and JSON from its
declaration); ``manage.py route_labels`` raises a cohort's budget."""
from grading.reports.cli import report_command

Command = report_command("routing")
