"""label_record and the checker review: history on every change, optimistic revisions,
idempotent retries, evidence validation, concurrent saves that never overwrite each other, and
the review of one response in one cohort with two annotators (overlap 2)."""
import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.http import Http404

from annotation.assignments import assignment_submit
from annotation.models import Label, LabelHistory
from annotation.reviews import review_complete, review_decision_record
from annotation.selectors import criteria_for_response
from annotation.services import LabelConflict, label_record
from tests.annotation.conftest import build_study, first_assignment


def _setup(study, username="a1"):
    assignment = first_assignment(username)
    return assignment, criteria_for_response(response=assignment.response), study.users[username]


def test_every_change_is_in_history_with_revisions(study):
    assignment, criteria, a1 = _setup(study)
    c = criteria[0]
    _, _, label = label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, verdict="met", expected_revision=0)
    assert label.revision == 1
    label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, verdict="not_met", expected_revision=1)
    label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, rationale="because", expected_revision=2)
    _, _, label = label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1,
                               evidence_add="An ECG is needed", expected_revision=3)
    assert (label.verdict, label.rationale, label.evidence, label.revision) == ("not_met", "because", ["An ECG is needed"], 4)
    history = list(LabelHistory.objects.filter(label=label).values_list("old", "new"))
    assert len(history) == 4
    assert history[0][0] is None and history[1][0]["verdict"] == "met" and history[1][1]["verdict"] == "not_met"
    assignment.refresh_from_db()
    assert assignment.status == "in_progress"


def test_stale_revision_is_refused_not_overwritten(study):
    assignment, criteria, a1 = _setup(study)
    c = criteria[0]
    label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, verdict="met", expected_revision=0)
    label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, verdict="not_met", expected_revision=1)
    with pytest.raises(LabelConflict) as info:  # a second tab still at revision 1
        label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, verdict="cannot_assess", expected_revision=1)
    assert info.value.label.verdict == "not_met"
    assert Label.objects.get(criterion=c, annotator=a1).verdict == "not_met"
    with pytest.raises(LabelConflict):  # a first save from a stale tab when the label already exists
        label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, verdict="met", expected_revision=0)


def test_a_retried_save_that_already_arrived_succeeds_without_a_new_revision(study):
    assignment, criteria, a1 = _setup(study)
    c = criteria[0]
    label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, verdict="met", expected_revision=0)
    _, _, label = label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, verdict="met", expected_revision=0)
    assert label.revision == 1 and LabelHistory.objects.filter(label=label).count() == 1
    label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1, evidence_add="Rest afterwards", expected_revision=1)
    _, _, label = label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=a1,
                               evidence_add="Rest afterwards", expected_revision=1)
    assert label.evidence == ["Rest afterwards"] and label.revision == 2


def test_bad_input_changes_nothing(study):
    assignment, criteria, a1 = _setup(study)
    binary, ordinal = criteria[0], criteria[-1]
    with pytest.raises(ValidationError, match="choose a decision first"):
        label_record(assignment_id=assignment.pk, criterion_id=binary.pk, user=a1, rationale="x")
    with pytest.raises(ValidationError, match="not part of the response"):
        label_record(assignment_id=assignment.pk, criterion_id=binary.pk, user=a1, verdict="met", evidence_add="invented")
    with pytest.raises(ValidationError, match="use option"):
        label_record(assignment_id=assignment.pk, criterion_id=ordinal.pk, user=a1, verdict="met")
    with pytest.raises(ValidationError, match="not among the options"):
        label_record(assignment_id=assignment.pk, criterion_id=ordinal.pk, user=a1, option_label="excellent")
    assert not Label.objects.filter(annotator=a1).exists()
    _, _, label = label_record(assignment_id=assignment.pk, criterion_id=ordinal.pk, user=a1, option_label="good")
    assert (label.option_label, label.value) == ("good", 1.0)


def test_criterion_of_another_case_and_other_users_assignment_are_404(study):
    assignment, criteria, a1 = _setup(study)
    other_case = next(r for r in study.responses if r.case_id != assignment.response.case_id)
    foreign = criteria_for_response(response=other_case)[0]
    with pytest.raises(Http404):
        label_record(assignment_id=assignment.pk, criterion_id=foreign.pk, user=a1, verdict="met")
    with pytest.raises(Http404):
        label_record(assignment_id=assignment.pk, criterion_id=criteria[0].pk, user=study.users["a2"], verdict="met")


def _submit_all(assignment, user, decide=None):
    """Decide every criterion (``decide(criterion)`` gives the decision; met / ok by default) and submit."""
    for c in criteria_for_response(response=assignment.response):
        kwargs = decide(c) if decide else ({"verdict": "met"} if c.kind == "binary" else {"option_label": "ok"})
        label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=user, rationale=f"R-{user.username}-{c.pk}",
                     **kwargs)
    assignment_submit(assignment=assignment, user=user)


def _pair(study):
    """Both group-1 assignments of one response (overlap 2), and the response's criteria."""
    from annotation.models import Assignment

    a1 = first_assignment("a1")
    a2 = Assignment.objects.get(response=a1.response, annotator=study.users["a2"])
    return a1, a2, criteria_for_response(response=a1.response)


@pytest.fixture
def pair_study(db):
    return build_study(slug="pair", overlap=2, annotators=(("a1", "a2"), ("b1", "b2")))


def test_checker_confirms_overrides_and_completes(study):
    assignment, criteria, a1 = _setup(study)
    chk1 = study.users["chk1"]
    response = assignment.response.pk
    with pytest.raises(Http404):  # not submitted yet: not in the review queue
        review_decision_record(response_id=response, criterion_id=criteria[0].pk, user=chk1)
    _submit_all(assignment, a1)
    with pytest.raises(Http404):  # the other cohort's checker
        review_decision_record(response_id=response, criterion_id=criteria[0].pk, user=study.users["chk2"])
    with pytest.raises(ValidationError, match="needs a note"):
        review_decision_record(response_id=response, criterion_id=criteria[0].pk, user=chk1, verdict="not_met")
    _, _, override = review_decision_record(response_id=response, criterion_id=criteria[0].pk, user=chk1,
                                            verdict="not_met", note="ECG not actually recommended")
    assert (override.role, override.verdict, override.annotator_id, override.cohort_id, override.assignment_id) == (
        "checker", "not_met", chk1.pk, assignment.cohort_id, None)
    entry = LabelHistory.objects.get(label=override)
    assert entry.action == "override" and "ECG not actually recommended" in entry.note and "a1: met" in entry.note
    review_complete(response_id=response, user=chk1)
    checker_labels = Label.objects.filter(response=assignment.response, role="checker")
    assert checker_labels.count() == len(criteria)
    assert {label.verdict or label.option_label for label in checker_labels if label.criterion_id != criteria[0].pk} == {"met", "ok"}
    assignment.refresh_from_db()
    assert assignment.status == "checked" and assignment.checked_by_id == chk1.pk
    # the annotator's own labels are untouched
    assert Label.objects.get(criterion=criteria[0], annotator=a1).verdict == "met"
    with pytest.raises(ValidationError, match="reopen"):
        review_decision_record(response_id=response, criterion_id=criteria[0].pk, user=chk1, verdict="met")


def test_review_with_two_annotators_is_one_item_with_one_checker_label_per_criterion(pair_study):
    a1, a2, criteria = _pair(pair_study)
    chk1, response = pair_study.users["chk1"], a1.response.pk
    _submit_all(a1, pair_study.users["a1"])
    with pytest.raises(ValidationError, match="waiting for a2"):  # one annotator still labelling
        review_decision_record(response_id=response, criterion_id=criteria[0].pk, user=chk1)
    # a2 disagrees on the first criterion and the ordinal one, agrees elsewhere
    _submit_all(a2, pair_study.users["a2"],
                decide=lambda c: {"verdict": "not_met" if c.pk == criteria[0].pk else "met"} if c.kind == "binary"
                else {"option_label": "good"})
    with pytest.raises(ValidationError, match="disagree"):  # nothing shared to confirm
        review_decision_record(response_id=response, criterion_id=criteria[0].pk, user=chk1)
    with pytest.raises(ValidationError, match="need your decision: #1, #4"):
        review_complete(response_id=response, user=chk1)
    assert not Label.objects.filter(role="checker").exists()  # the refusal wrote nothing

    _, _, resolved = review_decision_record(response_id=response, criterion_id=criteria[0].pk, user=chk1, verdict="met")
    assert LabelHistory.objects.get(label=resolved).action == "resolve"  # no note needed to resolve
    review_decision_record(response_id=response, criterion_id=criteria[-1].pk, user=chk1, option_label="good",
                           note="warmer than ok")
    review_complete(response_id=response, user=chk1)
    a1.refresh_from_db()
    a2.refresh_from_db()
    assert a1.status == a2.status == "checked"
    checker = Label.objects.filter(response_id=response, role="checker")
    assert checker.count() == len(criteria) and {label.cohort_id for label in checker} == {a1.cohort_id}
    decided = {label.criterion_id: label.verdict or label.option_label for label in checker}
    assert decided[criteria[0].pk] == "met" and decided[criteria[-1].pk] == "good"
    # evidence and rationale of the cohort label: the checker's note, the agreeing annotators' quotes
    assert checker.get(criterion=criteria[-1]).rationale == "warmer than ok"


def test_a_second_checker_changes_the_same_cohort_label(pair_study):
    from django.contrib.auth import get_user_model

    from annotation.models import Cohort, CohortMembership

    User = get_user_model()

    a1, a2, criteria = _pair(pair_study)
    _submit_all(a1, pair_study.users["a1"])
    _submit_all(a2, pair_study.users["a2"])
    cohort = Cohort.objects.get(pk=a1.cohort_id)
    second = User.objects.create_user(username="chk1b", password="x")
    CohortMembership.objects.create(project=cohort.project, cohort=cohort, user=second, role="checker")
    review_decision_record(response_id=a1.response_id, criterion_id=criteria[0].pk, user=pair_study.users["chk1"])
    _, _, label = review_decision_record(response_id=a1.response_id, criterion_id=criteria[0].pk, user=second,
                                         verdict="not_met", note="both missed the contraindication")
    assert Label.objects.filter(response_id=a1.response_id, criterion=criteria[0], role="checker").count() == 1
    assert (label.annotator_id, label.verdict, label.revision) == (second.pk, "not_met", 2)
    assert [h.action for h in label.history.order_by("id")] == ["confirm", "override"]
    assert [h.changed_by_id for h in label.history.order_by("id")] == [pair_study.users["chk1"].pk, second.pk]


@pytest.mark.django_db(transaction=True)
def test_concurrent_saves_from_two_tabs_and_two_annotators_lose_nothing():
    if connection.vendor == "sqlite":
        pytest.skip("the in-memory SQLite test database locks whole tables across threads; run with DATABASE_URL=postgres://...")
    study = build_study(slug="conc", n_cases=1, n_criteria=12, with_ordinal=False, overlap=2, annotators=(("a1", "a2"),))
    users = [study.users["a1"], study.users["a2"]]
    assignments = {u.pk: first_assignment(u.username) for u in users}
    criteria = criteria_for_response(response=assignments[users[0].pk].response)
    errors, barrier = [], threading.Barrier(4)

    def tab(user, verdict):
        try:
            barrier.wait()
            for c in criteria:
                for attempt in range(50):
                    current = Label.objects.filter(criterion=c, annotator=user).first()
                    try:
                        label_record(assignment_id=assignments[user.pk].pk, criterion_id=c.pk, user=user,
                                     verdict=verdict, expected_revision=current.revision if current else 0)
                        break
                    except LabelConflict:
                        continue
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=tab, args=(u, v)) for u in users for v in ("met", "not_met")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for user in users:
        labels = Label.objects.filter(annotator=user, response=assignments[user.pk].response)
        assert labels.count() == len(criteria)
        for label in labels:
            # every revision has exactly one history row: nothing was overwritten unrecorded
            assert label.history.count() == label.revision
            assert label.verdict in ("met", "not_met")
