"""Reads of the checker review. A review item is one response in one cohort: the checker sees
every annotator of that cohort who labelled it, side by side per criterion, and records the
cohort's decision (SPEC §2: the checker's label wins).

An item is reviewable once every assignment of the response in the cohort is submitted (or
checked); it is read-only once all of them are checked, until one is reopened. A checker sees
only items of the cohort they check and never one they labelled themselves; anything else is
a 404, so its existence is not revealed either.
"""
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Case, Count, F, IntegerField, Max, Q, Value, When
from django.http import Http404

from ..models import Assignment, Cohort, CohortMembership, Criterion, Label, Project, Response
from ..vocabulary import choice_encode
from .final import label_check_q
from .work import choices_for, criteria_for_response, membership_get

REVIEWABLE = (Assignment.SUBMITTED, Assignment.CHECKED)


@dataclass
class ReviewItem:
    """One response under review in the checker's cohort, with the cohort's assignments of it."""

    response: Response
    cohort: Cohort
    assignments: list[Assignment]

    @property
    def project(self) -> Project:
        return self.response.project

    @property
    def case(self):
        return self.response.case

    @property
    def waiting(self) -> list[Assignment]:
        """Assignments still open or in progress: the item is not ready while there are any."""
        return [a for a in self.assignments if a.status not in REVIEWABLE]

    @property
    def ready(self) -> bool:
        return not self.waiting

    @property
    def checked(self) -> bool:
        return all(a.status == Assignment.CHECKED for a in self.assignments)

    @property
    def editable(self) -> bool:
        return self.ready and not self.checked

    @property
    def status(self) -> str:
        return "checked" if self.checked else "ready" if self.ready else "waiting"


def review_item_get_for_checker(*, response_id: int, user, for_update: bool = False) -> ReviewItem:
    """The response as a review item of the cohort ``user`` checks, or 404: the user must check a
    cohort of the response's project, and at least one annotator of that cohort must have
    submitted it. ``for_update`` locks the cohort's assignments of the response."""
    response = Response.objects.select_related("project", "case").filter(pk=response_id).order_by().first()
    if response is None:
        raise Http404("No such item to review")
    membership = membership_get(project_id=response.project_id, user=user)
    if membership is None or membership.role != CohortMembership.CHECKER:
        raise Http404("No such item to review")
    # A hidden check item is no part of the cohort's work on the response: never reviewed, never shown.
    queryset = Assignment.objects.filter(response=response, cohort=membership.cohort, is_check=False).exclude(
        annotator_id=user.pk)
    if for_update:
        # Lock in primary-key order, so two checkers of one cohort cannot deadlock.
        list(queryset.select_for_update(of=("self",)).order_by("pk").values_list("pk", flat=True))
    assignments = list(queryset.select_related("annotator").order_by("annotator__username", "pk"))
    if not any(a.status in REVIEWABLE for a in assignments):
        raise Http404("No such item to review")
    return ReviewItem(response=response, cohort=membership.cohort, assignments=assignments)


def _decision(label: Label | None) -> tuple | None:
    return None if label is None else (label.verdict, label.option_label, label.value)


def annotators_agree(decisions: list[tuple | None]) -> bool:
    """Whether the annotators share a decision: every assigned annotator decided (``None``: has
    no label), all the same way. The review page's rows and the review queue's disagreement
    counts both ask this."""
    return bool(decisions) and None not in decisions and len(set(decisions)) == 1


@dataclass
class ReviewRow:
    """One criterion of a review item: each annotator's label, and the cohort's checker label."""

    criterion: Criterion
    votes: list[tuple[str, Label | None]]  # (annotator username, their label or None)
    label: Label | None = None  # the cohort's checker label
    error: str = ""

    @property
    def number(self) -> int:
        return self.criterion.position + 1

    @property
    def agreed(self) -> bool:
        """Every annotator decided, and all the same way (the "shared decision")."""
        return annotators_agree([_decision(label) for _, label in self.votes])

    @property
    def shared(self) -> Label | None:
        return self.votes[0][1] if self.agreed else None

    @property
    def needs_choice(self) -> bool:
        return self.label is None and not self.agreed

    @property
    def choices(self) -> list[dict]:
        """The decision buttons, the checker's recorded decision pressed, the shared one marked."""
        shared = self.shared_choice
        return [{**c, "shared": c["choice"] == shared} for c in choices_for(criterion=self.criterion, label=self.label)]

    @property
    def shared_choice(self) -> str:
        """The shared decision as a button's ``choice`` ("" when the annotators disagree)."""
        shared = self.shared
        if shared is None:
            return ""
        return choice_encode(verdict=shared.verdict, option=shared.option_label, value=shared.value)


def review_rows(*, item: ReviewItem) -> list[ReviewRow]:
    """Per criterion of the response's rubric: every assigned annotator's label (in a fixed
    order) and the cohort's checker label. Three queries whatever the rubric size."""
    criteria = criteria_for_response(response=item.response)
    annotators = [(a.annotator_id, a.annotator.username) for a in item.assignments]
    own = defaultdict(dict)
    for label in Label.objects.filter(response_id=item.response.pk, annotator_id__in=[a for a, _ in annotators],
                                      role=Label.ANNOTATOR_ROLE).order_by():
        own[label.criterion_id][label.annotator_id] = label
    checker = {
        label.criterion_id: label
        for label in Label.objects.filter(response_id=item.response.pk, cohort_id=item.cohort.pk, role=Label.CHECKER_ROLE)
        .select_related("annotator").order_by()
    }
    return [
        ReviewRow(criterion=c, votes=[(name, own[c.pk].get(user_id)) for user_id, name in annotators], label=checker.get(c.pk))
        for c in criteria
    ]


def review_page_data(*, item: ReviewItem) -> dict:
    rows = review_rows(item=item)
    return {
        "item": item,
        "project": item.project,
        "case": item.case,
        "response_number": response_number(response=item.response),
        "rows": rows,
        "reviewed": sum(1 for row in rows if row.label is not None),
        "disagreements": sum(1 for row in rows if not row.agreed),
        "total": len(rows),
        "read_only": not item.editable,
    }


def response_number(*, response: Response) -> int:
    """The response's place among its case's responses (1-based): names an item without naming its model."""
    return Response.objects.filter(case_id=response.case_id, position__lt=response.position).count() + 1


@dataclass
class QueueRow:
    """One line of the review queue: a response of the cohort and where its review stands."""

    response_id: int
    case: str
    response_number: int
    annotators: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    submitted_at: object = None
    disagreements: int | None = None

    @property
    def status(self) -> str:
        if all(s == Assignment.CHECKED for s in self.statuses):
            return "checked"
        return "ready" if all(s in REVIEWABLE for s in self.statuses) else "waiting"

    @property
    def submitted(self) -> int:
        return sum(1 for s in self.statuses if s in REVIEWABLE)


STATUS_ORDER = {"ready": 0, "waiting": 1, "checked": 2}


def _queue_items(*, cohort_id: int, checker_id: int):
    """One row per response of the cohort with at least one submitted assignment (the checker's
    own assignments and check items left out), grouped in the database: its case, position, last
    submission and ``rank``, the place of its status in ``STATUS_ORDER`` (checked when every
    assignment is checked, ready when every one is submitted or checked, else waiting)."""
    every, reviewable = Count("id"), Count("id", filter=Q(status__in=REVIEWABLE))
    return (
        Assignment.objects.filter(cohort_id=cohort_id, is_check=False).exclude(annotator_id=checker_id)
        .values("response_id").order_by()
        .alias(n_every=every, n_checked=Count("id", filter=Q(status=Assignment.CHECKED)))
        .annotate(case=F("response__case__external_id"), case_id=F("response__case_id"), position=F("response__position"),
                  last_submitted=Max("submitted_at"), n_reviewable=reviewable,
                  rank=Case(When(Q(n_checked=F("n_every")), then=Value(STATUS_ORDER["checked"])),
                            When(Q(n_reviewable=F("n_every")), then=Value(STATUS_ORDER["ready"])),
                            default=Value(STATUS_ORDER["waiting"]), output_field=IntegerField()))
        .filter(n_reviewable__gt=0)
    )


def _queue_order(items):
    """Ready items first (oldest submission first), then those waiting for an annotator, then the checked."""
    return items.order_by("rank", F("last_submitted").asc(nulls_last=True), "case", "position", "response_id")


def review_queue_for_checker(*, user, project_id: int, status: str | None = None):
    """The checker's cohort and its review items, in queue order, as a query (each item a dict;
    ``review_queue_rows`` turns one page of them into ``QueueRow``s). ``status`` keeps one of
    ready / waiting / checked. Nothing is read until the caller pages through it."""
    membership = membership_get(project_id=project_id, user=user)
    if membership is None or membership.role != CohortMembership.CHECKER:
        raise Http404("You do not check a cohort of this project")
    items = _queue_items(cohort_id=membership.cohort_id, checker_id=user.pk)
    if status in STATUS_ORDER:
        items = items.filter(rank=STATUS_ORDER[status])
    return membership, _queue_order(items)


def review_queue_counts(*, membership: CohortMembership, user) -> dict[str, int]:
    """How many items of the checker's queue are ready, waiting and checked: counted in the database."""
    grouped = _queue_items(cohort_id=membership.cohort_id, checker_id=user.pk)
    sql, params = grouped.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT q.rank, COUNT(*) FROM ({sql}) q GROUP BY q.rank", params)
        by_rank = dict(cursor.fetchall())
    return {name: by_rank.get(rank, 0) for name, rank in STATUS_ORDER.items()}


def review_queue_rows(*, items, membership: CohortMembership, user) -> list[QueueRow]:
    """``QueueRow``s of the given queue items (one page of ``review_queue_for_checker``): their
    annotators and statuses and each response's number in its case, read for those items only."""
    items = list(items)
    rows = {item["response_id"]: QueueRow(response_id=item["response_id"], case=item["case"], response_number=0,
                                          submitted_at=item["last_submitted"]) for item in items}
    for response_id, annotator, state in (
        Assignment.objects.filter(cohort_id=membership.cohort_id, is_check=False, response_id__in=list(rows))
        .exclude(annotator_id=user.pk).order_by("response_id", "annotator__username")
        .values_list("response_id", "annotator__username", "status")
    ):
        rows[response_id].annotators.append(annotator)
        rows[response_id].statuses.append(state)
    _number_responses(list(rows.values()), {item["response_id"]: (item["case_id"], item["position"]) for item in items})
    return list(rows.values())


def _number_responses(rows: list[QueueRow], positions: dict[int, tuple[int, int]]) -> None:
    case_ids = {positions[row.response_id][0] for row in rows}
    ordered = defaultdict(list)
    for case_id, position in Response.objects.filter(case_id__in=case_ids).order_by().values_list("case_id", "position"):
        ordered[case_id].append(position)
    for row in rows:
        case_id, position = positions[row.response_id]
        row.response_number = sorted(ordered[case_id]).index(position) + 1


def review_queue_disagreements(*, rows: list[QueueRow], cohort: Cohort) -> None:
    """Fill in, for the queue rows shown (one page), on how many criteria the annotators disagree."""
    ids = [row.response_id for row in rows]
    votes = defaultdict(lambda: defaultdict(list))
    for response_id, criterion_id, verdict, option, value in (
        Label.objects.filter(response_id__in=ids, cohort=cohort, role=Label.ANNOTATOR_ROLE).exclude(label_check_q()).order_by()
        .values_list("response_id", "criterion_id", "verdict", "option_label", "value")
    ):
        votes[response_id][criterion_id].append((verdict, option, value))
    for row in rows:
        n = len(row.annotators)  # an annotator without a label on a criterion: a None among its decisions
        row.disagreements = sum(
            1 for decided in votes[row.response_id].values()
            if not annotators_agree(decided + [None] * (n - len(decided)))
        )
