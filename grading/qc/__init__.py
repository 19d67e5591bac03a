"""Case quality control (ClinConsensus §3.4; issue 10, point 5; SPEC §5 ``qc_screen`` and
``qc_audit_sample``): which cases stay in the study.

*Screening* flags a case for exclusion when the chosen screening responses already cover its
rubric well: the mean, over those models' decided responses of the case, of their rubric accuracy
100 · s_i / N_i (SPEC §3 "Coverage", computed by ``grading.metrics.coverage`` so the definition
lives in one place) is at or above a threshold. The *audit sampler* draws a seeded share of the
cases still in for senior review, whose outcome is pass, revise or remove. A case is *excluded*
— left out of every report and of the export (``grading.reports.inputs``) — when it is flagged
and no manager reinstated it, or when the audit removed it.

The writes (``qc_screen``, ``qc_audit_sample``, ``qc_audit_record``, ``qc_reinstate``) lock the
``CaseQuality`` rows they change inside one transaction and leave one audit event each. The reads
(``qc_screen_choices``, ``qc_counts``, ``qc_summary``, ``qc_lists``) feed the quality page and the
project page.
pandas and the report code load on first use, so importing this package at start-up costs nothing.

The package: ``rules`` (the outcomes and the argument checks), ``selectors`` (the reads),
``services`` (the writes), ``views`` and ``urls`` (the quality page).
"""
from .rules import MAX_NOTE, OUTCOMES, PASS, REMOVE, REVISE, qc_model_names
from .selectors import qc_counts, qc_lists, qc_screen_accuracy, qc_screen_choices, qc_summary
from .services import qc_audit_record, qc_audit_sample, qc_reinstate, qc_screen

__all__ = [
    "MAX_NOTE", "OUTCOMES", "PASS", "REMOVE", "REVISE", "qc_audit_record", "qc_audit_sample", "qc_counts", "qc_lists",
    "qc_model_names", "qc_reinstate", "qc_screen", "qc_screen_accuracy", "qc_screen_choices", "qc_summary",
]
