"""Labels routed where they matter (``grading.metrics.active``): a cohort's labelling budget drawn with
known probabilities that favour the responses the judges are unsure about, the estimate that weights
each label by the inverse of its probability, and how many labels a target interval width still needs.

``grading.selectors.routing`` reads the judges' uncertainty per response and a cohort's design; ``services`` extends a
design (raises its budget) and gives the newly drawn responses to the cohort's annotators. The page,
the API and the command read the figures through the ``routing`` report (``grading.reports.routing``).
"""
