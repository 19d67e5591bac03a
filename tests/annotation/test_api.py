"""The annotator API: own assignments only, blinding, saving labels with revisions, submit."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Label
from annotation.selectors import criteria_for_response
from tests.annotation.conftest import MODELS, build_study, first_assignment


def test_list_is_own_assignments_only_and_blind(study, login_client):
    client = login_client("a1")
    page = client.get("/api/assignments/").json()
    assert page["count"] == 2 and page["next"] is None
    body = page["results"]
    mine = {a.pk for a in first_assignment("a1").annotator.assignments.all()}
    assert {row["id"] for row in body} == mine and len(body) == 2
    assert set(body[0]) == {"id", "project", "case", "status", "position", "decided"}
    assert not any(m in str(body) for m in MODELS)


def test_list_query_count_is_constant(db, login_client):
    build_study(slug="many", n_cases=10, annotators=(("a1",), ("b1",)))
    client = login_client("a1")
    with CaptureQueriesContext(connection) as queries:
        assert len(client.get("/api/assignments/").json()["results"]) == 20
    assert len(queries) <= 5  # the page's count is one more


def test_detail_blind_and_not_blind(db, login_client):
    build_study(slug="blind")
    build_study(slug="seen", blind=False, show_reference=True, annotators=(("a1",), ("b1",)))
    client = login_client("a1")
    for a in first_assignment("a1").annotator.assignments.select_related("project", "response"):
        body = client.get(f"/api/assignments/{a.pk}/").json()
        assert "<script" not in body["response"]["html"]
        assert len(body["criteria"]) == body["total"]
        if a.project.blind:
            assert "model" not in body["response"] and not any(m in str(body) for m in MODELS)
            assert body["case"]["reference_answer"] is None
        else:
            assert body["response"]["model"] == a.response.model
            assert body["case"]["reference_answer"].startswith("REFERENCE-ANSWER-TEXT")


def test_save_label_revisions_conflict_and_errors(study, login_client):
    client = login_client("a1")
    a = first_assignment("a1")
    binary, ordinal = criteria_for_response(response=a.response)[0], criteria_for_response(response=a.response)[-1]
    response = client.post("/api/labels/", {"assignment": a.pk, "criterion": binary.pk, "verdict": "met", "revision": 0},
                           content_type="application/json")
    assert response.status_code == 200 and response.json()["revision"] == 1
    response = client.post("/api/labels/", {"assignment": a.pk, "criterion": binary.pk, "verdict": "not_met", "revision": 0},
                           content_type="application/json")
    assert response.status_code == 409 and "revision" in response.json()
    response = client.post("/api/labels/", {"assignment": a.pk, "criterion": binary.pk, "evidence_add": "An ECG is needed",
                                            "rationale": "seen", "revision": 1}, content_type="application/json")
    assert response.json()["evidence"] == ["An ECG is needed"] and response.json()["verdict"] == "met"
    bad = client.post("/api/labels/", {"assignment": a.pk, "criterion": ordinal.pk, "option": "stellar", "revision": 0},
                      content_type="application/json")
    assert bad.status_code == 400 and "option" in bad.json()
    bad = client.post("/api/labels/", {"assignment": a.pk, "criterion": binary.pk, "verdict": "perhaps", "revision": 2},
                      content_type="application/json")
    assert bad.status_code == 400
    blind = client.post("/api/labels/", {"assignment": a.pk, "criterion": binary.pk, "verdict": "not_met"},
                        content_type="application/json")
    assert blind.status_code == 400 and "revision" in blind.json()  # no last-write-wins save without a revision
    assert Label.objects.get(criterion=binary, annotator=a.annotator).revision == 2


def test_submit_via_api(study, login_client):
    client = login_client("a1")
    a = first_assignment("a1")
    assert client.post(f"/api/assignments/{a.pk}/submit/").status_code == 409  # criteria undecided: its state
    for c in criteria_for_response(response=a.response):
        data = {"assignment": a.pk, "criterion": c.pk, "revision": 0}
        data.update({"verdict": "cannot_assess"} if c.kind == "binary" else {"option": "good"})
        assert client.post("/api/labels/", data, content_type="application/json").status_code == 200
    assert client.post(f"/api/assignments/{a.pk}/submit/").json()["status"] == "submitted"
    late = client.post("/api/labels/", {"assignment": a.pk, "criterion": c.pk, "verdict": "cannot_assess", "revision": 1},
                       content_type="application/json")
    assert late.status_code == 409 and "read-only" in str(late.json())


@pytest.mark.parametrize("username", ["a2", "b1", "chk1", "res"])
def test_other_users_get_404_from_the_api(study, login_client, username):
    a = first_assignment("a1")
    c = criteria_for_response(response=a.response)[0]
    client = login_client(username)
    assert client.get(f"/api/assignments/{a.pk}/").status_code == 404
    assert client.post("/api/labels/", {"assignment": a.pk, "criterion": c.pk, "verdict": "met", "revision": 0},
                       content_type="application/json").status_code == 404
    assert client.post(f"/api/assignments/{a.pk}/submit/").status_code == 404
    assert a.pk not in {row["id"] for row in client.get("/api/assignments/").json()["results"]}
