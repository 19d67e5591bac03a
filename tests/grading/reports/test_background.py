"""Reports as background work everywhere (issue 26, point 3), in one process with eager Celery (the
real worker and Redis: tests/test_broker_reports.py): the page, the API and the command share one
cached computation; a request that finds none queued queues one, later identical ones wait for
it (202 and a status URL that answers with the result, or with why there is none: 409, 404, 400,
500); a changed label makes the next request compute once more, not every request."""
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from annotation.models import Label
from annotation.services import label_save
from grading.reports import background, registry
from grading.reports.cli import report_command
from grading.reports.registry import Params, Report, ReportUnavailable, choice
from grading.reports.tasks import report_compute
from grading.sources import project_sources
from tests.roles import grant

OUTCOMES = ["counts", "unavailable", "missing", "invalid", "broken"]
computed: list[str] = []


class ProbeParams(Params):
    outcome = choice(OUTCOMES, what="outcome", default="counts")


def probe(*, inputs, outcome: str = "counts", ci: bool = False) -> dict:
    """Decided items per cohort, or the end ``outcome`` names; every computation is counted."""
    computed.append(outcome)
    if outcome == "unavailable":
        raise ReportUnavailable("the project's data cannot give it")
    if outcome == "missing":
        raise LookupError("project 'mini' has no such thing")
    if outcome == "invalid":
        raise ValueError("a wrong value")
    if outcome == "broken":
        raise RuntimeError("a fault of the code")
    return {"counts": {c.spec: len(inputs.decisions(c)) for c in project_sources(project=inputs.project)["cohorts"]}}


PROBE = Report(key="probe", title="Probe", params=ProbeParams, compute=probe, intervals=True, cannot_assess="verdict")
URL = "/api/projects/mini/reports/probe/"


@pytest.fixture
def declared():
    computed.clear()
    registry.register(PROBE)
    yield PROBE
    registry.unregister(PROBE.key)


@pytest.fixture
def viewer(mini_project):
    client = Client()
    client.force_login(grant(get_user_model().objects.create_user("reader"), mini_project, "viewer"))
    return client


@pytest.fixture
def queued(monkeypatch):
    """The computations requests queue, held instead of run (as if no worker had taken them yet)."""
    held: list[dict] = []
    monkeypatch.setattr(background, "_enqueue", lambda **kwargs: held.append(kwargs))
    return held


def _command(*args) -> dict:
    out = io.StringIO()
    call_command(report_command("probe")(), "--project=mini", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def _change_a_label():
    label = Label.objects.select_related("response", "criterion", "cohort", "annotator").get(
        annotator__username="ann3", response__external_id="r2", criterion__external_id="c1-ecg")
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, verdict="not_met", replace=True)


def test_a_request_queues_one_computation_and_its_status_url_answers_with_the_result(declared, viewer, queued):
    first, second = viewer.get(URL, {"ci": "true"}), viewer.get(URL, {"ci": "yes"})
    assert (first.status_code, second.status_code) == (202, 202) and len(queued) == 1  # the second found it queued
    body = first.json()
    assert body["status"] == "pending" and first["Location"] == body["status_url"] and body["since"].endswith("Z")
    assert body["status_url"].startswith("http://testserver/api/projects/mini/reports/status/")
    assert viewer.get(body["status_url"]).status_code == 202 and len(queued) == 1  # asking again queues nothing
    report_compute(**queued[0])  # the worker
    done = viewer.get(body["status_url"])
    assert done.status_code == 200 and done.json()["counts"] == {"cohort:group-1": 11, "cohort:group-2": 11}
    assert viewer.get(second["Location"]).json() == done.json() == viewer.get(URL, {"ci": "true"}).json()
    assert computed == ["counts"]


def test_identical_requests_get_one_status_url_whenever_they_are_made(declared, viewer, queued, monkeypatch):
    """The status URL is named by the request alone: a second identical request made seconds later
    (the same second or not: CI saw two concurrent ones straddle one) gets the same URL. A status
    URL signed with a time, as they were handed out before, still answers."""
    import time

    from django.core import signing

    from grading.api.reports import STATUS_SALT

    first = viewer.get(URL, {"ci": "true"})
    later = time.time() + 5
    monkeypatch.setattr(signing.time, "time", lambda: later)
    second = viewer.get(URL, {"ci": "true"})
    assert first.status_code == second.status_code == 202 and len(queued) == 1
    assert first["Location"] == second["Location"] == second.json()["status_url"]
    report_compute(**queued[0])
    token = first["Location"].rstrip("/").rsplit("/", 1)[1]
    payload = signing.Signer(salt=STATUS_SALT).unsign_object(token)
    timed = signing.dumps(payload, salt=STATUS_SALT, compress=True)
    old = viewer.get(f"/api/projects/mini/reports/status/{timed}/")
    assert old.status_code == 200 and old.json() == viewer.get(first["Location"]).json()
    assert viewer.get(f"/api/projects/mini/reports/status/{token[:-2]}xx/").status_code == 404


def test_a_changed_label_is_computed_once_more_not_per_request(declared, viewer):
    answers = [viewer.get(URL) for _ in range(2)]  # eager: the first request's computation ran inside it
    assert [a.status_code for a in answers] == [200, 200] and computed == ["counts"]
    _change_a_label()
    again = [viewer.get(URL) for _ in range(3)]
    assert [a.status_code for a in again] == [200] * 3 and computed == ["counts", "counts"]
    assert again[0].json() == again[2].json() and again[0].json()["counts"]["cohort:group-1"] == 11


def test_a_label_changed_while_queued_is_computed_for_the_data_as_it_is(declared, viewer, queued):
    pending = viewer.get(URL)
    _change_a_label()
    report_compute(**queued[0])  # queued for the old data: computes the new, under the new key
    assert viewer.get(pending["Location"]).status_code == 200 and len(queued) == 1 and computed == ["counts"]


def test_the_command_and_the_api_share_one_entry(declared, viewer):
    printed = _command("--outcome=counts")
    assert computed == ["counts"]
    answer = viewer.get(URL, {"outcome": "counts"})
    assert answer.status_code == 200 and answer.json() == printed and computed == ["counts"]
    assert _command() == printed and computed == ["counts"]


def test_a_command_reads_what_a_queued_computation_stored(declared, viewer, queued):
    pending = viewer.get(URL)
    report_compute(**queued[0])
    assert _command()["counts"] == viewer.get(pending["Location"]).json()["counts"] and computed == ["counts"]


@pytest.mark.parametrize("outcome, code, words", [
    ("unavailable", 409, "the project's data cannot give it"), ("missing", 404, "project 'mini' has no such thing"),
    ("invalid", 400, "a wrong value"), ("broken", 500, "RuntimeError: a fault of the code")])
def test_the_status_url_answers_why_a_computation_ended_without_a_result(declared, viewer, queued, outcome, code, words,
                                                                           caplog):
    pending = viewer.get(URL, {"outcome": outcome})
    assert pending.status_code == 202
    report_compute(**queued[0])
    ended = viewer.get(pending["Location"])
    assert (ended.status_code, ended.json()) == (code, {"detail": words})
    assert viewer.get(URL, {"outcome": outcome}).status_code == code and computed == [outcome]  # remembered, not redone
    assert ("a fault of the code" in caplog.text) == (outcome == "broken")  # a fault is logged with its traceback


def test_a_domain_error_is_answered_at_once_under_eager_celery(declared, viewer):
    answer = viewer.get(URL, {"outcome": "unavailable"})
    assert (answer.status_code, answer.json()) == (409, {"detail": "the project's data cannot give it"})


def test_a_status_url_is_the_projects_and_polling_it_is_not_throttled(declared, viewer, queued, monkeypatch, mini_project):
    from grading.api.reports import ReportIntervalThrottle

    monkeypatch.setattr(ReportIntervalThrottle, "rate", "1/hour", raising=False)
    pending = viewer.get(URL, {"ci": "true"})
    assert [viewer.get(pending["Location"]).status_code for _ in range(3)] == [202] * 3
    assert viewer.get(URL, {"ci": "true"}).status_code == 429  # the report's own URL still is
    assert viewer.get("/api/projects/mini/reports/status/" + "0" * 32 + "/").status_code == 404
    other = Client()
    other.force_login(get_user_model().objects.create_user("stranger"))
    assert other.get(pending["Location"]).status_code == 404  # no role in the project
    assert viewer.get(pending["Location"].replace("/mini/", "/elsewhere/")).status_code == 404


def test_the_page_and_the_api_share_the_reports_entry(mini_project, viewer, monkeypatch):
    from grading.reports import cache

    runs = []
    real = cache.report_cached

    def counted(*, compute, **scope):
        return real(compute=lambda: runs.append(scope["name"]) or compute(), **scope)

    monkeypatch.setattr(registry, "report_cached", counted)
    assert viewer.get("/projects/mini/reports/scores/", {"source": "cohort:group-1"}).status_code == 200
    assert runs == ["scores"]
    answer = viewer.get("/api/projects/mini/reports/scores/", {"source": "cohort:group-1"})
    assert answer.status_code == 200 and runs == ["scores"] and answer.json()["by_model"]
