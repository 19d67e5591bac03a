"""The one write service of labels: every change of a human label, whatever its entry point (the
labeling page, the single and batch API, the checker review, the admin, a re-import), goes
through ``labels_write``; a bundle import's new labels are copied in bulk and get their history
rows from ``labels_import_history``; a deletion goes through ``labels_delete``.

What every path gets, in one place:
- validation once: the decision against its criterion (``decisions.decision_validate``), quotes
  verified against the stored response text, the rationale, quote and time caps, the criterion in
  the rubric the response is judged against, and the cohort, the annotator (a member of that
  cohort) and the response in one project;
- a revision check: an interactive change names the revision it was made against
  (``expected_revision``, 0 for a label not saved yet) and is refused (``LabelConflict``) when the
  label changed since; only a path that means to overwrite says so (``replace=True``: imports),
  and its history row says it replaced;
- one history row per change, in the same transaction as the change; a deletion appends one too
  and keeps every earlier row (``LabelHistory.label`` is not a cascading key).

It is set-based: a batch of N changes costs a constant number of statements (read the targets,
insert the new labels, update the changed ones guarded by their revisions, append the history
rows, mark the assignment in progress), whatever N. Statements are plain SQL for both supported
databases (PostgreSQL, and SQLite 3.35+ whose writers are serialized by IMMEDIATE transactions),
because the ORM's query building cost more than the database work on the labeling page's hot path.

The package: ``rules`` (the caps, a change's validation, the refusals), ``targets`` (reading what
a change targets, locked), ``sql`` (the set-based statements), ``write`` (applying changes, import
history, deletion). Callers import from here.
"""
from .rules import (
    BATCH_MAX,
    MAX_QUOTE,
    MAX_QUOTES,
    MAX_RATIONALE,
    MAX_SECONDS,
    BatchRefused,
    LabelChange,
    LabelConflict,
    LabelRow,
    label_input_check,
    label_state,
)
from .write import labels_delete, labels_import_history, labels_write

__all__ = [
    "BATCH_MAX", "MAX_QUOTE", "MAX_QUOTES", "MAX_RATIONALE", "MAX_SECONDS", "BatchRefused", "LabelChange", "LabelConflict",
    "LabelRow", "label_input_check", "label_state", "labels_delete", "labels_import_history", "labels_write",
]
