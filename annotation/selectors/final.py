"""Which labels are final (SPEC §2): the one rule every reader of decisions goes through.

A label counts toward a cohort decision, a report, the adjudication queue, gold and an export only
when it is final:
- an annotator's label whose assignment is submitted or checked;
- an annotator's label outside any assignment: imported (imports are final) or recorded by a
  manager in the admin;
- a cohort's checker label once the checker completed the review of that response (an assignment
  of the response in the cohort is checked); an imported one; one on a response the cohort has no
  assignment of (recorded by a manager on imported work), since no review of it is under way.
Every other label is a draft: the work of an assignment still open or in progress, or a checker's
decision on a review not completed yet. Drafts stay visible to their author (the labeling page,
the review page) and, marked as drafts, to managers; reports say how many they left out.

A label of a hidden check item (``Assignment.is_check``: a gold response seeded into an annotator's
queue to measure their quality, issue 28) is neither: it never counts toward a decision, a report,
the adjudication queue or gold, whatever its assignment's status, and it is not a draft either (it
never will count). Only ``grading.goldcheck`` reads it, against gold. Check assignments also never
make a checker label a draft or final here (a check item is never reviewed). Final, draft and check
split every label in three.
"""
from django.db.models import Exists, OuterRef, Q, QuerySet

from ..models import Assignment, Label

FINAL_STATUSES = (Assignment.SUBMITTED, Assignment.CHECKED)
DRAFT_STATUSES = (Assignment.OPEN, Assignment.IN_PROGRESS)


def _cohort_assignments(**status) -> Exists:
    """Whether the label's response has a (regular, not check) assignment in the label's cohort (of ``status``)."""
    return Exists(Assignment.objects.filter(response_id=OuterRef("response_id"), cohort_id=OuterRef("cohort_id"),
                                            is_check=False, **status))


def label_check_q() -> Q:
    """The condition on ``Label`` rows of a hidden check item: neither final nor draft."""
    return Q(assignment__is_check=True)


def label_final_q() -> Q:
    """The condition on ``Label`` rows that makes a label final (the complement of ``label_draft_q``)."""
    checker = Q(role=Label.CHECKER_ROLE)
    return (
        Q(assignment__status__in=FINAL_STATUSES, assignment__is_check=False)
        | Q(assignment__isnull=True, role=Label.ANNOTATOR_ROLE)
        | (checker & Q(import_batch__isnull=False))
        | (checker & Q(_cohort_assignments(status=Assignment.CHECKED)))
        | (checker & ~Q(_cohort_assignments()))
    )


def label_draft_q() -> Q:
    """The condition on ``Label`` rows that makes a label a draft."""
    return (
        Q(assignment__status__in=DRAFT_STATUSES, assignment__is_check=False)
        | Q(_cohort_assignments(), ~Q(_cohort_assignments(status=Assignment.CHECKED)), role=Label.CHECKER_ROLE,
            import_batch__isnull=True)
    )


def labels_final(queryset: QuerySet) -> QuerySet:
    """Only the final labels of ``queryset`` (a ``Label`` queryset)."""
    return queryset.filter(label_final_q())


def labels_draft_count(*, project) -> int:
    """How many labels of ``project`` are drafts, and so left out of every decision."""
    return Label.objects.filter(project=project).filter(label_draft_q()).count()


def labels_check_count(*, project) -> int:
    """How many labels of ``project`` are on hidden check items, and so left out of every decision."""
    return Label.objects.filter(project=project).filter(label_check_q()).count()
