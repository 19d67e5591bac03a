"""The annotator-quality page and API: managers only (an annotator, a checker or an outsider gets
404, a viewer or an adjudicator 403), the settings and seeding forms and endpoints with their
refusals, the JSON the schema documents, and the feedback page and endpoint of an annotator."""
import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, AuditEvent
from grading.goldcheck import selectors
from tests.grading.goldcheck.conftest import label_all
from tests.roles import grant


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def manager(gold_study):
    return _client(gold_study.manager)


def test_who_may_see_the_page_and_the_api(gold_study, django_user_model):
    project = gold_study.project
    viewer = grant(django_user_model.objects.create_user("v"), project, "viewer")
    adjudicator = grant(django_user_model.objects.create_user("adj"), project, "adjudicator")
    for user, code in ((gold_study.users["careful"], 404), (gold_study.users["chk1"], 404),
                       (gold_study.users["outsider"], 404), (viewer, 403), (adjudicator, 403), (gold_study.manager, 200)):
        client = _client(user)
        assert client.get("/projects/gc/annotator-quality/").status_code == code, user
        assert client.get("/api/projects/gc/annotator-quality/").status_code == code, user
        if code != 200:
            assert client.post("/projects/gc/annotator-quality/seed/", {"seed": 0}).status_code == code
            assert client.post("/api/projects/gc/annotator-quality/checks/", {"seed": 0},
                               content_type="application/json").status_code == code
            assert client.patch("/api/projects/gc/annotator-quality/", {"check_rate": 0.5},
                                content_type="application/json").status_code == code
    assert not Assignment.objects.filter(is_check=True).exists()
    assert Client().get("/projects/gc/annotator-quality/").status_code == 302  # to the login page


def test_the_page_forms_set_the_settings_and_seed(gold_study, manager):
    page = manager.get("/projects/gc/annotator-quality/").content.decode()
    assert 'id="quality-annotators"' in page and 'data-annotator="careful"' in page and "set a check-item rate first" in page
    refused = manager.post("/projects/gc/annotator-quality/settings/", {
        "check_rate": "0.8", "check_alert_threshold": "0.7", "check_min_items": "5", "check_window": "10"}, follow=True)
    assert "Settings not saved" in refused.content.decode() and "check_rate" in refused.content.decode()
    gold_study.project.refresh_from_db()
    assert gold_study.project.check_rate == 0.0
    saved = manager.post("/projects/gc/annotator-quality/settings/", {
        "check_rate": "0.5", "check_alert_threshold": "0.8", "check_min_items": "5", "check_window": "4",
        "check_feedback": "on"}, follow=True)
    assert "Settings saved (5 changed)" in saved.content.decode()
    event = AuditEvent.objects.get(project=gold_study.project, action="settings")
    assert event.after == {"check_rate": 0.5, "check_alert_threshold": 0.8, "check_min_items": 5, "check_window": 4,
                           "check_feedback": True}
    seeded = manager.post("/projects/gc/annotator-quality/seed/", {"seed": "3", "cohort": gold_study.cohorts[0].pk},
                          follow=True).content.decode()
    assert "20 check items seeded" in seeded
    again = manager.post("/projects/gc/annotator-quality/seed/", {"seed": "3"}, follow=True).content.decode()
    assert "already holds its share" in again
    assert manager.post("/projects/gc/annotator-quality/seed/", {"seed": "x"}, follow=True).status_code == 200
    assert manager.post("/projects/gc/annotator-quality/seed/", {"seed": "1", "cohort": 999999}).status_code == 404


def test_the_api_reports_each_annotator_and_seeds(gold_study, manager):
    patched = manager.patch("/api/projects/gc/annotator-quality/", {"check_rate": 0.5, "check_window": 3,
                                                                    "check_min_items": 2}, content_type="application/json")
    assert patched.status_code == 200, patched.content
    assert patched.json()["settings"]["check_rate"] == 0.5
    bad = manager.patch("/api/projects/gc/annotator-quality/", {"check_rate": "lots"}, content_type="application/json")
    assert bad.status_code == 400 and "check_rate" in bad.json()
    missing = manager.post("/api/projects/gc/annotator-quality/checks/", {"seed": 1, "cohort": "nobody"},
                           content_type="application/json")
    assert missing.status_code == 404
    seeded = manager.post("/api/projects/gc/annotator-quality/checks/", {"seed": 1}, content_type="application/json")
    assert seeded.status_code == 201 and seeded.json()["created"] == 20 and seeded.json()["eligible"] == 40
    for assignment in Assignment.objects.filter(annotator__username="careful").select_related("response", "annotator"):
        label_all(assignment)
    report = manager.get("/api/projects/gc/annotator-quality/").json()
    assert report["check_items"] == {"seeded": 20, "submitted": 10}
    rows = {row["annotator"]: row for row in report["annotators"]}
    careful = rows["careful"]
    assert careful["check_items"] == 10 and careful["agreement"] == 1.0 and careful["alert"] is False
    assert careful["window_items"] == 3 and len(careful["drift"]) == 10 and careful["drift"][0] == {"item": 1, "agreement": 1.0}
    assert rows["careless"]["check_items"] == 0 and rows["careless"]["agreement"] is None
    # The manager's assignment list says which are checks; the annotator's never does.
    listed = manager.get("/api/projects/gc/assignments/", {"annotator": "careful", "limit": 1000}).json()["results"]
    assert sum(a["is_check"] for a in listed) == 10
    schema = manager.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "/api/projects/{slug}/annotator-quality/" in schema["paths"]
    assert "/api/projects/{slug}/my-feedback/" in schema["paths"]
    assert "AnnotatorQualityReport" in schema["components"]["schemas"]


def test_an_annotator_reads_only_their_own_feedback_when_allowed(gold_study, manager, monkeypatch):
    careful = _client(gold_study.users["careful"])
    assert careful.get("/work/feedback/gc/").status_code == 403
    assert careful.get("/api/projects/gc/my-feedback/").status_code == 403
    assert "Your agreement" not in careful.get("/").content.decode()
    manager.patch("/api/projects/gc/annotator-quality/", {"check_rate": 0.5, "check_feedback": True, "check_min_items": 5},
                  content_type="application/json")
    manager.post("/api/projects/gc/annotator-quality/checks/", {"seed": 1}, content_type="application/json")
    for assignment in Assignment.objects.filter(annotator__username="careful").select_related("response", "annotator"):
        label_all(assignment)
    monkeypatch.setattr(selectors, "feedback_cutoff", lambda: timezone.localtime() + dt.timedelta(days=1))
    assert "Your agreement" in careful.get("/").content.decode()
    page = careful.get("/work/feedback/gc/").content.decode()
    assert "100 %" in page and "at least 10 items" in page
    own = careful.get("/api/projects/gc/my-feedback/").json()
    assert own["agreement"] == 1.0 and own["below_threshold"] is False
    # Nobody else's figures: the endpoint has no parameter for another user, and a non-annotator gets a 404.
    assert careful.get("/api/projects/gc/my-feedback/", {"annotator": "careless"}).json() == own
    assert _client(gold_study.users["chk1"]).get("/api/projects/gc/my-feedback/").status_code == 404
    assert _client(gold_study.users["outsider"]).get("/work/feedback/gc/").status_code == 404
    assert manager.get("/api/projects/nope/my-feedback/").status_code == 404


def test_the_page_and_the_api_cost_the_same_queries_however_many_annotators(gold_study, manager):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.models import CohortMembership

    manager.patch("/api/projects/gc/annotator-quality/", {"check_rate": 0.5}, content_type="application/json")
    manager.post("/api/projects/gc/annotator-quality/checks/", {"seed": 1}, content_type="application/json")

    def counted() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as page:
            assert manager.get("/projects/gc/annotator-quality/").status_code == 200
        with CaptureQueriesContext(connection) as api:
            assert manager.get("/api/projects/gc/annotator-quality/").status_code == 200
        return len(page), len(api)

    before = counted()
    for name in ("more-1", "more-2", "more-3"):
        user = gold_study.users["careful"].__class__.objects.create_user(name)
        CohortMembership.objects.create(project=gold_study.project, cohort=gold_study.cohorts[1], user=user,
                                        role="annotator")
        for position, response in enumerate(gold_study.responses[:2]):
            Assignment.objects.create(project=gold_study.project, cohort=gold_study.cohorts[1], annotator=user,
                                      response=response, position=position)
    manager.post("/api/projects/gc/annotator-quality/checks/", {"seed": 1}, content_type="application/json")
    assert counted() == before
