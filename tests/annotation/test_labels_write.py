"""The one label write service (annotation.labels): a write guarded by the revision it read,
so a change made elsewhere in between is reported, never overwritten; validation, revision checks
and history on every path; and the progress counter over a case's own rubric or the project-wide one."""
import pytest

from annotation import selectors
from annotation.labels import label_state
from annotation.labels import targets as label_targets
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
    real_read = label_targets.assignment_targets
    calls = []

    def stale_first_read(**kwargs):
        assignment, targets = real_read(**kwargs)
        calls.append(True)
        if len(calls) == 1:
            targets[0].label = label  # the state before the edit below
        return assignment, targets

    _admin_edit(assignment, criterion, "cannot_assess")
    monkeypatch.setattr(label_targets, "assignment_targets", stale_first_read)
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


# --- every path: validation, revisions, history, deletes, cost ------------------------------------


def _label_of(assignment, criterion):
    return Label.objects.get(response=assignment.response, criterion=criterion, annotator=assignment.annotator)


def test_a_change_outside_the_labeling_page_names_its_revision_or_says_it_replaces(study):
    from django.core.exceptions import ValidationError

    assignment = first_assignment("a1")
    criterion = criteria_for_response(response=assignment.response)[0]
    kwargs = {"response": assignment.response, "criterion": criterion, "cohort": assignment.cohort,
              "annotator": assignment.annotator, "changed_by": assignment.annotator, "verdict": "met"}
    with pytest.raises(ValidationError, match="say which revision"):
        label_save(**kwargs)
    assert not Label.objects.filter(criterion=criterion).exists()
    label_save(**kwargs, expected_revision=0)
    with pytest.raises(LabelConflict):
        label_save(**{**kwargs, "verdict": "not_met"}, expected_revision=0)
    label = label_save(**{**kwargs, "verdict": "not_met"}, replace=True, note="bulk fix")
    assert label.revision == 2 and label.history.order_by("-id").first().note == "replace (bulk fix)"


def test_every_path_validates_the_same_things(study):
    from django.core.exceptions import ValidationError

    from annotation.models import Cohort
    from tests.annotation.conftest import build_study

    other = build_study(slug="other")
    assignment = first_assignment("a1")
    criterion = criteria_for_response(response=assignment.response)[0]
    base = {"response": assignment.response, "criterion": criterion, "cohort": assignment.cohort,
            "annotator": assignment.annotator, "changed_by": assignment.annotator, "verdict": "met", "replace": True}
    refusals = [
        ({"evidence": ["Take two aspirins daily."]}, "not part of the response text"),
        ({"rationale": "x" * 5001}, "at most 5,000 characters"),
        ({"evidence": ["An ECG is needed" + " " * 2000 + "x"]}, "at most 2,000 characters"),
        ({"time_spent_seconds": -1.0}, "time spent"),
        ({"cohort": Cohort.objects.get(project=other.project, name="group-1")}, "not one of this response's project"),
        ({"annotator": other.users["outsider"]}, "not a member of this cohort"),
        ({"role": "checker"}, "only a checker"),
        ({"verdict": "maybe"}, "not one of"),
    ]
    for change, message in refusals:
        with pytest.raises(ValidationError, match=message):
            label_save(**{**base, **change})
    assert not Label.objects.filter(criterion=criterion).exists() and not LabelHistory.objects.exists()
    label = label_save(**base, evidence=["An ECG is needed"], rationale="quoted", time_spent_seconds=12.5)
    assert (label.evidence, label.time_spent_seconds) == (["An ECG is needed"], 12.5)


def test_the_single_label_api_takes_an_ordinal_value(study, login_client):
    assignment = first_assignment("a1")
    tone = next(c for c in criteria_for_response(response=assignment.response) if c.kind == Criterion.ORDINAL)
    client = login_client("a1")
    answer = client.post("/api/labels/", {"assignment": assignment.pk, "criterion": tone.pk, "value": 0.75,
                                          "revision": 0}, content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert (answer.json()["value"], _label_of(assignment, tone).value) == (0.75, 0.75)
    refused = client.post("/api/labels/", {"assignment": assignment.pk, "criterion": tone.pk, "value": 7,
                                           "revision": 1}, content_type="application/json")
    assert refused.status_code == 400 and _label_of(assignment, tone).value == 0.75


@pytest.mark.django_db
def test_an_import_writes_one_history_row_per_label(mini_project):
    labels = Label.objects.filter(project=mini_project)
    history = LabelHistory.objects.filter(project=mini_project)
    assert history.count() == labels.count() > 0
    assert set(history.values_list("action", flat=True)) == {"import"}
    label = labels.filter(option_label__isnull=False).first()
    entry = history.get(label=label)
    assert entry.old is None and entry.new == label_state(label) and entry.note.startswith("import of")


def test_an_admin_delete_keeps_the_history_and_says_who_deleted_what(study, client):
    from django.contrib.auth import get_user_model

    assignment = first_assignment("a1")
    criterion = criteria_for_response(response=assignment.response)[0]
    label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator, verdict="met",
                 rationale="seen", expected_revision=0)
    label = _label_of(assignment, criterion)
    admin = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(admin)
    answer = client.post(f"/admin/annotation/label/{label.pk}/delete/", {"post": "yes"})
    assert answer.status_code == 302 and not Label.objects.filter(pk=label.pk).exists()
    rows = list(LabelHistory.objects.filter(label_id=label.pk).order_by("id"))
    assert [r.action for r in rows] == ["annotate", "delete"]
    assert rows[1].changed_by == admin and rows[1].new is None
    assert rows[1].old["verdict"] == "met" and rows[1].old["annotator"] == "a1" and rows[1].old["rationale"] == "seen"


def test_an_admin_edit_over_a_newer_click_is_refused(study, client):
    import re

    from django.contrib.auth import get_user_model

    assignment = first_assignment("a1")
    criterion = criteria_for_response(response=assignment.response)[0]
    label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator, verdict="met",
                 expected_revision=0)
    label = _label_of(assignment, criterion)
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    url = f"/admin/annotation/label/{label.pk}/change/"
    form = client.get(url).content.decode()
    seen = re.search(r'name="seen_revision" value="(\d+)"', form).group(1)
    assert seen == "1"
    # Meanwhile the annotator changes their mind on the labeling page.
    label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator,
                 verdict="not_met", expected_revision=1)
    post = {"project": label.project_id, "response": label.response_id, "criterion": label.criterion_id,
            "cohort": label.cohort_id, "annotator": label.annotator_id, "role": "annotator", "verdict": "cannot_assess",
            "rationale": "", "evidence": "[]", "seen_revision": seen, "assignment": label.assignment_id,
            "history-TOTAL_FORMS": "0", "history-INITIAL_FORMS": "0"}
    answer = client.post(url, post)
    assert answer.status_code == 200 and "changed since you opened it" in answer.content.decode()
    assert (_label_of(assignment, criterion).verdict, _label_of(assignment, criterion).revision) == ("not_met", 2)
    answer = client.post(url, {**post, "seen_revision": "2"})  # reloaded: now it applies, with its history row
    assert answer.status_code == 302
    stored = _label_of(assignment, criterion)
    assert (stored.verdict, stored.revision) == ("cannot_assess", 3)
    assert stored.history.order_by("-id").first().action == "admin"


@pytest.mark.django_db(transaction=True)
def test_a_batch_costs_the_same_few_queries_whatever_its_size(login_client):
    """Through the API as a client calls it, outside any test transaction (so no savepoints)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.annotation.conftest import build_study

    build_study(n_cases=1, n_criteria=30, with_ordinal=False)
    assignment = first_assignment("a1")
    criteria = criteria_for_response(response=assignment.response)
    assert len(criteria) == 30
    client = login_client("a1")
    counts = {}
    for n, verdict in ((1, "met"), (30, "not_met")):
        # The second batch changes criterion 0 (saved by the first: revision 1) and creates the others.
        body = [{"criterion": c.pk, "verdict": verdict, "revision": 1 if n == 30 and i == 0 else 0}
                for i, c in enumerate(criteria[:n])]
        with CaptureQueriesContext(connection) as queries:
            answer = client.post(f"/api/assignments/{assignment.pk}/labels/", body, content_type="application/json")
        assert answer.status_code == 200, answer.content
        counts[n] = len(queries)
    print("queries per batch", counts)
    assert counts[30] <= 12 and counts[30] - counts[1] <= 1, counts  # 30 inserts and one update: one statement more
    assert Label.objects.filter(annotator=assignment.annotator).count() == 30
    assert LabelHistory.objects.filter(label__annotator=assignment.annotator).count() == 31

    with CaptureQueriesContext(connection) as queries:  # one single save, an update with its history row
        answer = client.post("/api/labels/", {"assignment": assignment.pk, "criterion": criteria[5].pk, "verdict": "met",
                                              "revision": 1}, content_type="application/json")
    assert answer.status_code == 200 and len(queries) <= 8, [q["sql"][:80] for q in queries.captured_queries]
