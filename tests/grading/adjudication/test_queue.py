"""The adjudication queue (issue 10, point 2): order by case-level MF1 between the two cohorts
(lowest first, undefined last), the disputed criteria of each item, the filters, done and open
items, excluded cases left out, and the ``adjudication_queue`` command — worked by hand."""
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import CaseQuality, Criterion, Response
from grading.adjudication.services import adjudication_record
from grading.reports.adjudication_queue import adjudication_queue, queue_json

M = "met"


def ids(queue) -> list[str]:
    return [item.external_id for item in queue.items]


def test_order_lowest_mf1_first_undefined_last(queue_project):
    queue = adjudication_queue(project=queue_project)
    assert ids(queue) == ["r2", "r5", "r6", "r1", "r7"]  # r5 and r6 tie at MF1 3/7: the earlier response first
    mf1 = {item.external_id: item.case_mf1 for item in queue.items}
    assert mf1["r2"] == 0.0 and mf1["r1"] == pytest.approx((2 / 3 + 4 / 5) / 2)
    assert mf1["r5"] == pytest.approx((6 / 7) / 2) and mf1["r7"] is None
    disputed = {item.external_id: [Criterion.objects.get(pk=c).external_id for c in item.disputed] for item in queue.items}
    assert disputed == {"r2": ["c1-k0", "c1-k1", "c1-k2", "c1-k3"], "r5": ["c3-k3"], "r6": ["c3-k0"], "r1": ["c1-k1"],
                        "r7": ["c4-tone"]}
    assert queue.counts == {"total": 5, "open": 5, "done": 0}


def test_the_tail_below_the_threshold_comes_first_and_alone_below_a_low_threshold(queue_project):
    # Responses above the threshold stay in the queue only for their disputes; r3 and r4 never appear.
    result = queue_json(adjudication_queue(project=queue_project, threshold=0.2))
    assert [i["response_id"] for i in result["items"]] == ["r2", "r5", "r6", "r1", "r7"]
    assert result["threshold"] == 0.2 and result["n_items"] == 5 and result["n_disputed"] == 8


@pytest.mark.parametrize("filters, expected", [
    ({"model": "model-b"}, ["r2", "r5"]),
    ({"difficulty": "high"}, ["r5", "r6"]),
    ({"difficulty": "low"}, ["r2", "r1"]),
    ({"theme": "theme-1"}, ["r7"]),  # c2 and c4 are theme-1; c2's responses have nothing disputed
    ({"specialty": "pediatrics"}, ["r5", "r6", "r7"]),
    ({"tag": "safety:triage"}, ["r2", "r6"]),  # a disputed criterion tagged so: k0
    ({"model": "model-a", "difficulty": "low"}, ["r1"]),
])
def test_filters(queue_project, filters, expected):
    assert ids(adjudication_queue(project=queue_project, filters=filters)) == expected


def test_adjudicated_items_are_done_and_leave_the_open_queue(queue_project):
    r6 = Response.objects.get(external_id="r6")
    adjudication_record(response=r6, criterion=Criterion.objects.get(external_id="c3-k0"), user=None, verdict=M)
    r2 = Response.objects.get(external_id="r2")
    adjudication_record(response=r2, criterion=Criterion.objects.get(external_id="c1-k0"), user=None, verdict=M)
    queue = adjudication_queue(project=queue_project)
    assert ids(queue) == ["r2", "r5", "r1", "r7"] and queue.counts == {"total": 5, "open": 4, "done": 1}
    [r2_item] = [i for i in queue.items if i.external_id == "r2"]
    assert len(r2_item.open_criteria) == 3 and len(r2_item.adjudicated) == 1
    assert ids(adjudication_queue(project=queue_project, filters={"status": "done"})) == ["r6"]
    assert ids(adjudication_queue(project=queue_project, filters={"status": "all"})) == ["r2", "r5", "r6", "r1", "r7"]


def test_excluded_cases_are_left_out(queue_project):
    case = queue_project.cases.get(external_id="c1")
    CaseQuality.objects.create(project=queue_project, case=case, flagged=True, excluded=True)
    queue = adjudication_queue(project=queue_project)
    assert ids(queue) == ["r5", "r6", "r7"] and queue.excluded_cases == 1


def test_bad_filters_and_threshold_are_refused(queue_project):
    with pytest.raises(ValueError, match="unknown queue filter 'colour'"):
        adjudication_queue(project=queue_project, filters={"colour": "red"})
    with pytest.raises(ValueError, match="status 'later'"):
        adjudication_queue(project=queue_project, filters={"status": "later"})
    with pytest.raises(ValueError, match="threshold 1.5"):
        adjudication_queue(project=queue_project, threshold=1.5)


def test_command_prints_the_spec_keys_in_queue_order(queue_project):
    out = StringIO()
    call_command("adjudication_queue", "--project", "queue", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert {"threshold", "n_items", "n_disputed", "items"} <= set(result)
    assert result["items"][0] == {"response_id": "r2", "case_id": "c1", "model": "model-b", "case_mf1": 0.0,
                                  "disputed": ["c1-k0", "c1-k1", "c1-k2", "c1-k3"]}
    assert result["items"][-1]["case_mf1"] is None
    out = StringIO()
    call_command("adjudication_queue", "--project", "queue", "--model", "model-a", "--json", stdout=out)
    assert [i["response_id"] for i in json.loads(out.getvalue())["items"]] == ["r6", "r1", "r7"]
    with pytest.raises(CommandError, match="unknown project 'nope'"):
        call_command("adjudication_queue", "--project", "nope", "--json", stdout=StringIO())
