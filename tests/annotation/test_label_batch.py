"""Batch saves (issue 12, point 7, the server side): ``POST /api/assignments/{id}/labels/`` takes
a list of decisions with their revisions and applies all or none; a stale revision (409) or an
invalid decision (400) names its criterion and leaves every label as it was; the history rows
are the single saves'."""
import json

import pytest
from django.db import connection

from annotation.models import Label, LabelHistory
from annotation.selectors import criteria_for_response
from tests.annotation.conftest import first_assignment

URL = "/api/assignments/{}/labels/"


@pytest.fixture
def item(study):
    assignment = first_assignment("a1")
    return assignment, criteria_for_response(response=assignment.response)


def _post(client, assignment, body):
    return client.post(URL.format(assignment.pk), json.dumps(body), content_type="application/json")


def _whole(criteria):
    return [{"criterion": c.pk, "verdict": "met", "revision": 0} if c.kind == "binary" else
            {"criterion": c.pk, "option": c.options[1]["label"], "revision": 0, "rationale": "warm enough"} for c in criteria]


def test_a_whole_item_in_one_request(item, login_client):
    assignment, criteria = item
    answer = _post(login_client("a1"), assignment, _whole(criteria))
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert [row["criterion"] for row in body] == [c.pk for c in criteria] and {row["revision"] for row in body} == {1}
    labels = Label.objects.filter(assignment=assignment)
    assert labels.count() == len(criteria) and labels.filter(verdict="met").count() == len(criteria) - 1
    assert LabelHistory.objects.filter(label__in=labels).count() == len(criteria)  # one row each, as single saves

    # the same body again: a retry of changes already stored, no new revision
    again = _post(login_client("a1"), assignment, {"labels": _whole(criteria)})
    assert again.status_code == 200 and {row["revision"] for row in again.json()} == {1}
    assert LabelHistory.objects.filter(label__in=labels).count() == len(criteria)


def test_a_stale_revision_names_its_criterion_and_nothing_is_saved(item, login_client):
    assignment, criteria = item
    client = login_client("a1")
    assert _post(client, assignment, [{"criterion": criteria[1].pk, "verdict": "not_met", "revision": 0}]).status_code == 200
    body = _whole(criteria)  # revision 0 everywhere: stale for criterion 2, which is at revision 1 now
    body[1]["verdict"] = "met"
    answer = _post(client, assignment, body)
    assert answer.status_code == 409
    refused = answer.json()
    assert (refused["index"], refused["criterion"]) == (1, criteria[1].pk)
    assert f"decision 2 (criterion {criteria[1].pk})" in refused["labels"][0] and "nothing was saved" in refused["labels"][0]
    assert refused["current"]["verdict"] == "not_met" and refused["current"]["revision"] == 1
    assert Label.objects.filter(assignment=assignment).count() == 1  # criterion 1's decision was rolled back


@pytest.mark.parametrize("change, index, message", [
    ({"verdict": "maybe"}, 0, "is not a valid choice"),
    ({"option": "excellent", "verdict": None}, 3, "not among the options"),
    ({"criterion": 999999}, 2, "not a criterion of this assignment"),
])
def test_an_invalid_decision_names_its_criterion_and_nothing_is_saved(item, login_client, change, index, message):
    assignment, criteria = item
    body = _whole(criteria)
    body[index].update(change)
    answer = _post(login_client("a1"), assignment, body)
    # A criterion the assignment does not have is not there (404); a wrong value is a 400.
    assert answer.status_code == (404 if "not a criterion" in message else 400) and message in answer.content.decode()
    assert str(body[index]["criterion"]) in answer.content.decode()  # named
    assert not Label.objects.filter(assignment=assignment).exists()


def test_duplicates_empty_and_foreign_batches_are_refused(item, login_client):
    assignment, criteria = item
    client = login_client("a1")
    twice = [{"criterion": criteria[0].pk, "verdict": "met", "revision": 0},
             {"criterion": criteria[0].pk, "verdict": "not_met", "revision": 0}]
    assert "appears twice" in _post(client, assignment, twice).content.decode()
    assert _post(client, assignment, []).status_code == 400
    assert _post(login_client("b1"), assignment, _whole(criteria)).status_code == 404  # not b1's assignment
    assert not Label.objects.filter(assignment=assignment).exists()


def test_the_answer_is_what_the_database_holds(item, login_client):
    """The batch API answers the rows the write service built (``labels_write(rows=True)``), not
    labels read back: new, changed and unchanged ones, quotes and an ordinal's value included."""
    assignment, criteria = item
    client = login_client("a1")
    body = _whole(criteria)
    body[0]["evidence_add"] = "An ECG is needed"
    first = _post(client, assignment, body)
    assert first.status_code == 200, first.content
    body = [{"criterion": criteria[0].pk, "verdict": "not_met", "revision": 1, "rationale": "changed"},  # changed
            {"criterion": criteria[1].pk, "verdict": "met", "revision": 1}]  # unchanged
    second = _post(client, assignment, body)
    assert second.status_code == 200, second.content
    for answer in (first.json()[1:], second.json()):  # the first batch's first label changed since
        for row in answer:
            label = Label.objects.get(assignment=assignment, criterion_id=row["criterion"])
            assert row == {"criterion": label.criterion_id, "verdict": label.verdict, "option": label.option_label,
                           "value": label.value, "rationale": label.rationale, "evidence": label.evidence,
                           "revision": label.revision}
    assert first.json()[0]["evidence"] == ["An ECG is needed"] and second.json()[0]["revision"] == 2
    assert next(row for row in first.json() if row["option"])["value"] == 0.5


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_prepared_statements_save_refuse_and_answer_the_same(item, login_client):
    """As in production (``prepare_threshold`` in the database OPTIONS): the write service's
    statements, prepared by PostgreSQL from their first use here, save, refuse a stale revision
    and answer as above."""
    assignment, criteria = item
    client = login_client("a1")
    connection.ensure_connection()
    before = connection.connection.prepare_threshold
    connection.connection.prepare_threshold = 0
    try:
        assert _post(client, assignment, _whole(criteria)).status_code == 200
        again = _post(client, assignment, _whole(criteria)[:2])  # stale: revision 0, now 1 (and unchanged: a retry)
        assert again.status_code == 200 and {row["revision"] for row in again.json()} == {1}
        body = [{"criterion": criteria[0].pk, "verdict": "not_met", "revision": 1}]
        assert _post(client, assignment, body).json()[0]["revision"] == 2
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%json_to_recordset%"])
            assert cursor.fetchone()[0] >= 1  # (a rollback, as of the refusal below, makes psycopg forget them)
        stale = _post(client, assignment, [{"criterion": criteria[0].pk, "verdict": "met", "revision": 1}])
        assert stale.status_code == 409 and stale.json()["current"]["revision"] == 2
    finally:
        connection.connection.prepare_threshold = before
    assert LabelHistory.objects.filter(label__assignment=assignment).count() == len(criteria) + 1
