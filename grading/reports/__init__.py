"""Research reports of a project (issue 3): agreement, coverage, judges, bias and
calibration, computed by ``services`` from the decision frames of ``grading.selectors``
with the pure functions of ``grading.metrics``, cached under a fingerprint of the inputs,
and shown by ``views`` as tables and server-side SVG charts (``charts``) with CSV
downloads. The management commands of SPEC §5 print the same results as JSON.
"""
