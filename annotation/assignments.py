"""Writes about assignments: who labels which response, and the assignment's life cycle.

``assignments_create`` gives each response ``overlap`` distinct annotators of one cohort, by
balanced round-robin (least-loaded annotator first, ties in a rotating order) or at random with
a seed. The overlap and "never the same item twice to one annotator" are enforced here, under a
lock on the cohort row and by the (response, annotator) unique constraint, never only in a form.

Life cycle: open → in progress (first saved label) → submitted (annotator, every criterion
decided) → checked (checker). A checker or a researcher may reopen a submitted or checked
assignment; only then can the annotator change it again.
"""
import random
from collections import Counter, defaultdict

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from evalsite.codes import CONFLICT, NOT_FOUND

from .access import user_may
from .models import Assignment, Cohort, CohortMembership, Label, Project, Response
from .projects import audit_record
from .selectors import criteria_for_response, evidence_missing, evidence_missing_text

ROUND_ROBIN, RANDOM = "round_robin", "random"
METHODS = [(ROUND_ROBIN, "balanced round-robin"), (RANDOM, "random (seeded)")]
# One heartbeat can add at most this much active time, so a stuck or forged client cannot
# inflate the figure; the page reports every 30 seconds.
MAX_SECONDS_PER_REPORT = 120.0


@transaction.atomic
def assignments_create(
    *, cohort: Cohort, overlap: int | None = None, method: str = ROUND_ROBIN, seed: int | None = None,
    responses: list[Response] | None = None, by=None,
) -> list[Assignment]:
    """Top every response up to ``overlap`` annotators of ``cohort``; returns the new assignments.

    Responses that already have enough annotators in the cohort are left alone, so running it
    again (e.g. after adding responses) only fills the gaps. New assignments are one audit event
    ``assign`` (how many per annotator).
    """
    list(Cohort.objects.select_for_update().filter(pk=cohort.pk).order_by().values_list("pk", flat=True))  # serializes concurrent runs
    project = cohort.project
    overlap = project.overlap if overlap is None else overlap
    if method not in dict(METHODS):
        raise ValidationError({"method": f"unknown method {method!r}"})
    annotators = list(
        CohortMembership.objects.filter(cohort=cohort, role=CohortMembership.ANNOTATOR)
        .order_by("user__username")
        .values_list("user_id", flat=True)
    )
    if overlap < 1:
        raise ValidationError({"overlap": "overlap must be at least 1"})
    if overlap > len(annotators):
        raise ValidationError(
            {"overlap": f"overlap {overlap} needs at least {overlap} annotators; cohort {cohort.name} has {len(annotators)}"}
        )
    if responses is None:
        responses = list(Response.objects.filter(project=project).order_by("position", "id"))
    existing = defaultdict(set)
    holders = defaultdict(set)  # who has the response at all: a hidden check item of it too (never twice)
    load = Counter({user_id: 0 for user_id in annotators})
    for response_id, user_id, is_check in Assignment.objects.filter(cohort=cohort).values_list(
            "response_id", "annotator_id", "is_check"):
        holders[response_id].add(user_id)
        if is_check:
            continue  # a check item is no annotation of the cohort: it neither fills the overlap nor loads
        existing[response_id].add(user_id)
        if user_id in load:
            load[user_id] += 1
    next_position = Counter({user_id: 0 for user_id in annotators})
    for user_id, last in (
        Assignment.objects.filter(project=project, annotator_id__in=annotators)
        .values_list("annotator_id")
        .annotate(last=Max("position"))
    ):
        next_position[user_id] = last + 1
    rng = random.Random(seed)
    rotation = 0
    created = []
    for response in responses:
        taken = existing[response.pk]
        missing = overlap - len(taken)
        if missing <= 0:
            continue
        eligible = [u for u in annotators if u not in taken and u not in holders[response.pk]]
        missing = min(missing, len(eligible))
        if missing <= 0:
            continue
        if method == RANDOM:
            chosen = rng.sample(eligible, missing)
        else:
            order = {u: (i - rotation) % len(annotators) for i, u in enumerate(annotators)}
            chosen = sorted(eligible, key=lambda u: (load[u], order[u]))[:missing]
            rotation += missing
        for user_id in chosen:
            created.append(
                Assignment(project=project, cohort=cohort, response=response, annotator_id=user_id,
                           position=next_position[user_id])
            )
            next_position[user_id] += 1
            load[user_id] += 1
            taken.add(user_id)
    Assignment.objects.bulk_create(created, batch_size=1000)
    if created:
        names = dict(get_user_model().objects.filter(pk__in=annotators).values_list("pk", "username"))
        per_user = Counter(names[a.annotator_id] for a in created)
        audit_record(project=project, actor=by, action="assign", target=f"cohort {cohort.name}",
                     after={"created": len(created), "overlap": overlap, "method": method, "seed": seed,
                            "per_annotator": dict(sorted(per_user.items()))})
    return created


@transaction.atomic
def assignment_reassign(*, assignment: Assignment, annotator, by) -> Assignment:
    """Give an untouched assignment to another annotator of the same cohort."""
    if not user_may(project=assignment.project_id, user=by, action="manage"):
        raise PermissionDenied("Only the project's managers reassign work")
    assignment = Assignment.objects.select_for_update().select_related("annotator").get(pk=assignment.pk)
    if assignment.status != Assignment.OPEN or Label.objects.filter(
        response_id=assignment.response_id, annotator_id=assignment.annotator_id
    ).exists():
        raise ValidationError({"assignment": ValidationError("only an open assignment without saved labels can be reassigned",
                                                             code=CONFLICT)})
    if not CohortMembership.objects.filter(
        cohort_id=assignment.cohort_id, user_id=annotator.pk, role=CohortMembership.ANNOTATOR
    ).exists():
        raise ValidationError({"annotator": ValidationError(
            f"{annotator} is not an annotator of cohort {assignment.cohort.name}", code=CONFLICT)})
    if Assignment.objects.filter(response_id=assignment.response_id, annotator_id=annotator.pk).exists():
        raise ValidationError({"annotator": ValidationError(f"{annotator} already has this item", code=CONFLICT)})
    last = Assignment.objects.filter(project_id=assignment.project_id, annotator_id=annotator.pk).order_by("-position").first()
    before = assignment.annotator.username
    assignment.annotator_id = annotator.pk
    assignment.position = (last.position + 1) if last else 0
    assignment.save(update_fields=["annotator", "position"])
    audit_record(project=assignment.project, actor=by, action="reassign", target=f"assignment {assignment.pk}",
                 before={"annotator": before}, after={"annotator": annotator.username})
    return assignment


@transaction.atomic
def assignment_submit(*, assignment: Assignment, user) -> Assignment:
    """Hand the assignment in; refused until every criterion of the rubric has a decision, and
    while a criterion that requires quotes is marked met with fewer valid ones (issue 12)."""
    assignment = Assignment.objects.select_for_update(of=("self",)).select_related("response").get(pk=assignment.pk)
    if assignment.annotator_id != user.pk:
        raise PermissionDenied("Not your assignment")
    if assignment.status not in (Assignment.OPEN, Assignment.IN_PROGRESS):
        raise ValidationError({"assignment": "this assignment is already submitted"})
    criteria = {c.pk for c in criteria_for_response(response=assignment.response)}
    decided = set(
        Label.objects.filter(response_id=assignment.response_id, annotator_id=user.pk, criterion_id__in=criteria)
        .values_list("criterion_id", flat=True)
    )
    if criteria - decided:
        raise ValidationError({"assignment": f"{len(criteria - decided)} of {len(criteria)} criteria still undecided"})
    missing = evidence_missing(assignment=assignment)
    if missing:
        raise ValidationError({"evidence": evidence_missing_text(missing)})
    assignment.status = Assignment.SUBMITTED
    assignment.submitted_at = timezone.now()
    assignment.save(update_fields=["status", "submitted_at"])
    return assignment


def user_may_reopen(*, assignment: Assignment, user) -> bool:
    """A checker of the assignment's cohort, or a manager of its project."""
    return CohortMembership.objects.filter(
        cohort_id=assignment.cohort_id, user_id=user.pk, role=CohortMembership.CHECKER
    ).exists() or user_may(project=assignment.project_id, user=user, action="manage")


REOPEN_REASON_MAX = 2000


@transaction.atomic
def assignment_reopen(*, assignment: Assignment, by, reason: str) -> Assignment:
    """Make a submitted or checked assignment editable by its annotator again, saying why (the
    annotator sees the reason on the item and in their list of items)."""
    if not user_may_reopen(assignment=assignment, user=by):
        raise PermissionDenied("Only a checker of the cohort or a manager of the project can reopen")
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": "say why the item is reopened: the annotator is shown the reason"})
    if len(reason) > REOPEN_REASON_MAX:
        raise ValidationError({"reason": f"the reason can be at most {REOPEN_REASON_MAX:,} characters"})
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.status not in (Assignment.SUBMITTED, Assignment.CHECKED):
        raise ValidationError({"assignment": "only a submitted or checked assignment can be reopened"})
    before = assignment.status
    assignment.status = Assignment.IN_PROGRESS
    assignment.reopen_reason, assignment.reopened_by, assignment.reopened_at = reason, by, timezone.now()
    assignment.save(update_fields=["status", "reopen_reason", "reopened_by", "reopened_at"])
    audit_record(project=assignment.project, actor=by, action="reopen", target=f"assignment {assignment.pk}",
                 before={"status": before}, after={"status": assignment.status}, note=reason)
    return assignment


@transaction.atomic
def assignment_time_add(*, assignment: Assignment, seconds: float) -> float:
    """Add reported active (visible, in-use) time, atomically; returns what was added. A report
    adds at most ``MAX_SECONDS_PER_REPORT`` and at most the wall-clock time since the previous
    report, so repeated or inflated reports cannot add more time than has passed."""
    row = Assignment.objects.select_for_update().only("pk", "time_reported_at").get(pk=assignment.pk)
    now = timezone.now()
    cap = MAX_SECONDS_PER_REPORT
    if row.time_reported_at is not None:
        cap = min(cap, max(0.0, (now - row.time_reported_at).total_seconds()))
    seconds = max(0.0, min(float(seconds), cap))
    Assignment.objects.filter(pk=row.pk).update(active_seconds=F("active_seconds") + seconds, time_reported_at=now)
    return seconds


def assignment_mark_started(*, assignment: Assignment) -> None:
    if assignment.status == Assignment.OPEN:
        Assignment.objects.filter(pk=assignment.pk, status=Assignment.OPEN).update(status=Assignment.IN_PROGRESS)
        assignment.status = Assignment.IN_PROGRESS


def project_assign(*, project: Project, cohort_id: int, overlap: int, method: str, seed: int | None, by):
    if not user_may(project=project, user=by, action="manage"):
        raise PermissionDenied("Only the project's managers assign work")
    cohort = Cohort.objects.filter(project=project, pk=cohort_id).select_related("project").first()
    if cohort is None:
        raise ValidationError({"cohort": ValidationError("no such cohort in this project", code=NOT_FOUND)})
    return assignments_create(cohort=cohort, overlap=overlap, method=method, seed=seed, by=by)
