"""The adjudication page of one response and saving through it (issue 10, point 3): every
rater's verdict, rationale and quotes and every judge's decision are shown, quotes highlighted in
the response, names hidden when the project asks; agreed criteria folded; each save is one
htmx round trip with a revision and a history row; stale, malformed and out-of-rubric saves are
refused with the reason in the row and change nothing; "next item" walks the open queue."""
import re
from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Criterion, Label, Project, Response
from grading.bundles import bundle_import
from grading.models import Adjudication, AdjudicationHistory
from tests.bundles import write_bundle
from tests.grading.adjudication.conftest import queue_parts
from tests.roles import grant

RATIONALE = "The answer never mentions an ECG."


@pytest.fixture
def item_project(db, tmp_path):
    """The queue project with a rationale and quotes on r2's labels and a judge on r2."""
    parts = queue_parts()
    for label in parts["labels"]:
        if (label["response_id"], label["criterion_id"], label["annotator"]) == ("r2", "c1-k0", "a1"):
            label.update(rationale=RATIONALE, evidence=["Answer r2"])
    parts["judgments"] = [{"response_id": "r2", "criterion_id": "c1-k0", "judge": "judge-x", "judge_model": "gpt-x",
                           "condition": "anonymized", "sample": 0, "verdict": "not_met",
                           "explanation": "No ECG ordered.", "evidence": []},
                          {"response_id": "r1", "criterion_id": "c1-k1", "judge": "judge-x", "judge_model": "gpt-x",
                           "condition": "anonymized", "sample": 0, "verdict": "met", "explanation": "Quoted.",
                           "evidence": ["Answer r1", "words the answer never says"]}]
    bundle_import(path=write_bundle(tmp_path / "item", parts))
    # A quote stored before quotes were verified on every path (every write path refuses it now):
    # the page must still mark it as not found.
    Label.objects.filter(response__external_id="r2", criterion__external_id="c1-k0", annotator__username="a1").update(
        evidence=["Answer r2", "a sentence that is not there"])
    return Project.objects.get(slug="queue")


@pytest.fixture
def adjudicator(item_project):
    user = get_user_model().objects.create_user(username="adj", password="pw-12345")
    return grant(user, item_project, "adjudicator")


@pytest.fixture
def adj_client(client, adjudicator):
    client.force_login(adjudicator)
    return client


def url(name: str, *args) -> str:
    return reverse(name, args=["queue", *args])


def ids(external_response: str, external_criterion: str | None = None) -> tuple:
    response = Response.objects.get(external_id=external_response)
    if external_criterion is None:
        return (response.pk,)
    return response.pk, Criterion.objects.get(external_id=external_criterion).pk


def save(client, response_id: str, criterion_id: str, htmx: bool = True, **data):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(url("adjudication-save", *ids(response_id, criterion_id)), data, **headers)


def row_html(html: str, criterion_pk: int) -> str:
    match = re.search(rf'<form class="crit adjudication-row[^"]*"\s+id="crit-{criterion_pk}".*?</form>', html, re.S)
    assert match, f"no row for criterion {criterion_pk}"
    return match.group(0)


def test_the_page_shows_every_rater_judge_and_quote(adj_client):
    html = adj_client.get(url("adjudication-item", *ids("r2"))).content.decode()
    k0 = row_html(html, Criterion.objects.get(external_id="c1-k0").pk)
    assert "group-1" in k0 and "group-2" in k0 and "<strong>a1</strong>" in k0 and "<strong>b1</strong>" in k0
    assert RATIONALE in k0
    assert '<li class="found"><q>Answer r2</q>' in k0 and '<li class="not-found"><q>a sentence that is not there</q>' in k0
    assert "judge-x" in k0 and "No ECG ordered." in k0
    k0_pk = Criterion.objects.get(external_id="c1-k0").pk
    # the valid quote, marked in the response for the criterion it was given for, in its cohort's colour
    assert re.search(rf'<mark class="quote quote-cohort-[01]" data-criteria=" {k0_pk} ">Answer r2</mark>', html)
    assert "a sentence that is not there</mark>" not in html
    assert "4 of 4 disputed criteria still open" in html


def test_a_judges_valid_quote_is_highlighted_too(adj_client):
    html = adj_client.get(url("adjudication-item", *ids("r1"))).content.decode()
    assert re.search(r'<mark class="quote quote-judge" data-criteria=" \d+ ">Answer r1</mark>', html)
    assert "words the answer never says" in html and "words the answer never says</mark>" not in html


def test_agreed_criteria_are_folded_and_disputed_ones_open(adj_client):
    html = adj_client.get(url("adjudication-item", *ids("r1"))).content.decode()
    disputed = row_html(html, Criterion.objects.get(external_id="c1-k1").pk)
    agreed = row_html(html, Criterion.objects.get(external_id="c1-k0").pk)
    assert "<details open>" in disputed and 'data-provenance="unresolved"' in disputed
    assert "<details>" in agreed and 'data-provenance="agreed"' in agreed and "disputed</span>" not in agreed
    assert "1 of 1 disputed criteria still open" in html


def test_hidden_rater_names(adj_client, item_project):
    Label.objects.filter(response__external_id="r6", annotator__username="b2").update(role=Label.CHECKER_ROLE)
    item_project.hide_rater_names = True
    item_project.save()
    html = adj_client.get(url("adjudication-item", *ids("r6"))).content.decode()
    k0 = row_html(html, Criterion.objects.get(external_id="c3-k0").pk)
    assert "<strong>a1</strong>" not in k0 and "<strong>b1</strong>" not in k0 and "<strong>b2</strong>" not in k0
    assert "<strong>annotator 1</strong>" in k0 and "<strong>checker</strong>" in k0


def test_a_save_returns_the_row_and_the_progress_and_keeps_a_history(adj_client, adjudicator):
    k0 = Criterion.objects.get(external_id="c1-k0")
    response = save(adj_client, "r2", "c1-k0", choice="verdict:met", revision="0")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'id="crit-{k0.pk}"' in html and '<strong class="final-decision">met</strong>' in html
    assert 'id="adjudication-progress" class="progress-bar card" hx-swap-oob="true"' in html
    assert "3 of 4 disputed criteria still open" in html
    adjudication = Adjudication.objects.get(response__external_id="r2", criterion=k0)
    assert (adjudication.verdict, adjudication.revision, adjudication.adjudicator) == ("met", 1, adjudicator)
    assert 'name="revision" value="1"' in html

    # Confidence, category and note alone change only themselves, each a new revision.
    save(adj_client, "r2", "c1-k0", confidence="certain", revision="1")
    save(adj_client, "r2", "c1-k0", category="annotator_slip", note="  b1 ticked the wrong box ", revision="2")
    adjudication.refresh_from_db()
    assert (adjudication.verdict, adjudication.confidence, adjudication.category, adjudication.note, adjudication.revision) == (
        "met", "certain", "annotator_slip", "b1 ticked the wrong box", 3)
    history = list(AdjudicationHistory.objects.filter(adjudication=adjudication).order_by("pk"))
    assert [h.old for h in history][0] is None and [h.new["confidence"] for h in history] == ["", "certain", "certain"]
    assert history[-1].new["note"] == "b1 ticked the wrong box" and {h.changed_by for h in history} == {adjudicator}

    # The same decision again is not a change.
    save(adj_client, "r2", "c1-k0", choice="verdict:met", revision="3")
    assert AdjudicationHistory.objects.filter(adjudication=adjudication).count() == 3


def test_a_stale_revision_is_refused_and_changes_nothing(adj_client):
    save(adj_client, "r2", "c1-k0", choice="verdict:met", revision="0")
    html = save(adj_client, "r2", "c1-k0", choice="verdict:not_met", revision="0").content.decode()
    assert 'role="alert"' in html and "changed by someone else meanwhile (now revision 1)" in html
    assert '<strong class="final-decision">met</strong>' in html  # the row shows the latest decision
    adjudication = Adjudication.objects.get(response__external_id="r2", criterion__external_id="c1-k0")
    assert (adjudication.verdict, adjudication.revision) == ("met", 1)
    assert AdjudicationHistory.objects.count() == 1


@pytest.mark.parametrize("response_id, criterion_id, data, message", [
    ("r2", "c1-k0", {"choice": "verdict:maybe"}, "choose one of the offered decisions"),
    ("r2", "c1-k0", {"choice": "option:good"}, "option given for a binary criterion"),
    ("r7", "c4-tone", {"choice": "option:excellent"}, "option 'excellent' is not among the options"),
    ("r7", "c4-tone", {"choice": "value:2"}, "outside the option range"),
    ("r7", "c4-tone", {"choice": "value:nan"}, "outside the option range"),
    ("r2", "c1-k0", {"confidence": "certain"}, "choose the final decision first"),
    ("r2", "c1-k0", {"choice": "verdict:met", "confidence": "sure"}, "Select a valid choice"),
    ("r2", "c1-k0", {"choice": "verdict:met", "note": "x" * 5001}, "at most 5000 characters"),
])
def test_bad_saves_are_named_in_the_row_and_change_nothing(adj_client, response_id, criterion_id, data, message):
    response = save(adj_client, response_id, criterion_id, revision="0", **data)
    assert response.status_code == 200
    html = unescape(response.content.decode())
    assert 'role="alert"' in html and message in html
    assert not Adjudication.objects.exists() and not AdjudicationHistory.objects.exists()


def test_a_criterion_outside_the_responses_rubric_or_project_is_404(adj_client, item_project, tmp_path):
    response = save(adj_client, "r5", "c1-k0", choice="verdict:met", revision="0")  # c1-k0 is case c1's, r5 is c3's
    assert response.status_code == 404
    parts = queue_parts()
    parts["project"] = {**parts["project"], "slug": "other"}
    bundle_import(path=write_bundle(tmp_path / "other", parts))
    foreign = Criterion.objects.get(project__slug="other", external_id="c1-k0")
    r2 = Response.objects.get(project=item_project, external_id="r2")
    assert adj_client.post(url("adjudication-save", r2.pk, foreign.pk), {"choice": "verdict:met"}).status_code == 404
    foreign_response = Response.objects.get(project__slug="other", external_id="r2")
    assert adj_client.get(url("adjudication-item", foreign_response.pk)).status_code == 404
    assert not Adjudication.objects.exists()


def test_without_htmx_a_save_redirects_to_the_row_and_an_error_becomes_a_message(adj_client):
    r2, k0 = ids("r2", "c1-k0")
    response = save(adj_client, "r2", "c1-k0", htmx=False, choice="verdict:met", revision="0")
    assert response.status_code == 302 and response["Location"] == url("adjudication-item", r2) + f"#crit-{k0}"
    response = save(adj_client, "r2", "c1-k0", htmx=False, choice="verdict:not_met", revision="0")
    assert [str(m) for m in get_messages(response.wsgi_request)][-1].startswith("changed by someone else")


def test_next_item_walks_the_open_queue_and_ends_on_the_queue(adj_client):
    r2, r5, r6, r1, r7 = (ids(r)[0] for r in ("r2", "r5", "r6", "r1", "r7"))
    assert adj_client.get(url("adjudication-next"))["Location"] == url("adjudication-item", r2)
    assert adj_client.get(url("adjudication-next") + f"?after={r2}")["Location"] == url("adjudication-item", r5)
    assert adj_client.get(url("adjudication-next") + f"?after={r7}")["Location"] == url("adjudication-item", r2)  # wraps
    for response_id, criterion_id, choice in (("r2", "c1-k0", "verdict:met"), ("r2", "c1-k1", "verdict:met"),
                                              ("r2", "c1-k2", "verdict:met"), ("r2", "c1-k3", "verdict:not_met"),
                                              ("r5", "c3-k3", "verdict:met"), ("r6", "c3-k0", "verdict:met"),
                                              ("r1", "c1-k1", "verdict:not_met")):
        save(adj_client, response_id, criterion_id, choice=choice, revision="0")
    assert adj_client.get(url("adjudication-next") + f"?after={r2}")["Location"] == url("adjudication-item", r7)
    save(adj_client, "r7", "c4-tone", choice="option:good", revision="0")
    response = adj_client.get(url("adjudication-next") + f"?after={r7}")
    assert response["Location"] == url("adjudication-queue")
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["Nothing left to adjudicate here."]
    assert r6 and r1  # every item of the queue took its turn above


def test_the_page_costs_the_same_queries_with_more_raters(adj_client, item_project):
    page = url("adjudication-item", *ids("r6"))
    adj_client.get(page)
    with CaptureQueriesContext(connection) as before:
        assert adj_client.get(page).status_code == 200
    r6 = Response.objects.get(external_id="r6")
    cohort = item_project.cohorts.get(name="group-1")
    for n in range(3):
        user = get_user_model().objects.create_user(username=f"extra{n}")
        Label.objects.bulk_create(Label(project=item_project, response=r6, criterion=c, cohort=cohort, annotator=user, verdict="met",
                                        rubric_version=c.rubric_version)
                                  for c in Criterion.objects.filter(rubric_version=r6.case.rubric_version))
    with CaptureQueriesContext(connection) as after:
        html = adj_client.get(page).content.decode()
    assert "<strong>extra2</strong>" in html
    assert len(after) == len(before)


def test_the_page_reads_the_raters_rationales_once(adj_client, item_project):
    # Each rater's rationale and quotes are shown under its cohort's decision, so the cohort cells
    # of the side-by-side table need none of their own: the labels' texts are read once.
    page = url("adjudication-item", *ids("r6"))
    adj_client.get(page)
    with CaptureQueriesContext(connection) as queries:
        html = adj_client.get(page).content.decode()
    assert "adjudication-row" in html
    texts = [q["sql"] for q in queries if '"annotation_label"."rationale"' in q["sql"]]
    assert len(texts) == 1, texts
