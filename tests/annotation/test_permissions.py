"""Independence and blinding (SPEC §8, issue 4 point 5): every view, partial and API endpoint is
requested directly by id by users who must not reach the object, and answers 404 / 403 (or the
login redirect for anonymous users) without changing anything."""
import pytest

from annotation.models import Assignment, Label
from annotation.selectors import criteria_for_response
from tests.annotation.conftest import MODELS, build_study, first_assignment

HTMX = {"HTTP_HX_REQUEST": "true"}
NOT_THE_OWNER = ["a2", "b1", "chk1", "chk2", "outsider", "res"]
NOT_THE_COHORTS_CHECKER = ["a1", "a2", "b1", "chk2", "outsider", "res"]


@pytest.fixture
def shared(db):
    """Cohort 1 (a1, a2) with overlap 2 and cohort 2 (b1) label the same responses."""
    study = build_study(slug="shared", n_cases=1, overlap=2, annotators=(("a1", "a2"), ("b1", "b2")))
    mine = first_assignment("a1")
    criteria = criteria_for_response(response=mine.response)
    for username in ("a2", "b1"):
        theirs = Assignment.objects.get(annotator__username=username, response=mine.response)
        from annotation.services import label_record

        for c in criteria:
            label_record(assignment_id=theirs.pk, criterion_id=c.pk, user=study.users[username],
                         rationale=f"SECRET-{username}-RATIONALE",
                         **({"verdict": "not_met"} if c.kind == "binary" else {"option_label": "poor"}))
    return study, mine, criteria


def _annotator_requests(a, c):
    return [
        ("get", f"/work/{a.pk}/", {}, {}),
        ("post", f"/work/{a.pk}/criteria/{c.pk}/", {"verdict": "met", "revision": "0"}, HTMX),
        ("post", f"/work/{a.pk}/criteria/{c.pk}/", {"verdict": "met", "revision": "0"}, {}),
        ("post", f"/work/{a.pk}/criteria/{c.pk}/", {"verdict": "bogus"}, HTMX),
        ("post", f"/work/{a.pk}/submit/", {"seconds": "1"}, {}),
        ("post", f"/work/{a.pk}/time/", {"seconds": "1"}, {}),
        ("get", f"/api/assignments/{a.pk}/", {}, {}),
        ("post", f"/api/assignments/{a.pk}/submit/", {}, {}),
        ("post", "/api/labels/", {"assignment": a.pk, "criterion": c.pk, "verdict": "met", "revision": 0},
         {"content_type": "application/json"}),  # the API reads JSON bodies only
    ]


def _checker_requests(a, c):
    item = f"/review/items/{a.response_id}/"
    return [
        ("get", item, {}, {}),
        ("get", f"/review/assignments/{a.pk}/", {}, {}),
        ("post", f"{item}criteria/{c.pk}/", {"action": "confirm"}, HTMX),
        ("post", f"{item}criteria/{c.pk}/", {"choice": "verdict:met", "note": "x"}, {}),
        ("post", f"{item}complete/", {}, {}),
        ("post", f"/review/assignments/{a.pk}/reopen/", {}, {}),
    ]


@pytest.mark.parametrize("username", NOT_THE_OWNER)
def test_nobody_else_reaches_an_annotators_assignment(shared, login_client, username):
    study, mine, criteria = shared
    client = login_client(username)
    before = list(Label.objects.order_by("pk").values_list("pk", "revision"))
    for method, url, data, headers in _annotator_requests(mine, criteria[0]):
        response = getattr(client, method)(url, data, **headers)
        assert response.status_code == 404, (username, method, url, response.status_code)
    assert list(Label.objects.order_by("pk").values_list("pk", "revision")) == before
    mine.refresh_from_db()
    assert (mine.status, mine.active_seconds) == ("open", 0)


def test_criterion_of_another_case_is_404_for_the_owner(db, login_client):
    build_study(slug="two", n_cases=2)
    mine = first_assignment("a1")
    other = next(c for c in Label._meta.get_field("criterion").related_model.objects.filter(project=mine.project)
                 if c.case_id != mine.response.case_id)
    response = login_client("a1").post(f"/work/{mine.pk}/criteria/{other.pk}/", {"verdict": "met"}, **HTMX)
    assert response.status_code == 404


def test_anonymous_is_sent_to_login_and_the_api_refuses(shared, client):
    study, mine, criteria = shared
    for method, url, data, headers in _annotator_requests(mine, criteria[0]) + _checker_requests(mine, criteria[0]):
        response = getattr(client, method)(url, data, **headers)
        if url.startswith("/api/"):
            assert response.status_code == 401, url  # token authentication first: asks for credentials
        else:
            assert response.status_code == 302 and "/accounts/login/" in response.url, url
    assert client.get("/api/assignments/").status_code == 401


def _submit(client, assignment, criteria):
    for c in criteria:
        client.post(f"/work/{assignment.pk}/criteria/{c.pk}/",
                    {"verdict": "met"} if c.kind == "binary" else {"option": "ok"}, **HTMX)
    client.post(f"/work/{assignment.pk}/submit/", {"seconds": "1"})
    assignment.refresh_from_db()
    assert assignment.status == "submitted"


@pytest.mark.parametrize("username", NOT_THE_COHORTS_CHECKER)
def test_only_the_cohorts_checker_reviews(shared, login_client, username):
    study, mine, criteria = shared
    _submit(login_client("a1"), mine, criteria)
    client = login_client(username)
    for method, url, data, headers in _checker_requests(mine, criteria[0]):
        response = getattr(client, method)(url, data, **headers)
        assert response.status_code == 404, (username, url, response.status_code)
    assert not Label.objects.filter(role="checker").exists()
    mine.refresh_from_db()
    assert mine.status == "submitted"


def test_review_queue_is_the_checkers_own_cohort_only(shared, login_client):
    study, mine, criteria = shared
    _submit(login_client("a1"), mine, criteria)
    item = f"/review/items/{mine.response_id}/"
    assert item in login_client("chk1").get("/review/shared/").content.decode()
    assert item not in login_client("chk2").get("/review/shared/").content.decode()
    for username in ("a1", "b1", "outsider"):
        assert login_client(username).get("/review/shared/").status_code == 404


def test_checker_sees_only_their_cohorts_labels(shared, login_client):
    study, mine, criteria = shared
    _submit(login_client("a1"), mine, criteria)
    html = login_client("chk1").get(f"/review/items/{mine.response_id}/").content.decode()
    # both annotators of the checker's own cohort side by side; never the other cohort's
    assert "SECRET-a2-RATIONALE" in html and ">a1<" in html
    assert "SECRET-b1-RATIONALE" not in html
    for model in MODELS:
        assert model not in html


@pytest.mark.parametrize("url", ["/projects/shared/assignments/"])
def test_researcher_pages_are_the_managers(shared, login_client, client, url):
    """Cohort members and outsiders have no role in the project: 404 for its manager pages (the
    project's existence is not revealed), and nothing changes."""
    study, mine, _ = shared
    posts = [
        ("/projects/shared/assignments/assign/", {"cohort": study.cohorts[0].pk, "overlap": 1, "method": "round_robin"}),
        (f"/projects/shared/assignments/{mine.pk}/reassign/", {"username": "a2"}),
        (f"/projects/shared/assignments/{mine.pk}/reopen/", {}),
    ]
    count = Assignment.objects.count()
    for username in ("a1", "chk1", "outsider"):
        c = login_client(username)
        assert c.get(url).status_code == 404
        for post_url, data in posts:
            assert c.post(post_url, data).status_code == 404
    client.logout()
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert Assignment.objects.count() == count and Assignment.objects.get(pk=mine.pk).annotator.username == "a1"
    assert login_client("res").get(url).status_code == 200


def test_annotator_never_sees_other_annotators_or_cohorts_labels(shared, login_client):
    study, mine, criteria = shared
    client = login_client("a1")
    for url in (f"/work/{mine.pk}/", f"/api/assignments/{mine.pk}/", "/api/assignments/", "/"):
        body = client.get(url).content.decode()
        assert "SECRET-" not in body, url
        for model in MODELS:
            assert model not in body, url
    html = client.post(f"/work/{mine.pk}/criteria/{criteria[0].pk}/", {"verdict": "met", "revision": "0"}, **HTMX).content.decode()
    assert "SECRET-" not in html and "Not met" in html  # the button caption, not a2's decision
    assert 'aria-pressed="true" data-key="1">Met' in html


def test_judge_verdicts_never_reach_the_annotator(mini_project, login_client):
    from django.contrib.auth import get_user_model

    from annotation.assignments import assignments_create
    from annotation.models import Cohort, CohortMembership

    user = get_user_model().objects.create_user("fresh", password="pw-12345")
    cohort = Cohort.objects.get(project=mini_project, name="group-1")
    CohortMembership.objects.create(project=mini_project, cohort=cohort, user=user, role="annotator")
    CohortMembership.objects.filter(cohort=cohort, role="annotator").exclude(user=user).update(role="checker")
    assignments_create(cohort=cohort, overlap=1)
    client = login_client("fresh")
    for assignment in Assignment.objects.filter(annotator=user):
        for url in (f"/work/{assignment.pk}/", f"/api/assignments/{assignment.pk}/"):
            body = client.get(url).content.decode()
            for leak in ("Mentions ECG", "Mostly fine", "gpt-x", "judge-a", "model-a", "model-b", "physician",
                         "Warm and clear"):
                assert leak not in body, (url, leak)
