"""Cases, rubrics, responses, cohorts, assignments and human labels.

This app never imports ``grading``; dependencies run grading -> annotation only.
"""
