"""Seeding hidden check items: the rate, only responses with gold that the annotator never had, a
draw the seed repeats, idempotence, interleaving among the items not started (ids and positions in
queue order), the audit event, and the refusals."""
import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotation.assignments import assignments_create
from annotation.models import Assignment, AuditEvent, CohortMembership, Label, Project
from grading.goldcheck.rules import check_target
from grading.goldcheck.selectors import gold_response_ids
from grading.goldcheck.services import checks_seed, quality_settings_update
from tests.grading.goldcheck.conftest import label_all


def _rate(study, rate: float) -> Project:
    quality_settings_update(project=study.project, data={"check_rate": rate}, by=study.manager)
    study.project.refresh_from_db()
    return study.project


def _queue(username: str) -> list[Assignment]:
    return list(Assignment.objects.filter(annotator__username=username).order_by("position", "pk"))


@pytest.mark.parametrize(("regular", "rate", "checks"), [(10, 0.0, 0), (10, 0.2, 2), (10, 0.5, 10), (4, 0.2, 1), (0, 0.5, 0)])
def test_the_target_makes_checks_the_rate_of_the_whole_queue(regular, rate, checks):
    assert check_target(regular=regular, rate=rate) == checks


def test_seeding_draws_gold_responses_the_annotator_never_had_at_the_rate(gold_study):
    project = _rate(gold_study, 0.2)
    gold = gold_response_ids(project=project)
    assert len(gold) == 40  # x1 and y1 agree everywhere
    result = checks_seed(project=project, by=gold_study.manager, seed=3)
    assert result["per_annotator"] == {"careful": 2, "careless": 2}  # x1 and y1 had every gold response already
    for name in ("careful", "careless"):
        queue = _queue(name)
        checks = [a for a in queue if a.is_check]
        regular = [a for a in queue if not a.is_check]
        assert len(checks) == 2 and len(regular) == 10
        assert {a.response_id for a in checks} <= gold
        assert not {a.response_id for a in checks} & {a.response_id for a in regular}
        assert [a.position for a in queue] == list(range(12))  # one queue, gapless
        assert all(a.cohort_id == gold_study.cohorts[0].pk and a.status == Assignment.OPEN for a in checks)


def test_the_annotator_who_labelled_every_gold_response_gets_none(gold_study):
    """x1 labelled all 40 responses (every gold response is theirs already): nothing to draw."""
    project = _rate(gold_study, 0.5)
    checks_seed(project=project, by=gold_study.manager, seed=0)
    assert not Assignment.objects.filter(annotator__username__in=["x1", "y1"], is_check=True).exists()


def test_seeding_is_idempotent_and_the_seed_repeats_the_draw(gold_study):
    project = _rate(gold_study, 0.3)
    first = checks_seed(project=project, by=gold_study.manager, seed=11)
    drawn = sorted(Assignment.objects.filter(is_check=True).values_list("annotator__username", "response_id"))
    again = checks_seed(project=project, by=gold_study.manager, seed=11)
    assert first["created"] == 8 and again["created"] == 0
    assert sorted(Assignment.objects.filter(is_check=True).values_list("annotator__username", "response_id")) == drawn
    assert AuditEvent.objects.filter(project=project, action="check_seed").count() == 1
    event = AuditEvent.objects.get(project=project, action="check_seed")
    assert event.after["per_annotator"] == {"careful": 4, "careless": 4} and event.after["seed"] == 11
    # The same seed on a fresh copy of the state draws the same responses.
    Assignment.objects.filter(is_check=True).delete()
    checks_seed(project=project, by=gold_study.manager, seed=11)
    assert sorted(Assignment.objects.filter(is_check=True).values_list("annotator__username", "response_id")) == drawn


def test_checks_are_interleaved_among_untouched_items_with_ids_in_queue_order(gold_study):
    project = _rate(gold_study, 0.5)
    started = _queue("careful")[:3]
    for assignment in started:
        label_all(assignment)  # submitted: these stay where they are, ids and all
    checks_seed(project=project, by=gold_study.manager, seed=5)
    queue = _queue("careful")
    assert [a.pk for a in queue[:3]] == [a.pk for a in started]
    ahead = queue[3:]
    assert len(ahead) == 17 and sum(a.is_check for a in ahead) == 10
    assert [a.pk for a in ahead] == sorted(a.pk for a in ahead)  # ids follow positions: no id tells a check apart
    assert any(a.is_check for a in ahead[:8]) and any(not a.is_check for a in ahead[-8:])  # mixed, not appended
    assert min(a.pk for a in ahead) > max(a.pk for a in started)


def test_a_grown_queue_gets_its_share_and_assigning_never_counts_or_repeats_a_check(gold_study):
    project = _rate(gold_study, 0.2)
    checks_seed(project=project, by=gold_study.manager, seed=1)
    checked_responses = set(Assignment.objects.filter(is_check=True).values_list("response_id", flat=True))
    # Top group-1 up to overlap 2 over every response: a check item neither fills the overlap nor is given twice.
    created = assignments_create(cohort=gold_study.cohorts[0], overlap=2, seed=0)
    assert created
    group_1 = set(CohortMembership.objects.filter(cohort=gold_study.cohorts[0], role="annotator").values_list("user_id", flat=True))
    for response_id in checked_responses:
        regular = Assignment.objects.filter(response_id=response_id, cohort=gold_study.cohorts[0], is_check=False)
        # Filled up to 2 by the members who do not hold it as a check item (careful and careless may both have
        # drawn it: the draw is seeded by the project's and the annotator's ids, which differ from run to run on
        # PostgreSQL, whose sequences no test resets; then only x1 may hold it regularly).
        checking = set(Assignment.objects.filter(response_id=response_id, is_check=True).values_list("annotator_id", flat=True))
        assert regular.count() == min(2, len(group_1 - checking)) >= 1
        holders = list(Assignment.objects.filter(response_id=response_id).values_list("annotator_id", flat=True))
        assert len(holders) == len(set(holders))
    before = Assignment.objects.filter(is_check=True).count()
    result = checks_seed(project=project, by=gold_study.manager, seed=1)
    assert result["created"] > 0 and Assignment.objects.filter(is_check=True).count() == before + result["created"]
    for name in ("careful", "careless"):
        queue = _queue(name)
        regular = sum(not a.is_check for a in queue)
        assert sum(a.is_check for a in queue) == min(check_target(regular=regular, rate=0.2), 40 - regular)


def test_never_a_response_the_annotator_labelled_outside_an_assignment(gold_study):
    """A label without an assignment (imported, or a manager's) marks the response as the annotator's too."""
    project = _rate(gold_study, 0.5)
    careful = gold_study.users["careful"]
    x1_labels = Label.objects.filter(annotator__username="x1", response__in=gold_study.responses[:30])
    Label.objects.bulk_create([Label(project=project, response_id=x.response_id, criterion_id=x.criterion_id,
                                     rubric_version_id=x.rubric_version_id, cohort_id=x.cohort_id, annotator=careful,
                                     verdict=x.verdict) for x in x1_labels.filter(response__in=gold_study.responses[:25])])
    checks_seed(project=project, by=gold_study.manager, seed=0)
    drawn = set(Assignment.objects.filter(annotator=careful, is_check=True).values_list("response_id", flat=True))
    assert drawn == {r.pk for r in gold_study.responses[25:30]}  # only five gold responses left for them


def test_refusals_change_nothing(gold_study):
    project = gold_study.project
    with pytest.raises(ValidationError, match="rate above 0"):
        checks_seed(project=project, by=gold_study.manager, seed=0)
    with pytest.raises(PermissionDenied):
        checks_seed(project=_rate(gold_study, 0.2), by=gold_study.users["careful"], seed=0)
    with pytest.raises(ValidationError, match="check-item rate must be from 0 to 0.5"):
        quality_settings_update(project=project, data={"check_rate": 0.9}, by=gold_study.manager)
    with pytest.raises(ValidationError, match="whole number"):
        quality_settings_update(project=project, data={"check_window": 2.5}, by=gold_study.manager)
    assert not Assignment.objects.filter(is_check=True).exists()
    project.refresh_from_db()
    assert project.check_rate == 0.2 and project.check_window == 20
