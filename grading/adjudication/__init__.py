"""Adjudication (issue 10): the queue of low-agreement and disputed items, the adjudication page,
and recording the final (gold) decision with its confidence, category, note and history.

The queue (which responses need an adjudicator, in what order) is a report:
``grading.reports.adjudication_queue``. ``item``: everything the page of one response shows (``adjudication_item``); ``services``:
recording a decision (``adjudication_record``); ``views`` / ``urls``: the pages.
"""
