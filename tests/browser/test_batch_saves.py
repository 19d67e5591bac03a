"""Batch saves in real Chromium (issue 12, point 7): while one save is slow to answer, the
clicks that pile up on other criteria go as one request and are all stored; a refused batch
(here: a stale revision made in another tab) saves nothing and its clicks are sent one by one,
each told on its own row.

The slow save is held by the server until the test has made the clicks that pile up behind it,
so the pile-up does not depend on how fast this machine clicks."""
import threading

import pytest
from playwright.sync_api import expect

import annotation.views
from tests.annotation.conftest import PASSWORD, build_study

HOLD_SECONDS = 60  # a bound only: the test releases the held save as soon as its clicks are made


@pytest.fixture
def five(transactional_db):
    return build_study(slug="pile", n_cases=1, n_criteria=4, annotators=(("a1",),))


@pytest.fixture
def held_first_save(monkeypatch):
    """The first single save waits in the server until ``release`` is set (by the test, or at
    the latest when the test ends); the criteria the server was asked to save, in order."""
    original, calls, lock, release = annotation.views.label_record, [], threading.Lock(), threading.Event()

    def held(**kwargs):
        with lock:
            calls.append(kwargs["criterion_id"])
            first = len(calls) == 1
        if first:
            release.wait(HOLD_SECONDS)
        return original(**kwargs)

    monkeypatch.setattr(annotation.views, "label_record", held)
    yield release
    release.set()


def _open(page, login):
    """The first item of a1; the POSTs the page sends."""
    login("a1", PASSWORD)
    page.goto("/work/next/")
    sent = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" else None)
    return page.locator("#rubric form.crit"), sent


def test_clicks_that_pile_up_go_as_one_batch(page, login, five, held_first_save):
    from annotation.models import Label, LabelHistory

    rows, sent = _open(page, login)
    rows.nth(0).locator('button[value="met"]').click()  # held by the server ...
    rows.nth(1).locator('button[value="not_met"]').click()  # ... while these three pile up
    rows.nth(2).locator('button[value="cannot_assess"]').click()
    rows.nth(3).locator('button[value="met"]').click()
    held_first_save.set()
    expect(page.locator(".counter")).to_have_text("4 / 5 decided")
    expect(page.locator("#pending-saves")).to_have_text("")
    batches = [url for url in sent if url.endswith("/batch/")]
    singles = [url for url in sent if "/criteria/" in url]
    assert len(batches) == 1 and len(singles) == 1, sent
    labels = {label.criterion.position: (label.verdict, label.revision) for label in
              Label.objects.filter(annotator__username="a1").select_related("criterion")}
    assert labels == {0: ("met", 1), 1: ("not_met", 1), 2: ("cannot_assess", 1), 3: ("met", 1)}
    assert LabelHistory.objects.filter(label__annotator__username="a1").count() == 4
    for i in range(4):
        expect(rows.nth(i).locator(".crit-state")).to_contain_text("Saved")


def test_a_refused_batch_saves_nothing_and_its_clicks_go_one_by_one(page, login, five, held_first_save):
    from annotation.models import Label
    from annotation.selectors import criteria_for_response
    from annotation.services import label_record

    rows, sent = _open(page, login)
    assignment = int(page.locator("#label-page").get_attribute("data-assignment"))
    rows.nth(0).locator('button[value="met"]').click()
    # Meanwhile "another tab" decides criterion 3: the page's revision for it is stale now.
    from annotation.models import Assignment

    a = Assignment.objects.get(pk=assignment)
    third = criteria_for_response(response=a.response)[2]
    label_record(assignment_id=assignment, criterion_id=third.pk, user=a.annotator, verdict="not_met")
    rows.nth(1).locator('button[value="met"]').click()
    rows.nth(2).locator('button[value="met"]').click()
    held_first_save.set()
    expect(rows.nth(2).locator(".crit-state")).to_contain_text("changed in another tab")
    expect(page.locator("#pending-saves")).to_have_text("")
    assert len([url for url in sent if url.endswith("/batch/")]) == 1  # tried once, refused
    labels = {label.criterion.position: label.verdict for label in
              Label.objects.filter(annotator__username="a1").select_related("criterion")}
    assert labels == {0: "met", 1: "met", 2: "not_met"}  # criterion 2 one by one; 3 kept the other tab's
