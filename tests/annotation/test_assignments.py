"""Assignment services: balanced and seeded-random distribution, server-enforced overlap, no
item twice to one annotator, reassign, submit, reopen, active time."""
from collections import Counter

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotation.assignments import (
    MAX_SECONDS_PER_REPORT,
    assignment_reassign,
    assignment_reopen,
    assignment_submit,
    assignment_time_add,
    assignments_create,
)
from annotation.models import Assignment, CohortMembership
from annotation.selectors import criteria_for_response
from annotation.services import label_record
from tests.annotation.conftest import build_study, first_assignment


@pytest.fixture
def big(db):
    # 6 cases x 2 models = 12 responses; cohort 1 has five annotators, nothing assigned yet to cohort 1.
    study = build_study(slug="big", n_cases=6, annotators=(("u1", "u2", "u3", "u4", "u5"), ("v1", "v2")))
    Assignment.objects.filter(project=study.project).delete()
    return study


def test_round_robin_is_balanced_and_respects_overlap(big):
    created = assignments_create(cohort=big.cohorts[0], overlap=2)
    assert len(created) == 24
    per_response = Counter(a.response_id for a in created)
    assert set(per_response.values()) == {2}
    loads = Counter(a.annotator_id for a in created)
    assert max(loads.values()) - min(loads.values()) <= 1
    assert len({(a.response_id, a.annotator_id) for a in created}) == 24
    positions = sorted(a.position for a in created if a.annotator_id == created[0].annotator_id)
    assert positions == list(range(len(positions)))


def test_rerun_only_fills_gaps_and_never_exceeds_overlap(big):
    assignments_create(cohort=big.cohorts[0], overlap=1)
    assert assignments_create(cohort=big.cohorts[0], overlap=1) == []
    more = assignments_create(cohort=big.cohorts[0], overlap=3)
    assert len(more) == 24
    counts = Counter(Assignment.objects.filter(cohort=big.cohorts[0]).values_list("response_id", flat=True))
    assert set(counts.values()) == {3}
    pairs = list(Assignment.objects.filter(cohort=big.cohorts[0]).values_list("response_id", "annotator_id"))
    assert len(pairs) == len(set(pairs))


def test_random_with_seed_is_reproducible(big):
    first = [(a.response_id, a.annotator_id) for a in assignments_create(cohort=big.cohorts[0], overlap=2, method="random", seed=7)]
    Assignment.objects.filter(cohort=big.cohorts[0]).delete()
    again = [(a.response_id, a.annotator_id) for a in assignments_create(cohort=big.cohorts[0], overlap=2, method="random", seed=7)]
    assert first == again
    assert set(Counter(r for r, _ in first).values()) == {2}


def test_overlap_larger_than_cohort_is_refused(big):
    with pytest.raises(ValidationError, match="needs at least 3 annotators"):
        assignments_create(cohort=big.cohorts[1], overlap=3)
    assert not Assignment.objects.filter(cohort=big.cohorts[1]).exists()


def test_checkers_get_no_items(big):
    assignments_create(cohort=big.cohorts[0], overlap=5)
    checkers = CohortMembership.objects.filter(role="checker").values_list("user_id", flat=True)
    assert not Assignment.objects.filter(annotator_id__in=checkers).exists()


def test_reassign_rules(study):
    res, a1, a2, b1 = (study.users[n] for n in ("res", "a1", "a2", "b1"))
    assignment = first_assignment("a1")
    with pytest.raises(PermissionDenied):
        assignment_reassign(assignment=assignment, annotator=a2, by=a1)
    with pytest.raises(ValidationError, match="not an annotator of cohort"):
        assignment_reassign(assignment=assignment, annotator=b1, by=res)
    moved = assignment_reassign(assignment=assignment, annotator=a2, by=res)
    assert moved.annotator_id == a2.pk
    # a2 now holds it; giving a2's other item with the same response is impossible by construction,
    # and an item with saved labels cannot be moved.
    criterion = criteria_for_response(response=moved.response)[0]
    label_record(assignment_id=moved.pk, criterion_id=criterion.pk, user=a2, verdict="met")
    with pytest.raises(ValidationError, match="only an open assignment"):
        assignment_reassign(assignment=moved, annotator=a1, by=res)


def test_reassign_never_gives_the_same_item_twice(db):
    study = build_study(slug="dup", n_cases=1, overlap=2, annotators=(("a1", "a2", "a3"),))
    mine = first_assignment("a1")
    other = Assignment.objects.filter(response=mine.response).exclude(pk=mine.pk).get()
    with pytest.raises(ValidationError, match="already has this item"):
        assignment_reassign(assignment=mine, annotator=other.annotator, by=study.users["res"])


def _decide_all(assignment, user):
    for criterion in criteria_for_response(response=assignment.response):
        kwargs = {"verdict": "met"} if criterion.kind == "binary" else {"option_label": criterion.options[0]["label"]}
        label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=user, **kwargs)


def test_submit_needs_every_criterion_then_reopen(study):
    a1, chk1, chk2, res = (study.users[n] for n in ("a1", "chk1", "chk2", "res"))
    assignment = first_assignment("a1")
    with pytest.raises(ValidationError, match="still undecided"):
        assignment_submit(assignment=assignment, user=a1)
    _decide_all(assignment, a1)
    assert assignment_submit(assignment=assignment, user=a1).status == "submitted"
    criterion = criteria_for_response(response=assignment.response)[0]
    with pytest.raises(ValidationError, match="read-only"):
        label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=a1, verdict="not_met")
    with pytest.raises(PermissionDenied):
        assignment_reopen(assignment=assignment, by=a1, reason="mine")
    with pytest.raises(PermissionDenied):
        assignment_reopen(assignment=assignment, by=chk2, reason="x")  # checker of the other cohort
    with pytest.raises(ValidationError, match="say why the item is reopened"):
        assignment_reopen(assignment=assignment, by=chk1, reason="   ")
    assert Assignment.objects.get(pk=assignment.pk).status == "submitted"
    reopened = assignment_reopen(assignment=assignment, by=chk1, reason="  Check the ECG criterion again ")
    assert (reopened.status, reopened.reopen_reason, reopened.reopened_by) == ("in_progress", "Check the ECG criterion again", chk1)
    label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=a1, verdict="not_met")
    assignment_submit(assignment=assignment, user=a1)
    assert assignment_reopen(assignment=assignment, by=res, reason="Second pass").status == "in_progress"


def test_active_time_is_added_and_capped_by_the_clock(study, monkeypatch):
    """A report adds at most MAX_SECONDS_PER_REPORT and at most the wall-clock time since the last
    report: repeated reports (an annotator replaying the heartbeat) cannot inflate the time."""
    from datetime import timedelta

    from django.utils import timezone

    assignment = first_assignment("a1")
    start = timezone.now()
    clock = {"now": start}
    monkeypatch.setattr("annotation.assignments.timezone.now", lambda: clock["now"])
    added = [assignment_time_add(assignment=assignment, seconds=12.5)]  # the first report: its own cap only
    clock["now"] = start + timedelta(seconds=30)
    added.append(assignment_time_add(assignment=assignment, seconds=10_000))  # 30 s have passed
    added += [assignment_time_add(assignment=assignment, seconds=60) for _ in range(50)]  # replayed at once: nothing
    added.append(assignment_time_add(assignment=assignment, seconds=-5))
    clock["now"] = start + timedelta(minutes=30)
    added.append(assignment_time_add(assignment=assignment, seconds=10_000))  # long after: the per-report cap
    assert added[0] == 12.5 and added[1] == 30 and sum(added[2:53]) == 0
    assert added[-1] == MAX_SECONDS_PER_REPORT
    assignment.refresh_from_db()
    assert assignment.active_seconds == pytest.approx(12.5 + 30 + MAX_SECONDS_PER_REPORT)
