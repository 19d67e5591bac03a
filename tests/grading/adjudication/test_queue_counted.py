"""The adjudication queue counted in the database (``selectors.cohort_disputes``) against the
decision frames (``cohort_frames`` and ``gold_decide``) on the same labels: the same queue, item by
item, with the same disputed criteria and case-level MF1. The frames path is the one the queue takes
for responses with option or value labels; forcing every response through it gives the reference."""
import random

import pandas as pd
import pytest
from django.contrib.auth import get_user_model

from annotation.assignments import assignment_submit
from annotation.models import Assignment, Criterion, Label, Project, Response
from annotation.selectors import labels_draft_count
from grading import selectors
from grading.adjudication.services import adjudication_record
from grading.bundles import bundle_import
from grading.reports import adjudication_queue as adjudication_queue_module
from grading.reports.adjudication_queue import adjudication_queue, queue_json
from tests.bundles import write_bundle
from tests.grading import test_drafts as drafts

User = get_user_model()
VERDICTS = ("met", "not_met", "cannot_assess")
every_kind = drafts.every_kind  # the project of every decision kind, as a fixture here too


def random_parts(seed: int, *, third_cohort: bool) -> dict:
    """Two cohorts of two and three annotators with checkers on some items, every verdict, ties,
    unlabelled items, and an ordinal criterion on one case; with ``third_cohort``, a third cohort
    of one annotator on every other response."""
    rng = random.Random(seed)
    cases, responses, labels = [], [], []
    for c in range(4):
        criteria = [{"criterion_id": f"c{c}-k{j}", "text": f"Point {j} of case {c}"} for j in range(6)]
        if c == 3:
            criteria.append({"criterion_id": "c3-tone", "text": "Tone", "kind": "ordinal",
                             "options": [{"label": "poor", "value": 0}, {"label": "good", "value": 1}]})
        cases.append({"case_id": f"c{c}", "prompt": f"Question {c}", "criteria": criteria})
        for m in range(5):
            rid = f"r{c}-{m}"
            responses.append({"response_id": rid, "case_id": f"c{c}", "model": f"model-{m % 3}", "text": f"Answer {rid}"})
            for cohort, annotators in (("g1", ("a1", "a2")), ("g2", ("b1", "b2", "b3")), ("g3", ("d1",))):
                if cohort == "g3" and (m % 2 or not third_cohort):
                    continue
                for criterion in criteria:
                    ordinal = "options" in criterion
                    for annotator in annotators:
                        if rng.random() < 0.15:
                            continue  # this annotator left it unlabelled
                        label = {"response_id": rid, "criterion_id": criterion["criterion_id"], "cohort": cohort,
                                 "annotator": annotator}
                        label.update({"option": rng.choice(["poor", "good"])} if ordinal else
                                     {"verdict": rng.choice(VERDICTS[:2] if rng.random() < 0.8 else VERDICTS)})
                        labels.append(label)
                    if not ordinal and rng.random() < 0.2:
                        labels.append({"response_id": rid, "criterion_id": criterion["criterion_id"], "cohort": cohort,
                                       "annotator": f"{cohort}-checker", "role": "checker",
                                       "verdict": rng.choice(VERDICTS)})
    project = {"slug": f"counted-{seed}", "name": "Counted",
               "cohorts": [{"name": "g1"}, {"name": "g2"}, {"name": "g3"}]}
    return {"project": project, "cases": cases, "responses": responses, "labels": labels, "judgments": []}


def through_frames(monkeypatch, project):
    """The queue with every response decided through the decision frames."""
    everything = frozenset(Response.objects.filter(project=project).values_list("pk", flat=True))
    none = selectors.cohort_disputes(project=project, a=None, b=None)
    with monkeypatch.context() as patch:
        patch.setattr(adjudication_queue_module, "_counted_disputes", lambda **kwargs: selectors.CohortDisputes(
            disputed=none.disputed.iloc[:0], pairs=none.pairs.iloc[:0], fallback=everything, draft_counts=none.draft_counts))
        return adjudication_queue(project=project, filters={"status": "all"})


def as_rows(queue) -> list[tuple]:
    return [(i.external_id, None if i.case_mf1 is None else round(i.case_mf1, 12), i.disputed) for i in queue.items]


@pytest.mark.parametrize("seed, third_cohort", [(1, False), (2, False), (3, True)])
def test_counted_in_the_database_equals_the_decision_frames(db, tmp_path, monkeypatch, seed, third_cohort):
    bundle_import(path=write_bundle(tmp_path / "bundle", random_parts(seed, third_cohort=third_cohort)))
    project = Project.objects.get(slug=f"counted-{seed}")
    cohorts = list(project.cohorts.all())
    counted = selectors.cohort_disputes(project=project, a=cohorts[0], b=cohorts[1])
    # The ordinal case's responses and those the third cohort labelled go through the frames.
    apart = {r.pk for r in Response.objects.filter(project=project)
             if r.case.external_id == "c3" or (third_cohort and int(r.external_id[-1]) % 2 == 0)}
    assert counted.fallback == apart and len(apart) < 20
    assert len(counted.disputed) > 20 and counted.pairs["unresolved_a"].any() and counted.pairs["unresolved_b"].any()
    fast = adjudication_queue(project=project, filters={"status": "all"})
    slow = through_frames(monkeypatch, project)
    assert as_rows(fast) == as_rows(slow)
    assert any(i.case_mf1 is None for i in fast.items) or len({i.case_mf1 for i in fast.items}) > 5
    assert queue_json(fast) == queue_json(slow)


def test_the_hand_worked_queue_is_the_same_through_the_frames(queue_project, monkeypatch):
    fast = adjudication_queue(project=queue_project, filters={"status": "all"})
    assert as_rows(fast) == as_rows(through_frames(monkeypatch, queue_project))


def test_no_labels_no_queue(db, tmp_path):
    parts = random_parts(4, third_cohort=False)
    parts["labels"] = []
    bundle_import(path=write_bundle(tmp_path / "bundle", parts))
    project = Project.objects.get(slug="counted-4")
    counted = selectors.cohort_disputes(project=project, a=None, b=None)
    assert counted.disputed.empty and counted.pairs.empty and not counted.fallback
    assert isinstance(counted.pairs, pd.DataFrame)
    assert adjudication_queue(project=project).items == []


def test_drafts_are_counted_apart_and_decide_nothing(every_kind, monkeypatch):
    """Drafts (an annotator's open work, a checker's review not completed) change no decision of
    the counted queue, which still says how many there are; the frames agree with it."""
    before = as_rows(adjudication_queue(project=every_kind, filters={"status": "all"}))
    made = drafts._drafts(every_kind)
    queue = adjudication_queue(project=every_kind, filters={"status": "all"})
    assert queue.draft_labels == labels_draft_count(project=every_kind) == made["annotator"] + made["checker"] > 0
    assert as_rows(queue) == before
    assert as_rows(through_frames(monkeypatch, every_kind)) == before

    # Handed in, they count: the counted decisions kept in the cache are not used any more.
    for assignment in Assignment.objects.filter(annotator__username__in=["a8", "a9"]):
        assignment_submit(assignment=assignment, user=assignment.annotator)
    submitted = adjudication_queue(project=every_kind, filters={"status": "all"})
    assert submitted.draft_labels == made["checker"] and as_rows(submitted) != before
    assert as_rows(submitted) == as_rows(through_frames(monkeypatch, every_kind))


def test_what_the_cohorts_decided_is_kept_until_a_label_changes(queue_project, clock):
    """Settling an item changes the queue's progress but not the cohorts' counted decisions, which
    the next request takes from the cache; a label imported meanwhile makes its response counted again."""
    first = adjudication_queue(project=queue_project)
    clock()
    adjudication_queue(project=queue_project)  # made well after the newest change: settled
    r2 = Response.objects.get(external_id="r2")
    adjudication_record(response=r2, criterion=Criterion.objects.get(external_id="c1-k0"), user=None, verdict="met")
    calls = []
    original = selectors.cohort_disputes

    def counting(**kwargs):
        calls.append(kwargs)
        return original(**kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(selectors, "cohort_disputes", counting)
        again = adjudication_queue(project=queue_project)
        assert calls == [] and ids(again) == ids(first)
        assert [len(i.adjudicated) for i in again.items if i.external_id == "r2"] == [1]
        label = Label.objects.filter(response=r2, cohort__name="group-2").first()
        Label.objects.create(project=queue_project, response=r2, criterion=label.criterion, rubric_version=label.rubric_version,
                             cohort=label.cohort, annotator=User.objects.create_user("late"), verdict="met")
        adjudication_queue(project=queue_project)
        assert len(calls) == 1 and r2.pk in calls[0]["response_ids"]


def ids(queue) -> list[str]:
    return [item.external_id for item in queue.items]
