"""Annotator quality: a simulated careless annotator (random decisions) is flagged and a careful one
is not; check labels never reach a cohort decision, gold, a report or the adjudication queue; the
figures (agreement and its drift, kappa with the cohort, time per item); the feedback an annotator
may see."""
import json
import random
from io import StringIO

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.http import Http404

from annotation.models import Assignment, Label
from annotation.reviews import review_complete, review_decision_record
from annotation.selectors import (
    label_check_q,
    label_draft_q,
    label_final_q,
    labels_check_count,
    labels_draft_count,
    review_item_get_for_checker,
    review_queue_for_checker,
    review_queue_rows,
    review_rows,
)
from grading.goldcheck.selectors import annotator_feedback, annotator_quality
from grading.goldcheck.services import checks_seed, quality_settings_update
from grading.selectors import cohort_frames, gold_frame
from tests.grading.goldcheck.conftest import label_all


def _seed(study, **settings):
    quality_settings_update(project=study.project, by=study.manager,
                            data={"check_rate": 0.5, "check_min_items": 10, "check_window": 5,
                                  "check_alert_threshold": 0.8, **settings})
    study.project.refresh_from_db()
    return checks_seed(project=study.project, by=study.manager, seed=7)


def _work(study, *, careless_seed: int = 1) -> None:
    """careful decides everything right; careless at random (regular and check items alike)."""
    rng = random.Random(careless_seed)
    for name in ("careful", "careless"):
        for assignment in Assignment.objects.filter(annotator__username=name).select_related("response", "annotator") \
                .order_by("position"):
            label_all(assignment, careless_rng=rng if name == "careless" else None)


def _decisions(study) -> dict:
    return {"cohorts": cohort_frames(project=study.project).sort_values(["cohort", "response_id", "criterion_id"])
            .reset_index(drop=True).to_json(), "gold": gold_frame(project=study.project).to_json()}


def _report(command: str, *args) -> dict:
    out = StringIO()
    call_command(command, "--project", "gc", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_alert_fires_for_a_careless_annotator_and_not_for_a_careful_one(gold_study):
    _seed(gold_study)
    _work(gold_study)
    rows = {row.username: row for row in annotator_quality(project=gold_study.project)}
    careful, careless = rows["careful"], rows["careless"]
    assert careful.gold.n_items == careless.gold.n_items == 10
    assert careful.gold.n_decisions == 30 and careful.gold.agreement == 1.0 and not careful.alert
    assert careless.gold.agreement < 0.8 and careless.alert
    assert "below 80%" in careless.gold.alert_reason
    assert len(careless.gold.drift) == 10 and careless.drift_items == list(range(1, 11))
    # kappa with the rest of group-1 on the regular items: the careful annotator agrees far better
    assert careful.kappa is not None and careless.kappa is not None and careful.kappa > careless.kappa
    # (where the rest of the cohort ties — x1 against careless — it has no decision, and the pair is left out)
    assert 0 < careful.kappa_n <= 30 and careful.items_submitted == 20
    assert rows["x1"].gold.n_items == 0 and not rows["x1"].alert and rows["y1"].cohort == "group-2"


def test_no_alert_before_the_minimum_of_check_items(gold_study):
    _seed(gold_study, check_min_items=11)
    _work(gold_study)
    careless = next(r for r in annotator_quality(project=gold_study.project) if r.username == "careless")
    assert careless.gold.n_items == 10 and careless.gold.agreement < 0.8 and not careless.alert


def test_check_labels_change_no_decision_gold_report_or_queue(gold_study):
    before = _decisions(gold_study)
    reports_before = {c: _report(c, *a) for c, a in (("agreement", ["--a", "cohort:group-1", "--b", "gold"]),
                                                      ("scores", ["--source", "gold"]))}
    queue_before = _report("adjudication_queue", "--all")
    _seed(gold_study)
    for name in ("careful", "careless"):  # check items only: decided wrongly on purpose, and submitted
        for assignment in Assignment.objects.filter(annotator__username=name, is_check=True).select_related("response"):
            label_all(assignment, careless_rng=random.Random(0))
    labels = Label.objects.filter(project=gold_study.project)
    n_check = labels.filter(label_check_q()).count()
    assert n_check == labels_check_count(project=gold_study.project) == 2 * 10 * 3
    assert labels_draft_count(project=gold_study.project) == 0  # check labels are not drafts either
    final, draft = labels.filter(label_final_q()).count(), labels.filter(label_draft_q()).count()
    assert final + draft + n_check == labels.count()
    assert _decisions(gold_study) == before
    for command, args in (("agreement", ["--a", "cohort:group-1", "--b", "gold"]), ("scores", ["--source", "gold"])):
        after = _report(command, *args)
        assert after["left_out"].pop("check_labels") == n_check
        assert after == reports_before[command], command
    queue = _report("adjudication_queue", "--all")
    assert queue == queue_before


def test_a_checker_never_reviews_a_check_item_and_it_turns_checked_with_the_reviews(gold_study):
    _seed(gold_study)
    _work(gold_study)
    checker = gold_study.users["chk1"]
    check = Assignment.objects.filter(annotator__username="careful", is_check=True).first()
    membership, items = review_queue_for_checker(user=checker, project_id=gold_study.project.pk)
    queue = review_queue_rows(items=items, membership=membership, user=checker)
    checks = set(Assignment.objects.filter(is_check=True).values_list("response_id", "annotator__username"))
    assert queue and not any((row.response_id, name) in checks for row in queue for name in row.annotators)
    # The review of a response x1 labelled (a check response of careful's): careful is not on it.
    item = review_item_get_for_checker(response_id=check.response_id, user=checker)
    assert [a.annotator.username for a in item.assignments] == ["x1"]
    assert all(len(row.votes) == 1 for row in review_rows(item=item))
    # Completing a review of the cohort turns its submitted check items checked, like the annotators' other items.
    regular = Assignment.objects.filter(annotator__username="careful", is_check=False).first()
    item = review_item_get_for_checker(response_id=regular.response_id, user=checker)
    for row in review_rows(item=item):
        if row.needs_choice:
            review_decision_record(response_id=regular.response_id, criterion_id=row.criterion.pk, user=checker,
                                   expected_revision=0, verdict="met")
    review_complete(response_id=regular.response_id, user=checker)
    check.refresh_from_db()
    assert check.status == Assignment.CHECKED


def test_feedback_is_the_annotators_own_up_to_yesterday_and_only_when_allowed(gold_study, monkeypatch):
    import datetime as dt

    from django.utils import timezone

    from grading.goldcheck import selectors

    _seed(gold_study)
    _work(gold_study)
    careless = gold_study.users["careless"]
    with pytest.raises(PermissionDenied):
        annotator_feedback(project=gold_study.project, user=careless)
    with pytest.raises(Http404):
        annotator_feedback(project=gold_study.project, user=gold_study.users["chk1"])
    quality_settings_update(project=gold_study.project, data={"check_feedback": True}, by=gold_study.manager)
    gold_study.project.refresh_from_db()
    today = annotator_feedback(project=gold_study.project, user=careless)
    assert today["enough"] is False and today["agreement"] is None  # everything was submitted today
    monkeypatch.setattr(selectors, "feedback_cutoff", lambda: timezone.localtime() + dt.timedelta(days=1))
    tomorrow = annotator_feedback(project=gold_study.project, user=careless)
    assert tomorrow["enough"] is True and tomorrow["below_threshold"] is True
    assert tomorrow["reference_items_at_least"] == 10 and tomorrow["agreement"] < 0.8
    assert set(tomorrow) == {"as_of", "enough", "reference_items_at_least", "agreement", "recent_agreement",
                             "threshold", "below_threshold"}


def test_deleting_a_check_item_in_the_admin_deletes_its_labels_keeping_their_history(gold_study, client, django_user_model):
    from annotation.models import LabelHistory

    _seed(gold_study)
    _work(gold_study)
    check = Assignment.objects.filter(annotator__username="careless", is_check=True).first()
    labels = list(Label.objects.filter(assignment=check).values_list("pk", flat=True))
    assert len(labels) == 3
    client.force_login(django_user_model.objects.create_superuser("root", password="pw"))
    before = _decisions(gold_study)
    response = client.post(f"/admin/annotation/assignment/{check.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Assignment.objects.filter(pk=check.pk).exists() and not Label.objects.filter(pk__in=labels).exists()
    assert LabelHistory.objects.filter(label_id__in=labels, action="delete").count() == 3
    assert _decisions(gold_study) == before  # left behind without their assignment they would have counted
