"""The adjudication queue's counts of what the cohorts decided are kept and brought up to date
response by response (``_counted_disputes``): after each kind of change (a label saved, an
assignment submitted or reopened, a label deleted, a label written outside the write service) only
the responses it touched are counted again, and the result is the count of the whole project made
from scratch; an assignment made counts its response again, an assignment removed or a change of
what the counts rest on counts the whole project again, and a change the counts do not read (an
adjudication) counts nothing."""
from datetime import timedelta

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.assignments import assignment_reopen, assignment_submit
from annotation.labels.write import labels_delete
from annotation.models import Assignment, Cohort, CohortMembership, Criterion, Label, Response
from annotation.selectors import labels_draft_count
from annotation.services import label_record, label_save
from grading import selectors
from grading.adjudication.services import adjudication_record
from grading.reports import adjudication_queue as queue_module
from grading.selectors import fingerprint
from grading.sources import project_sources
from tests.grading import test_decision_consistency as consistency
from tests.grading import test_drafts as drafts

User = get_user_model()
every_kind = consistency.every_kind  # the project of every decision kind, as a fixture here too


def normal(counted: selectors.CohortDisputes) -> tuple:
    """The counts, in an order that does not depend on how they were put together."""
    pairs = counted.pairs.groupby(["response_id", "verdict_a", "unresolved_a", "verdict_b", "unresolved_b"],
                                  dropna=False)["n"].sum()
    return (sorted(map(tuple, counted.disputed.to_numpy().tolist())),
            sorted((tuple("-" if pd.isna(x) else x for x in key), int(n)) for key, n in pairs.items()),
            sorted(counted.fallback),
            sorted(map(tuple, counted.draft_counts.to_numpy().tolist())))


class Counting:
    """The queue's counts of ``project``, recording each count it makes (None: the whole project)."""

    def __init__(self, project, monkeypatch):
        self.project, self.calls = project, []
        original = selectors.cohort_disputes

        def counting(**kwargs):
            self.calls.append(None if kwargs.get("response_ids") is None else set(kwargs["response_ids"]))
            return original(**kwargs)

        monkeypatch.setattr(selectors, "cohort_disputes", counting)
        self.scratch = original

    def __call__(self):
        self.calls.clear()
        cohorts = project_sources(project=self.project)["cohorts"][:2]
        counted = queue_module._counted_disputes(project=self.project, cohorts=cohorts)
        pair = [c.obj for c in cohorts]
        assert normal(counted) == normal(self.scratch(project=self.project, a=pair[0], b=pair[1]))
        return counted


@pytest.fixture
def exact(monkeypatch):
    """No margin: the changed responses found are exactly those changed since the last count."""
    monkeypatch.setattr(fingerprint, "TIME_MARGIN", timedelta(0))


def test_each_change_counts_only_its_response_again(every_kind, monkeypatch, clock, exact):
    project = every_kind
    g1 = Cohort.objects.get(project=project, name="g1")
    r1, r2, r3 = Response.objects.filter(project=project).order_by("pk")[:3]
    user = User.objects.create_user("a8")
    CohortMembership.objects.create(project=project, cohort=g1, user=user, role="annotator")
    assignment = Assignment.objects.create(project=project, cohort=g1, response=r1, annotator=user)
    clock()
    count = Counting(project, monkeypatch)

    count()
    assert count.calls == [None]  # nothing kept yet: the whole project
    clock()
    count()
    assert count.calls == []  # nothing changed: brought up to date without counting anything
    clock()
    count()
    assert count.calls == []  # and now well after the newest change: taken as it is

    # Draft labels on r1: nothing decided changes, the drafts are counted.
    for criterion in Criterion.objects.filter(rubric_version=r1.case.rubric_version):
        first = Label.objects.filter(response=r1, criterion=criterion, cohort=g1, role="annotator").first()
        label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=user, expected_revision=0,
                     **drafts._opposite(criterion, first))
    clock()
    counted = count()
    assert count.calls == [{r1.pk}] and counted.drafts == labels_draft_count(project=project) > 0

    clock()
    assignment_submit(assignment=assignment, user=user)  # the drafts turn final
    clock()
    submitted = count()
    assert count.calls == [{r1.pk}] and submitted.drafts == 0
    assert normal(submitted) != normal(counted)

    clock()
    manager = User.objects.create_superuser("boss")
    assignment_reopen(assignment=Assignment.objects.get(pk=assignment.pk), by=manager, reason="one more look")
    clock()
    assert normal(count()) == normal(counted) and count.calls == [{r1.pk}]

    clock()
    labels_delete(label_ids=list(Label.objects.filter(response=r2, role="annotator").values_list("pk", flat=True)[:3]),
                  user=None, note="a test")
    clock()
    count()
    assert count.calls == [{r2.pk}]

    clock()
    label = Label.objects.filter(response=r3, role="annotator").first()  # written past the write service
    Label.objects.create(project=project, response=r3, criterion=label.criterion, rubric_version=label.rubric_version,
                         cohort=label.cohort, annotator=User.objects.create_user("late"), verdict="cannot_assess")
    clock()
    count()
    assert count.calls == [{r3.pk}]

    clock()
    adjudication_record(response=r3, criterion=label.criterion, user=None, verdict="met")
    clock()
    count()
    clock()
    count()
    assert count.calls == []

    # An assignment made for r2 turns g1's checker labels there into drafts (a review is under way):
    # that response is counted again, not the whole project.
    clock()
    made = Assignment.objects.create(project=project, cohort=g1, response=r2, annotator=user)
    clock()
    count()
    assert count.calls == [{r2.pk}]

    # An assignment removed leaves nothing that names its response: the whole project.
    clock()
    made.delete()
    clock()
    count()
    assert count.calls == [None]



def test_right_after_a_change_the_kept_counts_are_brought_up_to_date_until_it_has_settled(every_kind, monkeypatch, clock):
    """A change may commit a moment after its ids were taken: until the counts were made well after
    the newest change, each request counts again the responses of the latest changes (with the
    margins), and once they have settled it takes them as they are."""
    project = every_kind
    count = Counting(project, monkeypatch)
    count()
    clock()
    label = Label.objects.filter(project=project, role="annotator", verdict__in=["met", "not_met"]).order_by("pk").first()
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, replace=True, verdict="not_met" if label.verdict == "met" else "met")
    count()
    assert count.calls and label.response_id in count.calls[0]
    count()
    assert count.calls and label.response_id in count.calls[0]  # the same moment: not settled yet
    clock(queue_module.SETTLED.total_seconds() + 1)
    count()
    assert count.calls  # made after the change had settled; the next is taken as it is
    count()
    assert count.calls == []


def test_the_margin_reaches_back_past_the_newest_ids(every_kind):
    """A change with an id below the newest one seen but stamped shortly before the mark (it may have
    committed after), or an assignment submitted then, is among the responses found changed; a
    check item's status is not (its labels never count)."""
    project = every_kind
    label = Label.objects.filter(project=project, role="annotator", verdict__in=["met", "not_met"]).order_by("pk").first()
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, replace=True, verdict="not_met" if label.verdict == "met" else "met")
    mark = selectors.label_mark(project=project)
    assert selectors.responses_changed(project=project, since=mark, at=timezone.now()) == {label.response_id}
    assert selectors.responses_changed(project=project, since=mark, at=timezone.now() + timedelta(hours=1)) == set()

    later = timezone.now() + timedelta(hours=1)
    response = Response.objects.filter(project=project).order_by("-pk").first()
    check = Assignment.objects.create(project=project, cohort=label.cohort, response=response, annotator=label.annotator,
                                      is_check=True)
    Assignment.objects.filter(pk=check.pk).update(status=Assignment.SUBMITTED, submitted_at=later)
    assert selectors.label_mark(project=project).assignments == mark.assignments
    assert response.pk not in selectors.responses_changed(project=project, since=mark, at=later)
    Assignment.objects.filter(pk=check.pk).update(is_check=False)
    assert response.pk in selectors.responses_changed(project=project, since=mark, at=later)


def test_an_assignment_made_is_placed_on_its_response_and_one_removed_on_none(every_kind):
    """An assignment made since the mark names its response (a check item does not); one that
    the mark did not count though its id is below the mark's newest (it committed after the mark was
    read) or one removed cannot be placed: the whole project is counted again."""
    import dataclasses

    project = every_kind
    label = Label.objects.filter(project=project).select_related("cohort", "annotator").order_by("pk").first()
    response = Response.objects.filter(project=project).order_by("-pk").first()
    later = timezone.now() + timedelta(hours=1)  # past the margin: only what is newer than the mark
    mark = selectors.label_mark(project=project)
    made = Assignment.objects.create(project=project, cohort=label.cohort, response=response, annotator=label.annotator)
    assert selectors.label_mark(project=project) != mark
    assert selectors.responses_changed(project=project, since=mark, at=later) == {response.pk}
    now = selectors.label_mark(project=project)
    assert selectors.responses_changed(project=project, since=now, at=later) == set()
    check = Assignment.objects.create(project=project, cohort=label.cohort, response=response,
                                      annotator=User.objects.create_user("checked-by-gold"), is_check=True)
    assert selectors.responses_changed(project=project, since=now, at=later) == set()
    now = selectors.label_mark(project=project)
    assert now.n_assignments == mark.n_assignments + 2 and now.assignment_id == check.pk
    uncounted = dataclasses.replace(now, n_assignments=now.n_assignments - 1)
    assert selectors.responses_changed(project=project, since=uncounted, at=later) is None
    made.delete()
    assert selectors.responses_changed(project=project, since=now, at=later) is None


def test_a_deleted_label_is_placed_on_its_response_whatever_its_history(every_kind):
    """The earlier history rows of a deleted label name no label any more: its "delete" row names the
    response, and nothing makes the whole project counted again."""
    project = every_kind
    label = Label.objects.filter(project=project, role="annotator").order_by("pk").first()
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, replace=True, verdict="not_met" if label.verdict == "met" else "met")
    mark = selectors.label_mark(project=project)
    labels_delete(label_ids=[label.pk], user=None, note="a test")
    assert selectors.responses_changed(project=project, since=mark, at=timezone.now()) >= {label.response_id}


def test_a_change_right_after_an_import_counts_only_its_response(every_kind, monkeypatch):
    """The project was imported a moment ago, within the margin: its import rows are in the counts
    made since (an import changes what they rest on), so a label saved now counts only its response."""
    project = every_kind
    count = Counting(project, monkeypatch)
    count()
    label = Label.objects.filter(project=project, role="annotator", verdict__in=["met", "not_met"]).order_by("pk").first()
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, replace=True, verdict="not_met" if label.verdict == "met" else "met")
    count()
    assert count.calls == [{label.response_id}]


def test_counts_replaced_by_newer_ones_expire_soon_and_stay_readable_meanwhile(every_kind, monkeypatch, clock, exact):
    """Every refresh that counts a changed response keeps new counts (megabytes at full scale): the ones
    they replace are set to expire a minute later, not a day, and can still be read until then."""
    from django.core.cache import cache

    project = every_kind
    cohorts = project_sources(project=project)["cohorts"][:2]
    key = queue_module._kept_key(project=project, cohorts=cohorts)
    touched = []
    touch = cache.touch
    monkeypatch.setattr(cache, "touch", lambda k, timeout=None: touched.append((k, timeout)) or touch(k, timeout))
    queue_module._counted_disputes(project=project, cohorts=cohorts)
    first = cache.get(key).counts_key
    clock()
    r1 = Response.objects.filter(project=project).order_by("pk").first()
    labels_delete(label_ids=list(Label.objects.filter(response=r1, role="annotator").values_list("pk", flat=True)[:1]),
                  user=None, note="a test")
    clock()
    queue_module._counted_disputes(project=project, cohorts=cohorts)
    second = cache.get(key).counts_key
    assert second != first and touched == [(first, queue_module.SUPERSEDED_SECONDS)]
    assert cache.get(first) is not None  # still there for a reader of the old pointer
    clock()
    queue_module._counted_disputes(project=project, cohorts=cohorts)
    assert cache.get(key).counts_key == second and len(touched) == 1  # nothing changed: nothing replaced


def test_a_pointer_written_last_to_counts_another_request_replaced_keeps_them_alive(monkeypatch):
    """Two requests read the same pointer: B counts a changed response and shortens the old counts'
    life; A, finding nothing changed, writes its pointer to the old counts after B. A's write gives
    them their full life again, so the pointer never names counts about to expire."""
    from django.core.cache import cache

    touched = []
    monkeypatch.setattr(cache, "touch", lambda k, timeout=None: touched.append((k, timeout)))
    mark = None  # what the pointer says of the labels does not matter here
    old = queue_module._Kept(base="b", mark=mark, at=timezone.now(), counts_key="counts-0")
    queue_module._keep("pointer", queue_module._Kept(base="b", mark=mark, at=timezone.now(), counts_key="counts-1"), old)
    queue_module._keep("pointer", queue_module._Kept(base="b", mark=mark, at=timezone.now(), counts_key="counts-0"), old)
    assert touched == [("counts-0", queue_module.SUPERSEDED_SECONDS), ("counts-0", queue_module.CACHE_SECONDS)]
    assert cache.get("pointer").counts_key == "counts-0"
