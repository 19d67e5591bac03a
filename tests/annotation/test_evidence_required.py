"""Minimum evidence (issue 12, point 2): an assignment with a criterion that requires quotes,
marked met with fewer valid quotes than it requires, cannot be handed in, on the page, through
the API or the service; the refusal names each such criterion. (The browser side, the refused
submit with its list of links, is tests/browser/test_keyboard_safety.py.)"""
import pytest
from django.core.exceptions import ValidationError

from annotation.assignments import assignment_submit
from annotation.decisions import quotes_missing
from annotation.models import Assignment
from annotation.selectors import criteria_for_response, evidence_missing
from annotation.services import label_record
from tests.annotation.conftest import build_study, first_assignment


@pytest.fixture
def quoted(db):
    build_study(slug="quoted", n_cases=1, n_criteria=3, with_ordinal=False, annotators=(("a1",),), min_evidence=1)
    assignment = first_assignment("a1")
    criteria = criteria_for_response(response=assignment.response)
    return assignment, criteria


def _decide_all(assignment, criteria, first="met"):
    for i, criterion in enumerate(criteria):
        label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator,
                     verdict=first if i == 0 else "not_met")


def test_the_rule_counts_only_valid_quotes_of_a_met_decision():
    inside = {"An ECG is needed"}.__contains__
    assert quotes_missing(min_evidence=2, verdict="met", quotes=["An ECG is needed", "made up"], is_valid=inside) == 1
    assert quotes_missing(min_evidence=1, verdict="met", quotes=["An ECG is needed"], is_valid=inside) == 0
    assert quotes_missing(min_evidence=1, verdict="not_met", quotes=[], is_valid=inside) == 0
    assert quotes_missing(min_evidence=0, verdict="met", quotes=[], is_valid=inside) == 0


def test_a_met_criterion_without_its_quote_cannot_be_submitted(quoted):
    assignment, criteria = quoted
    _decide_all(assignment, criteria)
    with pytest.raises(ValidationError, match=r"criterion 1 \(quoted-c0-0\) needs 1 quote, has 0"):
        assignment_submit(assignment=assignment, user=assignment.annotator)
    assert Assignment.objects.get(pk=assignment.pk).status != Assignment.SUBMITTED
    assert [m["criterion_id"] for m in evidence_missing(assignment=assignment)] == ["quoted-c0-0"]

    label_record(assignment_id=assignment.pk, criterion_id=criteria[0].pk, user=assignment.annotator,
                 evidence_add="An ECG is needed")
    assert evidence_missing(assignment=assignment) == []
    assert assignment_submit(assignment=assignment, user=assignment.annotator).status == Assignment.SUBMITTED


def test_not_met_needs_no_quote(quoted):
    assignment, criteria = quoted
    _decide_all(assignment, criteria, first="not_met")
    assert assignment_submit(assignment=assignment, user=assignment.annotator).status == Assignment.SUBMITTED


def test_the_page_lists_the_missing_quotes_and_refuses_the_submit(quoted, login_client):
    assignment, criteria = quoted
    _decide_all(assignment, criteria)
    client = login_client("a1")
    page = client.get(f"/work/{assignment.pk}/").content.decode()
    assert 'id="evidence-missing"' in page and f'href="#crit-{criteria[0].pk}"' in page
    assert "Criterion 1</a>\n            is marked met and needs 1 quote from the response (has 0)" in page
    refused = client.post(f"/work/{assignment.pk}/submit/", {"seconds": "0"}, follow=True).content.decode()
    assert "needs 1 quote, has 0" in refused
    assert Assignment.objects.get(pk=assignment.pk).status != Assignment.SUBMITTED


def test_the_api_refuses_the_submit_naming_the_criterion(quoted, login_client):
    assignment, criteria = quoted
    _decide_all(assignment, criteria)
    answer = login_client("a1").post(f"/api/assignments/{assignment.pk}/submit/")
    assert answer.status_code == 409 and "quoted-c0-0" in answer.content.decode()
    assert Assignment.objects.get(pk=assignment.pk).status != Assignment.SUBMITTED


def test_each_save_refreshes_the_list(quoted, login_client):
    """The progress bar that comes back with every save carries the list (empty once quoted)."""
    assignment, criteria = quoted
    client = login_client("a1")
    url = f"/work/{assignment.pk}/criteria/{criteria[0].pk}/"
    html = client.post(url, {"verdict": "met", "revision": "0"}, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="evidence-missing"' in html
    html = client.post(url, {"evidence_add": "An ECG is needed", "revision": "1"}, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="evidence-missing"' not in html
