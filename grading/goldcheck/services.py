"""Writes of annotator quality: the manager's settings, and seeding hidden check items.

``checks_seed`` tops every annotator of the project's cohorts (or of one) up to the project's check
rate: check items are a share ``check_rate`` of the whole queue, so a queue of R regular items holds
round(rate × R / (1 − rate)) of them. Only responses with gold decisions (of cases quality control
kept) that the annotator has never had — no assignment, no label — are drawn, with a random draw
seeded by the seed, the project and the annotator: the same call gives the same draw, and a second
call adds nothing unless the queue grew. Each new check item goes to a random place among the items
the annotator has not touched yet (open, no label, no time); those untouched items are created again
in their new order together with the check items, so ids, positions and creation times follow queue
order exactly as for ordinary assignments and no number tells a check item apart. One audit event
``check_seed`` (per annotator: created, requeued).
"""
import random
from collections import Counter

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from annotation.access import user_may
from annotation.models import Assignment, Cohort, CohortMembership, Label, Project
from annotation.projects import audit_record, project_settings_update

from .rules import MAX_RATE, check_target, quality_settings_clean
from .selectors import gold_response_ids


def quality_settings_update(*, project: Project, data: dict, by) -> dict:
    """Apply the manager's quality settings (audited as a settings change); {field: [old, new]}."""
    if not user_may(project=project, user=by, action="manage"):
        raise PermissionDenied("Only the project's managers change annotator-quality settings")
    return project_settings_update(project=project, settings=quality_settings_clean(data), by=by,
                                   source="annotator quality")


def _untouched(assignments: list[Assignment], labelled: set[int]) -> list[bool]:
    return [a.status == Assignment.OPEN and a.pk not in labelled and not a.active_seconds and a.time_reported_at is None
            for a in assignments]


def _seed_annotator(*, project: Project, cohort: Cohort, user_id: int, gold: set[int], seed: int) -> tuple[int, int]:
    """Top one annotator's queue up to the rate; (check items created, untouched items requeued)."""
    queue = list(Assignment.objects.select_for_update().filter(project=project, annotator_id=user_id)
                 .order_by("position", "pk"))
    regular = sum(1 for a in queue if not a.is_check)
    need = check_target(regular=regular, rate=project.check_rate) - (len(queue) - regular)
    if need <= 0:
        return 0, 0
    held = {a.response_id for a in queue} | set(
        Label.objects.filter(project=project, annotator_id=user_id).values_list("response_id", flat=True).distinct())
    candidates = sorted(gold - held)
    if not candidates:
        return 0, 0
    rng = random.Random(f"check-items:{project.pk}:{user_id}:{seed}")
    picks = rng.sample(candidates, min(need, len(candidates)))
    labelled = set(Label.objects.filter(assignment_id__in=[a.pk for a in queue]).values_list("assignment_id", flat=True))
    untouched = _untouched(queue, labelled)
    # Everything from the first untouched item on is the part of the queue still ahead of the annotator;
    # each entry says whether it is created (again) in its new place.
    start = next((i for i, free in enumerate(untouched) if free), len(queue))
    ahead = [(a, untouched[start + i]) for i, a in enumerate(queue[start:])]
    for response_id in picks:
        new = Assignment(project=project, cohort=cohort, response_id=response_id, annotator_id=user_id, is_check=True)
        ahead.insert(rng.randint(0, len(ahead)), (new, True))
    order = [(a, False) for a in queue[:start]] + ahead
    requeued = [a.pk for a, again in ahead if again and a.pk is not None]
    Assignment.objects.filter(pk__in=requeued).delete()
    keep, fresh = [], []
    for position, (a, again) in enumerate(order):
        if again:
            fresh.append(Assignment(project=project, cohort_id=a.cohort_id, response_id=a.response_id,
                                    annotator_id=user_id, status=Assignment.OPEN, position=position, is_check=a.is_check))
        elif a.position != position:
            a.position = position
            keep.append(a)
    Assignment.objects.bulk_update(keep, ["position"], batch_size=1000)
    Assignment.objects.bulk_create(fresh, batch_size=1000)
    return len(picks), len(requeued)


@transaction.atomic
def checks_seed(*, project: Project, by, seed: int = 0, cohort: Cohort | None = None) -> dict:
    """Seed hidden check items into the queues of the project's annotators (of ``cohort`` only,
    when given) at the project's rate; returns {"created", "requeued", "per_annotator", "eligible"}."""
    if not user_may(project=project, user=by, action="manage"):
        raise PermissionDenied("Only the project's managers seed check items")
    if not 0 < project.check_rate <= MAX_RATE:
        raise ValidationError({"check_rate": "set a check-item rate above 0 first" if project.check_rate <= 0 else
                               f"the check-item rate must be at most {MAX_RATE:g}"})
    cohorts = [cohort] if cohort is not None else list(Cohort.objects.filter(project=project).order_by("position", "name"))
    # Serializes with assignments_create and with another seeding of the same cohorts.
    list(Cohort.objects.select_for_update().filter(pk__in=[c.pk for c in cohorts]).order_by("pk").values_list("pk", flat=True))
    gold = gold_response_ids(project=project)
    created, requeued = Counter(), Counter()
    for c in cohorts:
        members = (CohortMembership.objects.filter(cohort=c, role=CohortMembership.ANNOTATOR)
                   .order_by("user__username").values_list("user_id", "user__username"))
        for user_id, username in members:
            n, moved = _seed_annotator(project=project, cohort=c, user_id=user_id, gold=gold, seed=seed)
            if n:
                created[username], requeued[username] = n, moved
    result = {"created": sum(created.values()), "requeued": sum(requeued.values()),
              "per_annotator": dict(sorted(created.items())), "eligible": len(gold), "seed": seed,
              "rate": project.check_rate}
    if created:
        audit_record(project=project, actor=by, action="check_seed",
                     target=f"cohort {cohort.name}" if cohort is not None else "every cohort",
                     after={**result, "requeued_per_annotator": dict(sorted(requeued.items()))})
    return result
