"""The pipeline API's own rules (issue 15): report endpoints take exactly their command's options
and only the project's own sources, lists paginate in a stable order, uploads over the limit are
a 413 before they are read, and what a service refuses is a 400 naming the field."""
import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from grading.api.judges import ScopeInput
from grading.judges.plan import SCOPE_KEYS
from grading.models import DataJob
from tests.roles import grant


@pytest.fixture
def manager(mini_project):
    client = Client()
    client.force_login(grant(get_user_model().objects.create_user("api-manager"), mini_project))
    return client


def test_the_run_scope_input_knows_every_scope_key():
    assert set(ScopeInput().fields) == set(SCOPE_KEYS)


def test_a_report_endpoint_refuses_unknown_options_naming_them(manager):
    response = manager.get("/api/projects/mini/reports/agreement/", {"a": "cohort:group-1", "b": "gold", "pairs": "/tmp/x"})
    assert response.status_code == 400 and "pairs" in response.json()
    assert "unknown parameter" in response.json()["pairs"][0]


def test_a_report_endpoint_takes_only_the_projects_own_sources(manager, mini_project):
    import pathlib
    import tempfile

    from grading.bundles import bundle_import
    from tests.bundles import bundle_parts, write_bundle

    parts = bundle_parts()
    parts["project"]["slug"] = "elsewhere"
    bundle_import(path=write_bundle(pathlib.Path(tempfile.mkdtemp()) / "b", parts))
    response = manager.get("/api/projects/mini/reports/agreement/", {"a": "cohort:group-1", "b": "elsewhere:cohort:group-1"})
    assert response.status_code == 400 and "unknown source" in response.json()["b"][0]
    assert "elsewhere" in response.json()["b"][0]  # the caller's own text, nothing looked up


def test_an_option_value_never_becomes_another_option(manager, tmp_path):
    target = tmp_path / "pairs.jsonl"
    response = manager.get("/api/projects/mini/reports/agreement/", {"a": "cohort:group-1", "b": f"--pairs={target}"})
    assert response.status_code == 400 and not target.exists()


def test_flags_take_true_or_false(manager):
    ok = manager.get("/api/projects/mini/reports/coverage/", {"source": "cohort:group-1", "ci": "true"})
    assert ok.status_code == 200 and "ci" in str(ok.json()).lower()
    bad = manager.get("/api/projects/mini/reports/coverage/", {"source": "cohort:group-1", "ci": "perhaps"})
    assert bad.status_code == 400 and "is not true or false" in bad.json()["ci"][0]


def test_report_requests_with_intervals_are_throttled_per_user(manager, monkeypatch):
    from django.core.cache import cache

    from grading.api.reports import ReportIntervalThrottle

    cache.clear()
    monkeypatch.setattr(ReportIntervalThrottle, "rate", "2/hour", raising=False)
    url, query = "/api/projects/mini/reports/reliability/", {"source": "cohort:group-1", "ci": "true"}
    assert [manager.get(url, query).status_code for _ in range(3)] == [200, 200, 429]
    assert manager.get(url, {"source": "cohort:group-1"}).status_code == 200  # without intervals: not counted
    assert manager.get(url, {**query, "ci": "false"}).status_code == 200


@pytest.mark.parametrize("spelling", ["T", "y", "On", "1"])
def test_every_spelling_of_true_counts_against_the_interval_throttle(manager, monkeypatch, spelling):
    from django.core.cache import cache

    from grading.api.reports import ReportIntervalThrottle

    cache.clear()
    monkeypatch.setattr(ReportIntervalThrottle, "rate", "1/hour", raising=False)
    url = "/api/projects/mini/reports/reliability/"
    first = manager.get(url, {"source": "cohort:group-1", "ci": spelling})
    assert first.status_code == 200 and "ci" in str(first.json()).lower()
    assert manager.get(url, {"source": "cohort:group-1", "ci": spelling}).status_code == 429


def test_report_switches_state_in_the_schema_every_spelling_they_accept(manager):
    schema = manager.get("/api/schema/", {"format": "json"}).json()
    queue = schema["paths"]["/api/projects/{slug}/reports/adjudication_queue/"]["get"]["parameters"]
    switch = next(p for p in queue if p["name"] == "all")["schema"]
    assert switch["anyOf"][0] == {"type": "boolean"} and "|)$" in switch["anyOf"][1]["pattern"]
    for name, path in (("ci", "/api/projects/{slug}/reports/reliability/"),):
        parameter = next(p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name)
        assert parameter["schema"] == switch
    assert manager.get("/api/projects/mini/reports/adjudication_queue/", {"all": ""}).status_code == 200


def test_command_errors_are_a_400_with_the_commands_words(manager):
    response = manager.get("/api/projects/mini/reports/agreement/", {"a": "cohort:group-1", "b": "cohort:nobody"})
    # A well-formed source naming no cohort of the project: not there (404), named in the field.
    assert response.status_code == 404 and "unknown cohort 'nobody'" in response.json()["b"][0]


def test_lists_paginate_in_a_stable_order(manager):
    first = manager.get("/api/projects/mini/criteria/", {"limit": 2}).json()
    rest = manager.get("/api/projects/mini/criteria/", {"limit": 100, "offset": 2}).json()
    assert first["count"] == rest["count"] and len(first["results"]) == 2
    ids = [c["id"] for c in first["results"] + rest["results"]]
    assert len(ids) == len(set(ids)) == first["count"]
    assert [c["id"] for c in manager.get("/api/projects/mini/criteria/", {"limit": 100}).json()["results"]] == ids


def test_filters_narrow_lists(manager):
    rows = manager.get("/api/projects/mini/criteria/", {"case_id": "c1"}).json()["results"]
    assert rows and {r["case_id"] for r in rows} == {"c1"}
    assert manager.get("/api/projects/mini/responses/", {"model": "model-b"}).json()["count"] == 1


def test_an_upload_over_the_limit_is_a_413_and_queues_nothing(manager, settings):
    settings.EVALSITE_MAX_UPLOAD_BYTES = 1000
    upload = SimpleUploadedFile("big.zip", b"PK" + bytes(200_000), content_type="application/zip")
    response = manager.post("/api/projects/mini/import/", {"bundle": upload})
    assert response.status_code == 413 and "the limit is" in response.json()["detail"]
    assert not DataJob.objects.exists()


def test_a_service_refusal_names_the_field(manager):
    response = manager.post("/api/projects/mini/assignments/", {"cohort": "group-1", "overlap": 9}, content_type="application/json")
    assert response.status_code == 400 and "overlap" in response.json()
    missing = manager.post("/api/projects/mini/assignments/", {"cohort": "no-such"}, content_type="application/json")
    assert missing.status_code == 404 and "no cohort 'no-such'" in missing.json()["cohort"][0]


def test_a_template_id_beyond_range_is_a_400_naming_it(manager):
    body = {"name": "templated", "backend": "baseline", "prompt_template": 2**64}
    response = manager.post("/api/projects/mini/judges/", body, content_type="application/json")
    assert response.status_code == 400 and "prompt_template" in response.json()
