"""Reads of the annotation app, each one fetching *and* authorizing (STYLE: fetch-and-authorize).

Independence (SPEC §8) is enforced here: an annotator can reach only their own assignments and
their own labels, a checker only the assignments and labels of their own cohort, and nothing
here ever returns judge output. A request for somebody else's object raises ``Http404`` so that
its existence is not revealed either.
"""
from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count, Q
from django.http import Http404

from .labelrows import progress_counts
from .models import Assignment, Cohort, CohortMembership, Criterion, Label, Project, Response

OPEN_STATUSES = (Assignment.OPEN, Assignment.IN_PROGRESS)


@dataclass
class ProjectWork:
    """One row of "My work": a project, the user's cohort and role, and their queue counts."""

    project: Project
    cohort: Cohort
    role: str
    counts: dict = field(default_factory=dict)
    review_counts: dict = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def done(self) -> int:
        return self.counts.get(Assignment.SUBMITTED, 0) + self.counts.get(Assignment.CHECKED, 0)

    @property
    def done_pct(self) -> float:
        return round(100.0 * self.done / self.total, 1) if self.total else 0.0


def work_list_for_user(*, user) -> list[ProjectWork]:
    """The user's projects with their own queue counts and, for checkers, the cohort's review queue."""
    memberships = list(CohortMembership.objects.filter(user=user).select_related("project", "cohort"))
    rows = {m.project_id: ProjectWork(project=m.project, cohort=m.cohort, role=m.role) for m in memberships}
    for project_id, status, n in (
        Assignment.objects.filter(annotator=user).values_list("project_id", "status").annotate(n=Count("id"))
    ):
        if project_id in rows:
            rows[project_id].counts[status] = n
    checker_cohorts = [m.cohort_id for m in memberships if m.role == CohortMembership.CHECKER]
    if checker_cohorts:
        for project_id, status, n in (
            Assignment.objects.filter(cohort_id__in=checker_cohorts, status__in=[Assignment.SUBMITTED, Assignment.CHECKED])
            .values_list("project_id", "status")
            .annotate(n=Count("id"))
        ):
            rows[project_id].review_counts[status] = n
    for row in rows.values():
        for status, _ in Assignment.STATUSES:
            row.counts.setdefault(status, 0)
    return list(rows.values())


def membership_get(*, project_id: int, user) -> CohortMembership | None:
    return CohortMembership.objects.filter(project_id=project_id, user=user).select_related("cohort").first()


def assignment_get_for_annotator(
    *, assignment_id: int, user, for_update: bool = False, related=("project", "cohort", "response__case")
) -> Assignment:
    """The user's own assignment, or 404 (also for somebody else's existing assignment)."""
    queryset = Assignment.objects.select_related(*related)
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    assignment = queryset.filter(pk=assignment_id, annotator_id=user.pk).order_by().first()
    if assignment is None:
        raise Http404("No such assignment")
    return assignment


def assignment_get_for_checker(*, assignment_id: int, user, for_update: bool = False) -> Assignment:
    """An assignment of a cohort the user checks, submitted or checked; otherwise 404."""
    queryset = Assignment.objects.select_related("project", "cohort", "response__case", "annotator")
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    checked_cohorts = CohortMembership.objects.filter(user_id=user.pk, role=CohortMembership.CHECKER).values("cohort_id")
    assignment = (
        queryset.filter(pk=assignment_id, cohort_id__in=checked_cohorts)
        .exclude(annotator_id=user.pk)
        .filter(status__in=[Assignment.SUBMITTED, Assignment.CHECKED])
        .order_by()
        .first()
    )
    if assignment is None:
        raise Http404("No such assignment to review")
    return assignment


def assignment_next_for_annotator(*, user, project_id: int | None = None) -> Assignment | None:
    """The annotator's next unfinished assignment: in-progress ones first, then open ones, in order."""
    queryset = Assignment.objects.filter(annotator_id=user.pk, status__in=OPEN_STATUSES)
    if project_id is not None:
        queryset = queryset.filter(project_id=project_id)
    in_progress = queryset.filter(status=Assignment.IN_PROGRESS).order_by("position", "id").first()
    return in_progress or queryset.order_by("position", "id").first()


def assignments_for_annotator(*, user, project_id: int | None = None):
    queryset = Assignment.objects.filter(annotator_id=user.pk).select_related("project", "response__case")
    if project_id is not None:
        queryset = queryset.filter(project_id=project_id)
    return queryset.annotate(
        decided=Count("labels", filter=Q(labels__annotator_id=user.pk))
    ).order_by("project__slug", "position", "id")


def review_queue_for_checker(*, user, project_id: int):
    membership = membership_get(project_id=project_id, user=user)
    if membership is None or membership.role != CohortMembership.CHECKER:
        raise Http404("You do not check a cohort of this project")
    return membership, (
        Assignment.objects.filter(cohort=membership.cohort, status__in=[Assignment.SUBMITTED, Assignment.CHECKED])
        .exclude(annotator_id=user.pk)
        .select_related("annotator", "response__case")
        .order_by("status", "submitted_at", "id")
    )


def criteria_for_response(*, response: Response) -> list[Criterion]:
    """The rubric of the response's case: its own criteria, else the project-wide rubric (one query)."""
    rows = list(
        Criterion.objects.filter(project_id=response.project_id)
        .filter(Q(case_id=response.case_id) | Q(case__isnull=True))
        .order_by("position", "id")
    )
    own = [c for c in rows if c.case_id is not None]
    return own or [c for c in rows if c.case_id is None]


def criterion_get_for_assignment(*, assignment: Assignment, criterion_id: int) -> Criterion:
    """A criterion of the assignment's rubric, or 404."""
    # order_by(): the models' default orderings follow foreign keys, and resolving them costs
    # more than the query itself.
    criterion = Criterion.objects.filter(pk=criterion_id, project_id=assignment.project_id).order_by().first()
    if criterion is None:
        raise Http404("No such criterion")
    if criterion.case_id is None:
        if Criterion.objects.filter(project_id=assignment.project_id, case_id=assignment.response.case_id).exists():
            raise Http404("No such criterion")
    elif criterion.case_id != assignment.response.case_id:
        raise Http404("No such criterion")
    return criterion


def labels_by_criterion(*, response_id: int, annotator_id: int) -> dict[int, Label]:
    """One person's labels for one response: never anybody else's."""
    return {
        label.criterion_id: label
        for label in Label.objects.filter(response_id=response_id, annotator_id=annotator_id).order_by()
    }


def assignment_progress(*, assignment: Assignment) -> tuple[int, int]:
    """(decided, total) over the response's rubric for the assignment's annotator, in one query."""
    return progress_counts(response_id=assignment.response_id, annotator_id=assignment.annotator_id)


def checker_labels_by_criterion(*, response_id: int, cohort_id: int) -> dict[int, Label]:
    """The checker labels of one cohort for one response (the latest one per criterion)."""
    labels = Label.objects.filter(
        response_id=response_id, cohort_id=cohort_id, role=CohortMembership.CHECKER
    ).select_related("annotator").order_by("updated_at")
    return {label.criterion_id: label for label in labels}


def project_assignment_summary(*, project: Project) -> list[dict]:
    """Per cohort: members by role, assignments by status, responses covered; for researchers."""
    cohorts = list(project.cohorts.all())
    members = Counter(
        CohortMembership.objects.filter(project=project).values_list("cohort_id", "role").iterator()
    )
    statuses = {
        (cohort_id, status): n
        for cohort_id, status, n in Assignment.objects.filter(project=project)
        .values_list("cohort_id", "status")
        .annotate(n=Count("id"))
    }
    covered = dict(
        Assignment.objects.filter(project=project)
        .values_list("cohort_id")
        .annotate(n=Count("response_id", distinct=True))
    )
    return [
        {
            "cohort": cohort,
            "annotators": members.get((cohort.pk, CohortMembership.ANNOTATOR), 0),
            "checkers": members.get((cohort.pk, CohortMembership.CHECKER), 0),
            "by_status": [(label, statuses.get((cohort.pk, key), 0)) for key, label in Assignment.STATUSES],
            "total": sum(statuses.get((cohort.pk, key), 0) for key, _ in Assignment.STATUSES),
            "responses_covered": covered.get(cohort.pk, 0),
        }
        for cohort in cohorts
    ]


@dataclass
class CriterionRow:
    """What one criterion row of the labeling or review page shows."""

    criterion: Criterion
    label: Label | None = None
    annotator_label: Label | None = None  # review page: the label under review
    error: str = ""
    conflict: bool = False

    @property
    def number(self) -> int:
        return self.criterion.position + 1

    @property
    def revision(self) -> int:
        return self.label.revision if self.label else 0

    @property
    def choices(self) -> list[dict]:
        """The buttons of the row: name, value, caption, shortcut and whether it is the stored choice."""
        label = self.label
        if self.criterion.kind == Criterion.BINARY:
            items = [("verdict", "met", "Met", "1"), ("verdict", "not_met", "Not met", "2"),
                     ("verdict", "cannot_assess", "Cannot assess", "3")]
        else:
            items = [("option", o["label"], o["label"], str(i + 1) if i < 9 else "")
                     for i, o in enumerate(self.criterion.options)]
            items.append(("verdict", "cannot_assess", "Cannot assess", "c"))
        current = (label.verdict and ("verdict", label.verdict)) or (label.option_label and ("option", label.option_label)) if label else None
        return [{"name": n, "value": v, "caption": cap, "key": key, "pressed": current == (n, v)} for n, v, cap, key in items]


def decision_display(label: Label | None) -> str:
    if label is None:
        return ""
    if label.verdict:
        return label.get_verdict_display()
    if label.option_label:
        return label.option_label
    return "" if label.value is None else f"value {label.value:g}"


def labeling_page_data(*, assignment: Assignment) -> dict:
    """Everything the labeling page shows, in a fixed handful of queries whatever the rubric size."""
    criteria = criteria_for_response(response=assignment.response)
    labels = labels_by_criterion(response_id=assignment.response_id, annotator_id=assignment.annotator_id)
    rows = [CriterionRow(criterion=c, label=labels.get(c.pk)) for c in criteria]
    queue = list(
        Assignment.objects.filter(project_id=assignment.project_id, annotator_id=assignment.annotator_id)
        .order_by("position", "id")
        .values_list("pk", "status")
    )
    ids = [pk for pk, _ in queue]
    following = [pk for pk, status in queue[ids.index(assignment.pk) + 1:] if status in OPEN_STATUSES]
    return {
        "assignment": assignment,
        "project": assignment.project,
        "case": assignment.response.case,
        "rows": rows,
        "decided": sum(1 for row in rows if row.label is not None),
        "total": len(rows),
        "read_only": assignment.status not in OPEN_STATUSES,
        "queue_position": ids.index(assignment.pk) + 1,
        "queue_length": len(ids),
        "next_assignment_id": following[0] if following else None,
    }


def review_page_data(*, assignment: Assignment) -> dict:
    """The checker's view of one submitted assignment: the annotator's labels and the cohort's checker labels."""
    criteria = criteria_for_response(response=assignment.response)
    source = labels_by_criterion(response_id=assignment.response_id, annotator_id=assignment.annotator_id)
    checked = checker_labels_by_criterion(response_id=assignment.response_id, cohort_id=assignment.cohort_id)
    rows = [CriterionRow(criterion=c, label=checked.get(c.pk), annotator_label=source.get(c.pk)) for c in criteria]
    return {
        "assignment": assignment,
        "project": assignment.project,
        "case": assignment.response.case,
        "rows": rows,
        "reviewed": sum(1 for row in rows if row.label is not None),
        "total": len(rows),
        "read_only": assignment.status != Assignment.SUBMITTED,
    }
