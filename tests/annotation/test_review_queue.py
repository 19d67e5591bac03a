"""The checker's review queue, grouped, counted and paged in the database: which responses it
lists, in which order (ready first, oldest submission first; then waiting; then checked), with
which counts, and what a status filter keeps."""
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment
from tests.annotation.conftest import build_study


@pytest.fixture
def queue_study(db):
    study = build_study(slug="queue", n_cases=3, overlap=2, annotators=(("a1", "a2"), ("b1", "b2")))
    responses = study.responses
    t0 = timezone.now() - timedelta(days=1)

    def mark(response, *states):
        mine = list(Assignment.objects.filter(cohort=study.cohorts[0], response=response).order_by("pk"))
        assert len(mine) == len(states) == 2
        for assignment, (state, minutes, is_check) in zip(mine, states):
            submitted = t0 + timedelta(minutes=minutes) if minutes is not None else None
            Assignment.objects.filter(pk=assignment.pk).update(status=state, submitted_at=submitted, is_check=is_check)

    s, c, o = Assignment.SUBMITTED, Assignment.CHECKED, Assignment.IN_PROGRESS
    mark(responses[0], (s, 30, False), (s, 10, False))      # ready, last submitted at 30
    mark(responses[1], (s, 5, False), (s, 20, False))       # ready, last submitted at 20: before responses[0]
    mark(responses[2], (s, 1, False), (o, None, False))     # waiting for one annotator
    mark(responses[3], (c, 2, False), (c, 3, False))        # checked
    mark(responses[4], (o, None, False), (o, None, False))  # nothing submitted: not in the queue
    mark(responses[5], (s, 25, False), (o, None, True))     # the open one is a check item, never reviewed: ready
    return study


def _listed(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr data-response="(\d+)"', html)]


def test_the_queue_lists_ready_then_waiting_then_checked_with_counts(queue_study, login_client):
    r = queue_study.responses
    client = login_client("chk1")
    page = client.get("/review/queue/")
    html = page.content.decode()
    assert _listed(html) == [r[1].pk, r[5].pk, r[0].pk, r[2].pk, r[3].pk]
    assert "ready (3)" in html and "waiting for an annotator (1)" in html and "checked (1)" in html
    assert "waiting (1 of 2 submitted)" in html
    rows = {row.response_id: row for row in page.context["page"]}
    assert rows[r[0].pk].annotators == ["a1", "a2"] and rows[r[5].pk].annotators == ["a1"]
    assert rows[r[1].pk].response_number == 2 and rows[r[0].pk].response_number == 1  # two responses a case
    assert page.context["page"].paginator.count == 5

    waiting = client.get("/review/queue/?status=waiting")
    assert _listed(waiting.content.decode()) == [r[2].pk] and waiting.context["page"].paginator.count == 1
    assert _listed(client.get("/review/queue/?status=checked").content.decode()) == [r[3].pk]
    assert _listed(client.get("/review/queue/?status=nonsense").content.decode()) == _listed(html)


def test_the_next_ready_item_after_a_review_is_the_oldest_other_one(queue_study, login_client):
    from annotation.views import _next_ready

    r, checker = queue_study.responses, queue_study.users["chk1"]
    project = queue_study.project.pk
    assert _next_ready(checker, project) == r[1].pk
    assert _next_ready(checker, project, after=r[1].pk) == r[5].pk
    assert _next_ready(queue_study.users["chk1"], project, after=r[5].pk) == r[1].pk
