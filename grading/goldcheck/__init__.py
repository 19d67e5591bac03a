"""Annotator quality with hidden gold check items (issue 28, point 3).

A manager sets, per project, the share of each annotator's queue made of check items (``check_rate``),
the alert threshold, the check items needed before an alert, the rolling window, and whether
annotators may see their own feedback. ``services.checks_seed`` draws responses that have gold
decisions (agreed, adjudicated, single-cohort or imported; ``grading.selectors.gold_decision_frame``)
into each annotator's queue as assignments flagged ``Assignment.is_check``: seeded, reproducible,
idempotent, interleaved among the items the annotator has not started, and audited.

A check item looks like any other item to its annotator: the flag is in no page, partial or API
answer they can read, and the untouched part of their queue is created again with the check items in
it, so ids follow queue order as they always do. Its labels never count (``annotation.selectors.final``:
neither final nor draft), no checker reviews it, and it turns "checked" as the cohort's reviews go on.

``selectors.annotator_quality`` gives each annotator's agreement with gold (overall and over the
rolling window, its drift and the alert: ``grading.metrics.raters``), Cohen's kappa with the rest of
their cohort on regular items, and active time per item; the manager page (``views``) and the API
(``grading.api.quality``) show it, and ``selectors.annotator_feedback`` an annotator's own figures
when the project allows, as of the end of the previous day (so no figure moves with one item).
"""
