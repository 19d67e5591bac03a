"""The one label write service (annotation.labelwrite): a write guarded by the revision it read,
so a change made elsewhere in between is reported, never overwritten; validation, revision checks
and history on every path; and the progress counter over a case's own rubric or the project-wide one."""
import pytest

from annotation import labelwrite, selectors
from annotation.models import Criterion, Label, LabelHistory, Response
from annotation.selectors import criteria_for_response
from annotation.services import LabelConflict, label_record, label_save
from tests.annotation.conftest import first_assignment


def _admin_edit(assignment, criterion, verdict):
    """A change made outside the labeling page (the admin, an import) to the annotator's label."""
    return label_save(response=assignment.response, criterion=criterion, cohort=assignment.cohort,
                      annotator=assignment.annotator, changed_by=assignment.annotator, verdict=verdict, action="admin",
                      replace=True)


def _edit_right_after_the_read(monkeypatch, assignment, criterion):
    """Make the next label_record meet an admin change between its read and its write: the change
    is stored now, and the service's first read is made to return the label as it was before it
    (what a concurrent transaction on PostgreSQL can see); the write guarded by that revision finds
    no row, and the service reads again."""
    label = Label.objects.get(response=assignment.response, criterion=criterion, annotator=assignment.annotator)
    real_read = labelwrite._assignment_targets
    calls = []

    def stale_first_read(*args, **kwargs):
        targets = real_read(*args, **kwargs)
        calls.append(True)
        if len(calls) == 1:
            targets[0].label = label  # the state before the edit below
        return targets

    _admin_edit(assignment, criterion, "cannot_assess")
    monkeypatch.setattr(labelwrite, "_assignment_targets", stale_first_read)
    return calls


def test_label_record_reports_a_change_made_between_its_read_and_its_write(study, monkeypatch):
    assignment = first_assignment("a1")
    criterion = criteria_for_response(response=assignment.response)[0]
    label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator, verdict="met",
                 expected_revision=0)
    calls = _edit_right_after_the_read(monkeypatch, assignment, criterion)
    with pytest.raises(LabelConflict) as info:
        label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator,
                     verdict="not_met", expected_revision=1)
    assert (info.value.label.verdict, info.value.label.revision) == ("cannot_assess", 2)
    assert len(calls) == 2  # the guarded write found the label changed, and it was read again


def test_a_save_reads_back_what_it_wrote(study):
    assignment = first_assignment("a1")
    ordinal = next(c for c in criteria_for_response(response=assignment.response) if c.kind == Criterion.ORDINAL)
    _, criterion, label = label_record(assignment_id=assignment.pk, criterion_id=ordinal.pk, user=assignment.annotator,
                                       option_label="ok", rationale="fine")
    assert criterion.options[1] == {"label": "ok", "value": 0.5, "na": False}  # JSON decoded, not text
    stored = Label.objects.get(pk=label.pk)
    for field in ("verdict", "option_label", "value", "rationale", "evidence", "revision", "rubric_version_id", "cohort_id"):
        assert getattr(label, field) == getattr(stored, field), field
    assert stored.value == 0.5 and stored.assignment_id == assignment.pk
    [entry] = LabelHistory.objects.filter(label=stored)
    assert entry.old is None and entry.new["option"] == "ok" and entry.action == "annotate"


@pytest.mark.django_db
def test_progress_counts_over_own_and_project_wide_rubrics(mini_project):
    for response in Response.objects.filter(project=mini_project):
        rubric = {c.pk for c in criteria_for_response(response=response)}
        for annotator_id in set(Label.objects.filter(response=response).values_list("annotator_id", flat=True)):
            decided = Label.objects.filter(response=response, annotator_id=annotator_id, criterion_id__in=rubric).count()
            assert selectors.progress_counts(response_id=response.pk, annotator_id=annotator_id) == (decided, len(rubric))
    shared_case_response = Response.objects.get(project=mini_project, external_id="r3")  # case c2: project rubric
    assert selectors.progress_counts(response_id=shared_case_response.pk, annotator_id=0) == (0, 2)
    own_case_response = Response.objects.get(project=mini_project, external_id="r1")  # case c1: its own 3 criteria
    assert selectors.progress_counts(response_id=own_case_response.pk, annotator_id=0) == (0, 3)


def test_without_a_revision_a_change_made_meanwhile_is_built_upon_not_refused(study, monkeypatch):
    """The API may omit the revision: then, as before, the click applies on top of whatever is stored."""
    assignment = first_assignment("a1")
    criterion = criteria_for_response(response=assignment.response)[0]
    label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator, verdict="met",
                 rationale="first")
    _edit_right_after_the_read(monkeypatch, assignment, criterion)
    _, _, label = label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator,
                               verdict="not_met")
    stored = Label.objects.get(pk=label.pk)
    assert (stored.verdict, stored.rationale, stored.revision) == ("not_met", "first", 3)
    history = list(LabelHistory.objects.filter(label=stored).order_by("id").values_list("action", "old", "new"))
    assert [h[0] for h in history] == ["annotate", "admin", "annotate"]
    assert history[2][1]["verdict"] == "cannot_assess" and history[2][2]["verdict"] == "not_met"


def test_an_update_records_the_old_state_decoded(study):
    assignment = first_assignment("a1")
    criterion = criteria_for_response(response=assignment.response)[0]
    label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator, verdict="met",
                 expected_revision=0)
    label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator,
                 evidence_add="An ECG is needed", expected_revision=1)
    label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator,
                 verdict="not_met", expected_revision=2)
    last = LabelHistory.objects.filter(label__criterion=criterion).order_by("-id").first()
    assert last.old == {"verdict": "met", "option": None, "value": None, "rationale": "",
                        "evidence": ["An ECG is needed"], "role": "annotator"}
    assert last.new == {**last.old, "verdict": "not_met"}


def test_a_click_that_changes_nothing_still_starts_an_open_assignment(study):
    assignment = first_assignment("a1")
    criterion = criteria_for_response(response=assignment.response)[0]
    _admin_edit(assignment, criterion, "met")  # e.g. an imported label, before the annotator opened the item
    assert assignment.status == "open"
    history_before = LabelHistory.objects.count()
    _, _, label = label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator,
                               verdict="met", expected_revision=1)
    assert label.revision == 1 and LabelHistory.objects.count() == history_before
    assignment.refresh_from_db()
    assert assignment.status == "in_progress"


@pytest.mark.django_db
def test_a_project_wide_criterion_is_not_part_of_a_case_with_its_own(mini_project):
    from django.http import Http404

    from annotation.models import Assignment, Cohort

    ann = Label.objects.filter(project=mini_project).values_list("annotator", flat=True).first()
    user = Label.objects.filter(annotator_id=ann).first().annotator
    cohort = Cohort.objects.get(project=mini_project, name="group-1")
    own = Response.objects.get(project=mini_project, external_id="r1")  # case c1: its own criteria
    shared = Response.objects.get(project=mini_project, external_id="r3")  # case c2: the project rubric
    Label.objects.filter(annotator=user).delete()
    on_own, on_shared = (Assignment.objects.create(project=mini_project, cohort=cohort, response=r, annotator=user)
                         for r in (own, shared))
    tone, ecg = (Criterion.objects.get(project=mini_project, external_id=x) for x in ("tone", "c1-ecg"))
    with pytest.raises(Http404):
        label_record(assignment_id=on_own.pk, criterion_id=tone.pk, user=user, option_label="good")
    with pytest.raises(Http404):
        label_record(assignment_id=on_shared.pk, criterion_id=ecg.pk, user=user, verdict="met")
    _, _, label = label_record(assignment_id=on_shared.pk, criterion_id=tone.pk, user=user, option_label="good")
    assert label.value == 1.0
    _, _, label = label_record(assignment_id=on_own.pk, criterion_id=ecg.pk, user=user, verdict="met")
    assert label.verdict == "met"
