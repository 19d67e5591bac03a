"""Judges, judge runs and judgments, metrics and reports, adjudication and export.

``grading`` reads ``annotation`` (its models and selectors); never the other way round.
"""
