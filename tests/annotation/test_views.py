"""The annotation pages end to end through the test client: My work, labeling, saving through
htmx, submit, review, and the researcher's assignment pages; plus query counts."""
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, Label, LabelHistory
from annotation.selectors import criteria_for_response
from tests.annotation.conftest import MODELS, build_study, first_assignment

HTMX = {"HTTP_HX_REQUEST": "true"}


def _save(client, assignment, criterion, **data):
    return client.post(f"/work/{assignment.pk}/criteria/{criterion.pk}/", data, **HTMX)


def test_home_shows_queue_counts_and_progress(study, login_client):
    client = login_client("a1")
    a = first_assignment("a1")
    Assignment.objects.filter(pk=a.pk).update(status="submitted")
    html = client.get("/").content.decode()
    assert 'data-count="open">1<' in html and 'data-count="submitted">1<' in html
    assert 'aria-valuenow="1"' in html and "1 of 2 done" in html
    assert "/work/next/?project=" in html
    response = client.get(f"/work/next/?project={study.project.pk}")
    assert response.status_code == 302 and response.url.startswith("/work/")
    assert int(response.url.split("/")[2]) != a.pk


def test_checker_home_links_to_review_queue(study, login_client):
    html = login_client("chk1").get("/").content.decode()
    assert "/review/study/" in html and "0 to check" in html


def test_labeling_page_shows_case_response_rubric_and_hides_model(study, login_client):
    a = first_assignment("a1")
    html = login_client("a1").get(f"/work/{a.pk}/").content.decode()
    assert "chest pain" in html and "An ECG is needed" in html and "0 / 4 decided" in html
    assert "Tone fits the patient" in html and ">poor <kbd>1</kbd>" in html
    # The hostile markup of the response is inert: sanitized in the rendered response, escaped
    # text in the sentence bank.
    assert "<script>alert" not in html and not re.search(r"<img[^>]*onerror", html)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    for model in MODELS:
        assert model not in html
    assert a.response.external_id not in html
    assert "REFERENCE-ANSWER-TEXT" not in html  # show_reference_answer is off


def test_reference_answer_and_model_only_when_the_project_allows(db, login_client):
    build_study(slug="open", blind=False, show_reference=True)
    a = first_assignment("a1")
    html = login_client("a1").get(f"/work/{a.pk}/").content.decode()
    assert "REFERENCE-ANSWER-TEXT" in html and a.response.model in html


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_saves_progress_count_is_a_prepared_statement_and_counts_right(study, login_client):
    """As in production (``prepare_threshold`` in the database OPTIONS): the progress counter every
    save answers with is counted by a statement PostgreSQL prepares once per connection (planning
    its joins cost more than running it), and it counts right each time."""
    client = login_client("a1")
    a = first_assignment("a1")
    criteria = criteria_for_response(response=a.response)
    connection.ensure_connection()
    before = connection.connection.prepare_threshold
    connection.connection.prepare_threshold = 0
    try:
        for n, c in enumerate(criteria[:3], start=1):
            html = _save(client, a, c, verdict="met", revision="0").content.decode()
            assert f"{n} / 4 decided" in html
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
                           ["%COUNT(c.id), COUNT(l.id)%"])
            assert cursor.fetchone()[0] == 1
    finally:
        connection.connection.prepare_threshold = before


def test_chat_transcript_is_rendered(study, login_client):
    a = first_assignment("a1")
    case = a.response.case
    case.messages = [{"role": "user", "content": "My child has a *fever*."}, {"role": "assistant", "content": "How long?"}]
    case.save()
    html = login_client("a1").get(f"/work/{a.pk}/").content.decode()
    assert "<em>fever</em>" in html and "msg-assistant" in html


def test_save_returns_the_row_and_the_counter_out_of_band(study, login_client):
    client = login_client("a1")
    a = first_assignment("a1")
    c = criteria_for_response(response=a.response)[0]
    response = _save(client, a, c, verdict="met", revision="0")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith(f'<form class="crit decided" id="crit-{c.pk}"')
    assert 'aria-pressed="true" data-key="1">Met' in html and "Saved ✓" in html
    assert 'id="progress" class="progress-bar card" hx-swap-oob="true"' in html and "1 / 4 decided" in html
    assert 'name="revision" value="1"' in html
    state = client.post(f"/work/{a.pk}/criteria/{c.pk}/", {"rationale": "clear", "revision": "1", "part": "state"}, **HTMX)
    assert state.content.decode().lstrip().startswith(f'<div class="crit-state" id="state-{c.pk}"')
    assert Label.objects.get(criterion=c, annotator=a.annotator).rationale == "clear"


def test_stale_save_shows_conflict_and_keeps_the_stored_value(study, login_client):
    client = login_client("a1")
    a = first_assignment("a1")
    c = criteria_for_response(response=a.response)[0]
    _save(client, a, c, verdict="met", revision="0")
    html = _save(client, a, c, verdict="not_met", revision="0").content.decode()
    assert "changed in another tab" in html and 'aria-pressed="true" data-key="1">Met' in html
    assert Label.objects.get(criterion=c, annotator=a.annotator).verdict == "met"


def test_save_without_htmx_redirects_back(study, login_client):
    client = login_client("a1")
    a = first_assignment("a1")
    c = criteria_for_response(response=a.response)[0]
    response = client.post(f"/work/{a.pk}/criteria/{c.pk}/", {"verdict": "met", "revision": "0"})
    assert response.status_code == 302 and response.url.endswith(f"/work/{a.pk}/#crit-{c.pk}")
    assert Label.objects.filter(criterion=c, annotator=a.annotator).exists()


def test_bad_save_input_is_shown_in_the_row(study, login_client):
    client = login_client("a1")
    a = first_assignment("a1")
    c = criteria_for_response(response=a.response)[0]
    html = _save(client, a, c, verdict="maybe").content.decode()
    assert "is not one of the available choices" in html
    html = _save(client, a, c, rationale="why").content.decode()
    assert "choose a decision first" in html
    assert not Label.objects.exists()


def test_submit_then_read_only(study, login_client):
    client = login_client("a1")
    a = first_assignment("a1")
    criteria = criteria_for_response(response=a.response)
    response = client.post(f"/work/{a.pk}/submit/")
    assert response.status_code == 302 and Assignment.objects.get(pk=a.pk).status == "open"  # refused: undecided
    for c in criteria:
        _save(client, a, c, **({"verdict": "met"} if c.kind == "binary" else {"option": "good"}))
    response = client.post(f"/work/{a.pk}/submit/", {"seconds": "42.5"})
    a.refresh_from_db()
    assert response.status_code == 302 and a.status == "submitted" and a.active_seconds >= 42.5
    html = client.get(f"/work/{a.pk}/").content.decode()
    assert "read-only" in html and 'id="submit-btn"' not in html and "disabled>Met" in html.replace("\n", "")
    html = _save(client, a, criteria[0], verdict="not_met", revision="1").content.decode()
    assert "submitted and read-only" in html
    assert Label.objects.get(criterion=criteria[0], annotator=a.annotator).verdict == "met"


def test_time_heartbeat(study, login_client):
    client = login_client("a1")
    a = first_assignment("a1")
    assert client.post(f"/work/{a.pk}/time/", {"seconds": "7"}).status_code == 204
    assert client.post(f"/work/{a.pk}/time/", {"seconds": "nope"}).status_code == 400
    a.refresh_from_db()
    assert a.active_seconds == 7


def _submitted(client, username="a1"):
    a = first_assignment(username)
    for c in criteria_for_response(response=a.response):
        _save(client, a, c, rationale=f"RATIONALE-{username}-{c.pk}",
              **({"verdict": "met"} if c.kind == "binary" else {"option": "ok"}))
    client.post(f"/work/{a.pk}/submit/", {"seconds": "1"})
    return a


def test_checker_review_override_and_complete(study, client, login_client):
    a = _submitted(login_client("a1"))
    checker = login_client("chk1")
    queue = checker.get("/review/study/").content.decode()
    item = f"/review/items/{a.response_id}/"
    assert item in queue and "response 1" in queue and ">a1<" in queue
    assert checker.get(f"/review/assignments/{a.pk}/")["Location"] == item  # old per-assignment links still work
    page = checker.get(item).content.decode()
    criteria = criteria_for_response(response=a.response)
    assert f"RATIONALE-a1-{criteria[0].pk}" in page and "0 / 4 decided by you" in page and "0 disagreements" in page
    for model in MODELS:
        assert model not in page
    html = checker.post(f"{item}criteria/{criteria[0].pk}/",
                        {"choice": "verdict:not_met", "note": "not really"}, **HTMX).content.decode()
    assert "Cohort decision (checker chk1)" in html and "not met" in html and "1 / 4 decided by you" in html
    html = checker.post(f"{item}criteria/{criteria[1].pk}/", {"choice": "verdict:not_met"}, **HTMX).content.decode()
    assert "needs a note" in html
    html = checker.post(f"{item}criteria/{criteria[1].pk}/", {"action": "confirm"}, **HTMX).content.decode()
    assert "2 / 4 decided by you" in html
    response = checker.post(f"{item}complete/")
    assert response.status_code == 302
    a.refresh_from_db()
    assert a.status == "checked"
    assert Label.objects.filter(response=a.response, role="checker").count() == len(criteria)
    assert LabelHistory.objects.filter(action="override", label__annotator__username="chk1").count() == 1
    checker.post(f"/review/assignments/{a.pk}/reopen/", {"reason": ""})
    a.refresh_from_db()
    assert a.status == "checked"  # no reason: refused
    checker.post(f"/review/assignments/{a.pk}/reopen/", {"reason": "Please quote the ECG sentence"})
    a.refresh_from_db()
    assert (a.status, a.reopen_reason) == ("in_progress", "Please quote the ECG sentence")


def _project_section(project, user):
    """The project page's section as grading/project.html renders it (the page itself is grading's)."""
    from django.template import Context, Template
    from django.test import RequestFactory

    request = RequestFactory().get("/projects/study/")
    request.user = user
    template = Template("{% load annotation_project %}{% project_assignments project %}")
    return template.render(Context({"project": project, "request": request}))


def test_researcher_pages_assign_reassign_reopen(study, login_client):
    client = login_client("res")
    section = _project_section(study.project, study.users["res"])
    assert "Assignments" in section and "/projects/study/assignments/assign/" in section
    assert 'data-cohort="group-1"' in section
    assert _project_section(study.project, study.users["a1"]) == ""  # researchers only
    Assignment.objects.filter(project=study.project).delete()
    response = client.post("/projects/study/assignments/assign/",
                           {"cohort": study.cohorts[0].pk, "overlap": 2, "method": "random", "seed": 3})
    assert response.status_code == 302
    assert Assignment.objects.filter(cohort=study.cohorts[0]).count() == 8
    response = client.post("/projects/study/assignments/assign/", {"cohort": study.cohorts[1].pk, "overlap": 2, "method": "round_robin"})
    assert "needs at least 2 annotators" in str(list(client.get("/projects/study/assignments/").context["messages"]))
    listing = client.get("/projects/study/assignments/").content.decode()
    assert "Reassign" in listing
    b_cohort = study.cohorts[1]
    client.post("/projects/study/assignments/assign/", {"cohort": b_cohort.pk, "overlap": 1, "method": "round_robin"})
    a = Assignment.objects.filter(annotator__username="b1").first()
    # reassigning into another cohort is refused; the assignment stays put
    client.post(f"/projects/study/assignments/{a.pk}/reassign/", {"username": "a1"})
    assert Assignment.objects.get(pk=a.pk).annotator.username == "b1"


@pytest.mark.parametrize("n_criteria", [30])
def test_labeling_page_query_count_is_bounded(db, login_client, n_criteria, django_assert_max_num_queries):
    build_study(slug="wide", n_cases=1, n_criteria=n_criteria, with_ordinal=False)
    a = first_assignment("a1")
    client = login_client("a1")
    for c in criteria_for_response(response=a.response)[:17]:
        _save(client, a, c, verdict="met", rationale="r")
    with django_assert_max_num_queries(8):
        html = client.get(f"/work/{a.pk}/").content.decode()
    assert "17 / 30 decided" in html


def test_one_save_is_one_small_request_with_few_queries(db, login_client):
    build_study(slug="wide", n_cases=1, n_criteria=30, with_ordinal=False)
    a = first_assignment("a1")
    client = login_client("a1")
    c = criteria_for_response(response=a.response)[5]
    with CaptureQueriesContext(connection) as queries:
        response = _save(client, a, c, verdict="met", revision="0")
    # session, user, savepoint, lock, read, label, history, status (first click), release, progress
    assert len(queries) <= 10, "\n".join(q["sql"][:150] for q in queries.captured_queries)
    assert len(response.content) < 6000


def test_checker_override_with_an_option_and_a_bad_choice(study, login_client):
    a = _submitted(login_client("a1"))
    checker = login_client("chk1")
    ordinal = criteria_for_response(response=a.response)[-1]
    url = f"/review/items/{a.response_id}/criteria/{ordinal.pk}/"
    html = checker.post(url, {"choice": "banana", "note": "n"}, **HTMX).content.decode()
    assert "choose one of the offered decisions" in html
    html = checker.post(url, {"choice": ""}, **HTMX).content.decode()
    assert "choose a decision, or confirm the shared one" in html
    html = checker.post(url, {"choice": "option:excellent", "note": "n"}, **HTMX).content.decode()
    assert "not among the options" in html
    checker.post(url, {"choice": "option:good", "note": "warmer than ok"}, **HTMX)
    label = Label.objects.get(criterion=ordinal, role="checker")
    assert (label.option_label, label.value, label.rationale) == ("good", 1.0, "warmer than ok")


def test_researcher_home_lists_projects_and_annotators_do_not_see_them(study, login_client):
    assert "/projects/study/assignments/" in login_client("res").get("/").content.decode()
    assert "research-projects" not in login_client("a1").get("/").content.decode()


def test_list_pages_have_bounded_query_counts(db, login_client, django_assert_max_num_queries):
    from annotation.assignments import assignment_submit
    from annotation.services import label_record

    build_study(slug="lists", n_cases=8, n_criteria=2, with_ordinal=False, annotators=(("a1", "a2"), ("b1",)))
    for assignment in Assignment.objects.filter(cohort__name="group-1"):
        for c in criteria_for_response(response=assignment.response):
            label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=assignment.annotator, verdict="met")
        assignment_submit(assignment=assignment, user=assignment.annotator)
    client = login_client("a1")
    with django_assert_max_num_queries(6):
        assert "8 of 8 done" in client.get("/").content.decode()
    client = login_client("chk1")
    with django_assert_max_num_queries(9):
        html = client.get("/review/lists/").content.decode()
    assert html.count("/review/items/") == 16
    client = login_client("res")
    with django_assert_max_num_queries(14):
        html = client.get("/projects/lists/assignments/").content.decode()
    assert html.count('data-assignment="') == 32
