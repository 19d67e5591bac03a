"""Drafts never count: labels of an assignment still open or in progress, and a checker's decisions
on a review not completed yet, change no decision anywhere (cohort decisions, every report, the
adjudication queue, gold, the side-by-side page, the API), and every report says how many drafts
it left out. Submitting the assignment makes them count, and the cached reports follow. Labels of
hidden check items never count, submitted or not, and are no drafts either."""
import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import Q

from annotation.assignments import assignment_submit
from annotation.models import Assignment, Cohort, CohortMembership, Criterion, Label, Response
from annotation.reviews import review_decision_record
from annotation.selectors import (
    label_check_q,
    label_draft_q,
    label_final_q,
    labels_draft_count,
    review_item_get_for_checker,
    review_rows,
)
from annotation.services import label_record
from grading.selectors import cohort_frame
from tests.grading import test_decision_consistency as consistency
from tests.grading.test_decision_consistency import SLUG, _from_api, _from_pairs, _from_side_by_side
from tests.roles import grant

User = get_user_model()
every_kind = consistency.every_kind  # the project of every decision kind, as a fixture here too


def _opposite(criterion: Criterion, label: Label | None) -> dict:
    if criterion.kind == "binary":
        return {"verdict": "not_met" if label is not None and label.verdict == "met" else "met"}
    labels = [o["label"] for o in criterion.options]
    current = label.option_label if label is not None else None
    return {"option_label": next(x for x in labels if x != current)}


def _drafts(project) -> dict:
    """Two new annotators of g1 with an item in progress each, deciding every criterion of one
    response against the cohort's final labels (enough to flip its majority); and a checker
    decision of g2 on a review whose annotators submitted but which is not completed."""
    g1, g2 = (Cohort.objects.get(project=project, name=n) for n in ("g1", "g2"))
    response = Response.objects.get(project=project, external_id="r0-m-alpha")
    criteria = list(Criterion.objects.filter(rubric_version=response.case.rubric_version))
    made = {"annotator": 0, "checker": 0}
    for name in ("a8", "a9"):
        user = User.objects.create_user(name)
        CohortMembership.objects.create(project=project, cohort=g1, user=user, role="annotator")
        assignment = Assignment.objects.create(project=project, cohort=g1, response=response, annotator=user)
        for criterion in criteria:
            first = Label.objects.filter(response=response, criterion=criterion, cohort=g1, role="annotator").first()
            label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=user, expected_revision=0,
                         **_opposite(criterion, first))
            made["annotator"] += 1
    # g2's review of another response: both annotators submitted, the checker decided one criterion.
    reviewed = Response.objects.get(project=project, external_id="r1-m-alpha")
    for name in ("b1", "b2"):
        Assignment.objects.create(project=project, cohort=g2, response=reviewed, annotator=User.objects.get(username=name),
                                  status=Assignment.SUBMITTED)
    checked = set(Label.objects.filter(response=reviewed, cohort=g2, role="checker").values_list("criterion_id", flat=True))
    criterion = next(c for c in Criterion.objects.filter(rubric_version=reviewed.case.rubric_version, kind="binary")
                     if c.pk not in checked)
    votes = list(Label.objects.filter(response=reviewed, criterion=criterion, cohort=g2, role="annotator"))
    review_decision_record(response_id=reviewed.pk, criterion_id=criterion.pk, user=User.objects.get(username="k2"),
                           expected_revision=0, note="overriding for this test",
                           **_opposite(criterion, votes[0] if len({v.verdict for v in votes}) == 1 else None))
    made["checker"] += 1
    return made


def _everything(client, project, tmp_path, name: str) -> dict:
    """Every reader's view of the project's decisions."""
    seen = {"side_by_side": _from_side_by_side(client, project)}
    for source in ("cohort:g1", "cohort:g2", "gold"):
        seen[f"pairs {source}"] = _from_pairs(tmp_path, source)[0]
        seen[f"api {source}"] = _from_api(client, source)
    out = tmp_path / f"export-{name}"
    call_command("export_gold", "--project", SLUG, "--out", str(out), "--json", stdout=StringIO())
    seen["gold.jsonl"] = (out / "gold.jsonl").read_text()
    seen["labels.jsonl"] = (out / "labels.jsonl").read_text()
    queue = StringIO()
    call_command("adjudication_queue", "--project", SLUG, "--all", "--json", stdout=queue)
    seen["queue"] = {k: v for k, v in json.loads(queue.getvalue()).items() if k != "draft_labels"}
    for command, args in (("agreement", ["--a", "cohort:g1", "--b", "cohort:g2"]),
                          ("coverage", ["--source", "cohort:g1", "--k", "2"]),
                          ("scores", ["--source", "gold"])):
        text = StringIO()
        call_command(command, "--project", SLUG, *args, "--json", stdout=text)
        result = json.loads(text.getvalue())
        seen[f"drafts in {command}"] = result.pop("n_draft_labels")
        assert result["left_out"].pop("draft_labels") == seen[f"drafts in {command}"], command  # stated twice, alike
        seen[command] = result
    return seen


def test_drafts_change_no_decision_and_every_report_counts_them(every_kind, client, tmp_path):
    client.force_login(grant(User.objects.create_user("res", password="pw"), every_kind, "adjudicator"))
    before = _everything(client, every_kind, tmp_path, "before")
    assert before["drafts in agreement"] == 0

    made = _drafts(every_kind)
    after = _everything(client, every_kind, tmp_path, "after")
    n_drafts = made["annotator"] + made["checker"]
    assert labels_draft_count(project=every_kind) == n_drafts
    for command in ("agreement", "coverage", "scores"):
        assert after.pop(f"drafts in {command}") == n_drafts, command
        before.pop(f"drafts in {command}")
    for reader in before:
        assert after[reader] == before[reader], reader

    # Handed in, the drafts count: g1's decision on r0-m-alpha changes, and so do the cached reports.
    for assignment in Assignment.objects.filter(annotator__username__in=["a8", "a9"]):
        assignment_submit(assignment=assignment, user=assignment.annotator)
    assert labels_draft_count(project=every_kind) == made["checker"]
    submitted = _everything(client, every_kind, tmp_path, "submitted")
    assert submitted["pairs cohort:g1"] != before["pairs cohort:g1"]
    assert submitted["agreement"] != before["agreement"]
    assert submitted["gold.jsonl"] != before["gold.jsonl"]


def test_the_checker_decision_counts_once_the_review_is_complete(every_kind):
    from annotation.reviews import review_complete

    _drafts(every_kind)
    g2 = Cohort.objects.get(project=every_kind, name="g2")
    reviewed = Response.objects.get(project=every_kind, external_id="r1-m-alpha")
    draft = Label.objects.filter(response=reviewed, cohort=g2, role="checker", import_batch__isnull=True).get()
    decided = cohort_frame(cohort=g2, response_ids=[reviewed.pk]).set_index("criterion_id")
    assert decided.loc[draft.criterion_id, "verdict"] != draft.verdict  # the draft is not the decision yet
    checker = User.objects.get(username="k2")
    item = review_item_get_for_checker(response_id=reviewed.pk, user=checker)
    for row in review_rows(item=item):
        if row.needs_choice:
            choice = {"verdict": "met"} if row.criterion.kind == "binary" else {"option_label": row.criterion.options[0]["label"]}
            review_decision_record(response_id=reviewed.pk, criterion_id=row.criterion.pk, user=checker,
                                   expected_revision=0, **choice)
    review_complete(response_id=reviewed.pk, user=checker)
    decided = cohort_frame(cohort=g2, response_ids=[reviewed.pk]).set_index("criterion_id")
    assert decided.loc[draft.criterion_id, "verdict"] == draft.verdict


@pytest.mark.django_db
def test_final_and_draft_split_every_label_in_two(every_kind):
    _drafts(every_kind)
    Assignment.objects.create(project=every_kind, cohort=Cohort.objects.get(project=every_kind, name="g1"),
                              response=Response.objects.get(project=every_kind, external_id="r2-m-beta"),
                              annotator=User.objects.get(username="a1"), status=Assignment.CHECKED)
    labels = Label.objects.filter(project=every_kind)
    final, draft = labels.filter(label_final_q()).count(), labels.filter(label_draft_q()).count()
    assert final + draft == labels.count() and draft > 0 and final > 0
    assert not labels.filter(label_final_q()).filter(label_draft_q()).exists()
    assert not labels.exclude(Q(label_final_q()) | Q(label_draft_q())).exists()


def test_the_author_still_sees_their_draft(every_kind, client):
    _drafts(every_kind)
    user = User.objects.get(username="a8")
    client.force_login(user)
    [item] = client.get("/api/assignments/").json()["results"]
    detail = client.get(f"/api/assignments/{item['id']}/").json()
    assert detail["status"] == "in_progress" and len(detail["labels"]) == detail["total"] > 0


def test_managers_see_drafts_marked_as_drafts(every_kind, client):
    made = _drafts(every_kind)
    client.force_login(User.objects.create_superuser("root", password="pw"))
    drafts = client.get("/admin/annotation/label/", {"final": "no"}).content.decode()
    assert f"{made['annotator'] + made['checker']} labels" in drafts or f"{made['annotator'] + made['checker']} label" in drafts
    assert drafts.count('class="field-final_or_draft">draft<') == made["annotator"] + made["checker"]
    final = client.get("/admin/annotation/label/", {"final": "yes"}).content.decode()
    assert 'class="field-final_or_draft">draft<' not in final and 'class="field-final_or_draft">final<' in final


def test_check_labels_change_no_decision_anywhere_and_are_neither_final_nor_draft(every_kind, client, tmp_path):
    """Labels of hidden check items (annotator quality), submitted and decided against the cohort,
    change no reader's decisions (cohort, gold, side-by-side, API, export, adjudication queue, the
    reports), are not counted as drafts, and every report states how many it left out."""
    from grading.goldcheck.services import checks_seed, quality_settings_update

    client.force_login(grant(User.objects.create_user("res", password="pw"), every_kind, "adjudicator"))
    manager = grant(User.objects.create_user("mgr"), every_kind, "manager")
    g1 = Cohort.objects.get(project=every_kind, name="g1")
    newcomer = User.objects.create_user("n1")
    CohortMembership.objects.create(project=every_kind, cohort=g1, user=newcomer, role="annotator")
    for position, external_id in enumerate(("r3-m-alpha", "r3-m-beta")):  # their queue: two regular items, untouched
        Assignment.objects.create(project=every_kind, cohort=g1, annotator=newcomer, position=position,
                                  response=Response.objects.get(project=every_kind, external_id=external_id))
    before = _everything(client, every_kind, tmp_path, "before")

    quality_settings_update(project=every_kind, data={"check_rate": 0.5}, by=manager)
    every_kind.refresh_from_db()
    assert checks_seed(project=every_kind, by=manager, seed=0)["created"] == 2
    made = 0
    for assignment in Assignment.objects.filter(annotator=newcomer, is_check=True).select_related("response__case"):
        for criterion in Criterion.objects.filter(rubric_version=assignment.response.case.rubric_version):
            first = Label.objects.filter(response=assignment.response, criterion=criterion, cohort=g1, role="annotator").first()
            label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=newcomer, expected_revision=0,
                         **_opposite(criterion, first))
            made += 1
        assignment_submit(assignment=assignment, user=newcomer)
    labels = Label.objects.filter(project=every_kind)
    assert labels.filter(label_check_q()).count() == made > 0
    assert not labels.filter(label_check_q()).filter(Q(label_final_q()) | Q(label_draft_q())).exists()
    assert labels.filter(label_final_q()).count() + labels.filter(label_draft_q()).count() + made == labels.count()

    after = _everything(client, every_kind, tmp_path, "after")
    for command in ("agreement", "coverage", "scores"):
        assert after[command]["left_out"].pop("check_labels") == made, command
    for reader in before:
        assert after[reader] == before[reader], reader
