"""The schema states the rules the server enforces (issue 27, point 9): a judge's body per backend
(its settings, its model, the endpoints and key variables the deployment pairs), an upload read in
the format it names whatever the file's name, the length penalty by numbers whose cap always
exceeds its free length, filters that refuse an empty value; what the schema cannot state (a name
the project does not have, a state that refuses) is a 404 or a 409, never a 400."""
import json
import re
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from grading.judges.backends import backend_get
from grading.judges.settings import judge_settings_parse
from grading.models import DataJob, Judge
from tests.bundles import write_bundle
from tests.roles import grant


@pytest.fixture
def manager(mini_project):
    client = Client()
    client.force_login(grant(get_user_model().objects.create_user("schema-manager"), mini_project))
    return client


def _schema(client) -> dict:
    return client.get("/api/schema/", HTTP_ACCEPT="application/json").json()


def _post_judge(client, body):
    return client.post("/api/projects/mini/judges/", body, content_type="application/json")


# --- judges ----------------------------------------------------------------------------------

def test_a_panel_states_and_needs_its_members(manager):
    schema = _schema(manager)["components"]["schemas"]["PanelJudgeInputRequest"]
    assert "settings" in schema["required"] and schema["properties"]["settings"]["required"] == ["members"]
    assert schema["properties"]["settings"]["properties"]["members"]["minItems"] == 2
    missing = _post_judge(manager, {"name": "vote", "backend": "panel"})
    assert missing.status_code == 400 and "settings" in missing.json()
    one = _post_judge(manager, {"name": "vote", "backend": "panel", "settings": {"members": ["judge-a"]}})
    assert one.status_code == 400 and "settings.members" in one.json()["settings"][0]
    assert not Judge.objects.filter(name="vote").exists()


def test_a_member_the_project_does_not_have_is_a_404_and_a_panel_member_a_409(manager, mini_project):
    absent = _post_judge(manager, {"name": "vote", "backend": "panel", "settings": {"members": ["judge-a", "nobody"]}})
    assert absent.status_code == 404 and "no judge 'nobody'" in absent.json()["settings"][0]
    itself = _post_judge(manager, {"name": "vote", "backend": "panel", "settings": {"members": ["judge-a", "vote"]}})
    assert itself.status_code == 404  # being created: not there yet
    Judge.objects.create(project=mini_project, name="lexical", backend=Judge.BASELINE)
    made = _post_judge(manager, {"name": "vote", "backend": "panel", "settings": {"members": ["judge-a", "lexical"]}})
    assert made.status_code == 201, made.content
    nested = _post_judge(manager, {"name": "vote-2", "backend": "panel", "settings": {"members": ["judge-a", "vote"]}})
    assert nested.status_code == 409 and "panels do not nest" in nested.json()["settings"][0]


def test_settings_are_checked_against_the_schema_the_api_states(manager):
    schema = _schema(manager)["components"]["schemas"]["OpenaiJudgeInputRequest"]["properties"]["settings"]
    assert schema["additionalProperties"] is False and "members" not in schema["properties"]
    body = {"name": "llm", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1"}
    for settings, named in (({"members": ["judge-a", "x"]}, "settings.members"), ({"json_mode": "yes"}, "settings.json_mode"),
                            ({"few_shot": {"k": 2}}, "settings.few_shot"), ({"timeout_seconds": 0}, "settings.timeout_seconds")):
        answer = _post_judge(manager, {**body, "settings": settings})
        assert answer.status_code == 400 and named in answer.json()["settings"][0], (settings, answer.content)
    cohort = _post_judge(manager, {**body, "settings": {"few_shot": {"cohort": "nobody", "k": 2}}})
    assert cohort.status_code == 404 and "no cohort 'nobody'" in cohort.json()["settings"][0]
    assert _post_judge(manager, {**body, "settings": {"few_shot": {"cohort": "group-1", "k": 2}}}).status_code == 201
    assert not _post_judge(manager, {**body, "name": "no-model", "model": " "}).status_code == 201


@pytest.mark.parametrize("backend", ["openai", "baseline", "panel"])
def test_every_key_a_backend_states_is_one_its_parser_takes(backend):
    """The schema states what the parser takes or less: each key's schema, at its bounds, parses."""
    schema = backend_get(backend).settings_schema()
    for key, rule in schema["properties"].items():
        values = {"boolean": [True, False], "integer": [rule.get("minimum"), rule.get("maximum")],
                  "number": [rule.get("minimum", 0) + (1e-9 if rule.get("exclusiveMinimum") else 0), rule.get("maximum")],
                  "string": rule.get("enum", ["name"]), "array": [["a", "b"]], "object": [{}]}[rule.get("type", "object")]
        for value in values:
            if key == "few_shot":
                value = {"cohort": "group-1", "k": 100, "seed": -(2**63), "split": {"share": 0.5}}
            if key == "weights":
                value = {"a": 0, "b": 2.5}
            judge_settings_parse({key: value})  # raises when the schema states more than the parser takes


def test_the_schema_names_the_endpoints_and_their_keys_as_configured(manager, settings):
    settings.EVALSITE_JUDGE_ENDPOINTS = [("http://127.0.0.1:9", "KEY_ONE"), ("http://localhost", "")]
    schema = _schema(manager)["components"]["schemas"]["OpenaiJudgeInputRequest"]
    branches = {b["properties"]["base_url"]["pattern"]: b["properties"]["api_key_env"]["pattern"] for b in schema["anyOf"]}
    assert len(branches) == 2
    for url, key, ok in (("http://127.0.0.1:9", "KEY_ONE", True), ("http://localhost", "", True),
                         ("http://localhost", "KEY_ONE", False), ("http://127.0.0.1:9", "", True)):
        stated = any(re.fullmatch(u, url) and re.fullmatch(k, key) for u, k in branches.items())
        answer = _post_judge(manager, {"name": f"e-{url[-4:]}-{key}", "backend": "openai", "model": "m", "base_url": url,
                                       "api_key_env": key})
        assert stated == ok and (answer.status_code == 201) == ok, (url, key, answer.content)


# --- uploads ---------------------------------------------------------------------------------

def test_the_api_reads_an_upload_in_its_named_format_whatever_its_name(manager, tmp_path, settings,
                                                                      django_capture_on_commit_callbacks):
    settings.EVALSITE_JOBS_DIR = tmp_path / "jobs"
    folder = write_bundle(tmp_path / "mini")
    archive = tmp_path / "upload.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in folder.iterdir():
            out.write(path, path.name)
    with django_capture_on_commit_callbacks(execute=True):
        answer = manager.post("/api/projects/mini/import/", {"bundle": SimpleUploadedFile("bundle.png", archive.read_bytes()),
                                                            "format": "evalsite"})
    assert answer.status_code == 202, answer.content
    assert DataJob.objects.get(pk=answer.json()["id"]).status == "finished"
    with django_capture_on_commit_callbacks(execute=True):
        unnamed = manager.post("/api/projects/mini/import/", {"bundle": SimpleUploadedFile("notes.png", b"\x89PNG")})
    assert unnamed.status_code == 202  # the request is well formed; what the file holds is the job's to read
    job = DataJob.objects.get(pk=unnamed.json()["id"])
    assert job.status == "failed" and "name the format" in job.error


def test_an_upload_is_multipart_only(manager):
    body = _schema(manager)["paths"]["/api/projects/{slug}/import/"]["post"]["requestBody"]["content"]
    assert list(body) == ["multipart/form-data"]


# --- the length penalty ----------------------------------------------------------------------

def test_the_length_penalty_by_numbers_is_the_commands_text(manager):
    by_text = manager.get("/api/projects/mini/reports/scores/", {"source": "judge:judge-a", "length_penalty": "5,9,0.2"})
    assert by_text.status_code == 400 and "unknown parameter" in by_text.json()["length_penalty"][0]
    numbers = manager.get("/api/projects/mini/reports/scores/", {"source": "judge:judge-a", "penalty_free": 5,
                                                                 "penalty_span": 4, "penalty_at_cap": 0.2})
    assert numbers.status_code == 200, numbers.content
    assert numbers.json()["length_penalty"] == {"free": 5, "cap": 9, "penalty_at_cap": 0.2, "exponent": 1.0, "unit": "words"}
    for query, named in (({"penalty_free": 5}, "penalty_span"), ({"penalty_exponent": 2}, "penalty_free"),
                         ({"penalty_free": 5, "penalty_span": 0, "penalty_at_cap": 0.2}, "penalty_span"),
                         ({"penalty_free": 5, "penalty_span": 4, "penalty_at_cap": "nan"}, "penalty_at_cap"),
                         ({"penalty_free": 5, "penalty_span": 4, "penalty_at_cap": 0.2, "penalty_exponent": 0}, "penalty_exponent")):
        answer = manager.get("/api/projects/mini/reports/scores/", {"source": "judge:judge-a", **query})
        assert answer.status_code == 400 and named in answer.json(), (query, answer.content)
    operation = _schema(manager)["paths"]["/api/projects/{slug}/reports/scores/"]["get"]
    group = next(p for p in operation["parameters"] if p["name"] == "penalty")
    assert group["style"] == "form" and group["explode"] is True
    assert group["schema"]["required"] == ["penalty_free", "penalty_span", "penalty_at_cap"]
    assert "length_penalty" not in {p["name"] for p in operation["parameters"]}


def test_a_criterion_the_project_does_not_have_is_a_404(manager):
    answer = manager.get("/api/projects/mini/reports/bias_matrix/", {"criterion": "no-such", "condition": "anonymized"})
    assert answer.status_code == 404 and "no-such" in json.dumps(answer.json())


# --- filters ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path, name", [("/api/projects/mini/assignments/", "status"), ("/api/assignments/", "status"),
                                        ("/api/projects/mini/criteria/", "kind")])
def test_an_enum_filter_refuses_an_empty_value(manager, path, name):
    empty = manager.get(path, {name: ""})
    assert empty.status_code == 400 and name in empty.json()
    assert manager.get(path).status_code == 200
