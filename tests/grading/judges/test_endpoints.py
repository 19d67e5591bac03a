"""Judges use only the endpoints the operator lists, each key only on the endpoint it is paired
with (issues 11, point 1, and 27, point 6): refused in the service, the judges page, the admin and
project.json; refused again when a run starts, so no call leaves with another secret or to another
address; URLs normalized before they are compared (``%2e%2e`` is ``..``); error bodies stored short
and without keys; redirects not followed; every change of a judge audited. The test settings pair
the loopback addresses with no key or one of four key variables (evalsite/settings/test.py)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured, ValidationError

from annotation.models import AuditEvent
from grading.bundles import BundleError, bundle_import
from grading.judges.backends import CallFailed, ChatBackend, ChatConfig
from grading.judges.endpoints import base_url_allowed, endpoint_problems, endpoint_url, endpoints_check, redact
from grading.judges.services import judge_save
from grading.models import Judge, JudgeRun
from tests.bundles import bundle_parts, write_bundle
from tests.grading.judges.chat_server import ChatServer, Reply
from tests.roles import grant

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("url, allowed", [
    ("http://127.0.0.1:8000/v1", True),
    ("http://127.0.0.1/v1/", True),
    ("http://LOCALHOST:11434/v1", True),
    ("http://[::1]:8080/v1", True),
    ("http://127.0.0.1.evil.example/v1", False),  # a host that only starts like loopback
    ("http://127.0.0.1@evil.example/v1", False),  # user info: the host is evil.example
    ("http://user:pw@127.0.0.1/v1", False),
    ("https://127.0.0.1/v1", False),  # another scheme than the listed one
    ("ftp://127.0.0.1/v1", False),
    ("http://10.0.0.7/v1", False),
    ("http://169.254.169.254/latest/meta-data", False),  # cloud metadata
    ("http://127.0.0.1:99999/v1", False),  # no such port
    ("http://127.0.0.1/v1?x=1", False),
    ("", False),  # the official endpoint: not listed in the tests
    ("HTTP://LocalHost:8000/v1", True),  # scheme and host in any case
    ("http://127.0.0.1/v1/%2e%2e/x", False),  # an escaped '..': a server that decodes would climb out
    ("http://127.0.0.1/v1/%2E%2e/x", False),
    ("http://127.0.0.1/v1/.%2e/x", False),
    ("http://127.0.0.1/v1/%252e%252e/x", False),  # escaped twice
    ("http://127.0.0.1/v1/%2e/x", False),
    ("http://127.0.0.1/v1/./x", False),
    ("http://127.0.0.1/v1%2f..%2fx", False),  # an escaped slash around '..'
    ("http://127.0.0.1/v1\\..\\x", False),  # a backslash, read as a slash by some servers
    ("http://127.0.0.1/v1 /x", False),
    ("http://127.0.0.1%2eevil.example/v1", False),  # an escaped dot in the host
    ("http://127.0.0.1/v1?", False),  # an empty query is still one
])
def test_base_urls_are_compared_by_their_parts(url, allowed):
    assert base_url_allowed(url) is allowed


def test_a_listed_path_and_port_bound_what_passes(settings):
    settings.EVALSITE_JUDGE_ENDPOINTS = [("https://api.openai.com/v1", "OPENAI_API_KEY"), ("http://127.0.0.1:9000/proxy", "")]
    assert base_url_allowed("") and base_url_allowed("https://api.openai.com/v1/")
    assert not base_url_allowed("https://api.openai.com/v10") and not base_url_allowed("https://api.openai.com/")
    assert not base_url_allowed("https://api.openai.com/v1/../admin")
    assert base_url_allowed("http://127.0.0.1:9000/proxy/v1") and not base_url_allowed("http://127.0.0.1:9001/proxy")
    settings.EVALSITE_JUDGE_ENDPOINTS = []
    assert "none is configured" in endpoint_problems(base_url="", api_key_env="", calls_out=True)["base_url"]


def test_an_escaped_dot_segment_never_leaves_the_listed_path(settings):
    """The finding: ``/proxy/%2e%2e/admin`` started with the listed ``/proxy`` and passed."""
    settings.EVALSITE_JUDGE_ENDPOINTS = [("http://127.0.0.1:9000/proxy", "")]
    for url in ("http://127.0.0.1:9000/proxy/%2e%2e/admin", "http://127.0.0.1:9000/proxy/%2E%2E/admin",
                "http://127.0.0.1:9000/proxy/%252E%252E/admin", "http://127.0.0.1:9000/proxy/v1/%2e%2e/%2e%2e/admin"):
        assert not base_url_allowed(url), url
        assert "must not contain '.' or '..' segments" in endpoint_problems(base_url=url, api_key_env="", calls_out=True)["base_url"]


def test_urls_are_normalized_before_the_check_and_called_as_checked(settings):
    settings.EVALSITE_JUDGE_ENDPOINTS = [("https://api.openai.com:443/v1", "OPENAI_API_KEY")]
    assert endpoint_url("HTTPS://API.OpenAI.com:443/%76%31/") == "https://api.openai.com/v1"
    assert base_url_allowed("https://API.OPENAI.COM/v1") and base_url_allowed("https://api.openai.com:443/%76%31")
    assert not base_url_allowed("https://api.openai.com:8443/v1")  # the prefix names its port: only that one
    assert not base_url_allowed("http://api.openai.com/v1")
    assert endpoint_url("http://127.0.0.1:80/v1") == "http://127.0.0.1/v1"
    backend = ChatBackend(ChatConfig(model="m", base_url="HTTPS://API.OPENAI.COM:443/v1/", api_key_env="", temperature=0,
                                     max_retries=0))
    assert backend.url == "https://api.openai.com/v1/chat/completions"
    backend.close()


def test_a_key_goes_only_to_the_endpoint_it_is_paired_with(settings, mini_project, make_judge, run_judge, monkeypatch):
    """The finding: a judge on a second allowed endpoint received the first provider's key."""
    first, second = ChatServer().start(), ChatServer().start()
    try:
        settings.EVALSITE_JUDGE_ENDPOINTS = [(first.url, "JUDGE_TEST_KEY"), (second.url, "LOCAL_KEY")]
        monkeypatch.setenv("JUDGE_TEST_KEY", "sk-first-provider-0001")
        monkeypatch.setenv("LOCAL_KEY", "sk-second-provider-0002")
        thief = Judge(project=mini_project, name="thief", backend=Judge.OPENAI, model="m", base_url=second.url,
                      api_key_env="JUDGE_TEST_KEY")
        with pytest.raises(ValidationError) as refused:
            judge_save(judge=thief)
        message = refused.value.message_dict["api_key_env"][0]
        assert f"'JUDGE_TEST_KEY' is sent only to {first.url}, never to '{second.url}'" in message
        sneaked = _sneak(make_judge(name="sneaked", base_url=second.url), api_key_env="JUDGE_TEST_KEY")
        with pytest.raises(ValidationError, match="is sent only to"):  # refused when a run starts
            run_judge(sneaked)
        with pytest.raises(CallFailed, match="is sent only to"):  # and by the backend itself
            ChatBackend(ChatConfig(model="m", base_url=second.url, api_key_env="JUDGE_TEST_KEY", temperature=0, max_retries=0))
        assert second.requests == [] and first.requests == []
        # Each key on its own endpoint; no key at all on either.
        assert judge_save(judge=Judge(project=mini_project, name="own", backend=Judge.OPENAI, model="m", base_url=second.url,
                                      api_key_env="LOCAL_KEY")).pk
        run, _ = run_judge(make_judge(name="paired", base_url=second.url, api_key_env="LOCAL_KEY", max_retries=0))
        assert second.headers and {h["authorization"] for h in second.headers} == {"Bearer sk-second-provider-0002"}
        assert endpoint_problems(base_url=first.url, api_key_env="", calls_out=True) == {}
    finally:
        first.stop()
        second.stop()


def test_a_malformed_endpoint_list_is_a_check_error(settings):
    settings.EVALSITE_JUDGE_ENDPOINTS = [("ftp://files.example/v1", "OPENAI_API_KEY")]
    errors = endpoints_check()
    assert [e.id for e in errors] == ["grading.E001"] and "'ftp://files.example/v1' must be an http:// or https://" in errors[0].msg
    with pytest.raises(ImproperlyConfigured):
        endpoint_problems(base_url="", api_key_env="", calls_out=True)
    settings.EVALSITE_JUDGE_ENDPOINTS = []
    settings.EVALSITE_JUDGE_CREDENTIALS = ["OPENAI_API_KEY"]  # a settings module that still sets a replaced list
    assert "replaced by EVALSITE_JUDGE_ENDPOINTS" in endpoints_check()[0].msg


def test_the_environment_format_pairs_each_prefix_with_one_variable():
    from evalsite.settings.base import judge_endpoints_parse

    assert judge_endpoints_parse(" https://api.openai.com/v1=OPENAI_API_KEY, http://127.0.0.1:11434/v1 ,,") == [
        ("https://api.openai.com/v1", "OPENAI_API_KEY"), ("http://127.0.0.1:11434/v1", "")]
    for bad in ("https://api.openai.com/v1=sk-live-123", "=OPENAI_API_KEY", "http://x/v1=A B"):
        with pytest.raises(ImproperlyConfigured, match="is not PREFIX=VARIABLE or PREFIX"):
            judge_endpoints_parse(bad)


@pytest.mark.parametrize("variable", ["EVALSITE_JUDGE_CREDENTIALS", "EVALSITE_JUDGE_BASE_URLS"])
def test_the_replaced_variables_stop_the_start_with_one_line(variable):
    environment = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    environment.update({"DJANGO_SETTINGS_MODULE": "evalsite.settings.local", variable: "OPENAI_API_KEY"})
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=environment, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"evalsite: the settings evalsite.settings.local cannot start: {variable}: replaced by EVALSITE_JUDGE_ENDPOINTS, "
        "which pairs each base URL with the one variable sent to it, e.g. "
        "EVALSITE_JUDGE_ENDPOINTS=https://api.openai.com/v1=OPENAI_API_KEY; unset the old variables "
        "(README, Deployment: moving to EVALSITE_JUDGE_ENDPOINTS)"]


def test_a_credential_outside_the_list_is_refused_and_named(mini_project):
    judge = Judge(project=mini_project, name="leak", backend=Judge.OPENAI, model="m", base_url="http://127.0.0.1:9/v1",
                  api_key_env="SECRET_KEY")
    with pytest.raises(ValidationError) as exc:
        judge_save(judge=judge)
    assert "'SECRET_KEY' is not a credential this deployment allows" in exc.value.message_dict["api_key_env"][0]
    assert not Judge.objects.filter(name="leak").exists()
    # The same for a judge that calls nobody: it must not name a secret either.
    baseline = Judge(project=mini_project, name="b", backend=Judge.BASELINE, api_key_env="DATABASE_URL")
    with pytest.raises(ValidationError, match="DATABASE_URL"):
        judge_save(judge=baseline)


def _judge_post(**fields) -> dict:
    data = {"action": "judge", "judge-name": "outside", "judge-backend": "openai", "judge-model": "m",
            "judge-base_url": "http://127.0.0.1:9/v1", "judge-api_key_env": "", "judge-condition": "anonymized",
            "judge-temperature": "0", "judge-samples": "1", "judge-concurrency": "2", "judge-max_retries": "0",
            "judge-price_in_per_mtok": "0", "judge-price_out_per_mtok": "0"}
    data.update({f"judge-{k}": v for k, v in fields.items()})
    return data


@pytest.mark.parametrize("field, value, message", [
    ("base_url", "http://169.254.169.254/v1", "is not under an endpoint this deployment allows"),
    ("api_key_env", "SECRET_KEY", "is not a credential this deployment allows"),
])
def test_the_judges_page_refuses_and_saves_nothing(client, mini_project, django_user_model, field, value, message):
    manager = grant(django_user_model.objects.create_user("boss", password="pw"), mini_project, "manager")
    client.force_login(manager)
    before = (Judge.objects.count(), AuditEvent.objects.count())
    page = client.post(f"/projects/{mini_project.slug}/judges/", _judge_post(**{field: value}))
    assert page.status_code == 200 and message in page.content.decode()
    assert (Judge.objects.count(), AuditEvent.objects.count()) == before


def test_the_admin_refuses_and_saves_nothing(admin_client, mini_project):
    before = Judge.objects.count()
    data = {"project": mini_project.pk, "name": "outside", "backend": "openai", "model": "m",
            "base_url": "http://127.0.0.1:9/v1", "api_key_env": "SECRET_KEY", "condition": "anonymized",
            "temperature": "0", "samples": "1", "concurrency": "2", "max_retries": "0", "timeout_seconds": "60",
            "json_mode": "on", "price_in_per_mtok": "0", "price_out_per_mtok": "0", "few_shot_k": "0", "panel_vote": "majority"}
    page = admin_client.post("/admin/grading/judge/add/", data)
    assert page.status_code == 200 and "is not a credential this deployment allows" in page.content.decode()
    assert Judge.objects.count() == before


@pytest.mark.parametrize("field, value", [("base_url", "http://evil.example/v1"), ("api_key_env", "SECRET_KEY")])
def test_project_json_is_refused_naming_the_field(db, tmp_path, field, value):
    parts = bundle_parts()
    parts["project"]["judges"] = [{"name": "outside", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1/v1",
                                   field: value}]
    with pytest.raises(BundleError, match=rf"^project.json: judges\[0\].{field}: "):
        bundle_import(path=write_bundle(tmp_path / "b", parts))
    assert not Judge.objects.exists()


@pytest.mark.parametrize("field, value", [("base_url", "http://evil.example/v1"), ("api_key_env", "SECRET_KEY")])
def test_the_api_refuses_a_judge_outside_the_allowed_endpoints(mini_project, field, value):
    """The API's judge writes go through ``judge_save`` like the pages: a base URL or key variable
    the deployment does not allow is a 400 naming the field, on creation and on change."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from tests.roles import grant

    client = Client()
    client.force_login(grant(get_user_model().objects.create_user("judge-manager"), mini_project))
    body = {"name": "outside", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1/v1", field: value}
    response = client.post("/api/projects/mini/judges/", body, content_type="application/json")
    assert response.status_code == 400 and field in response.json()
    assert not Judge.objects.filter(name="outside").exists()
    lexical = Judge.objects.create(project=mini_project, name="lexical", backend=Judge.BASELINE)
    changed = client.patch(f"/api/projects/mini/judges/{lexical.pk}/", {**body, "name": "lexical"}, content_type="application/json")
    assert changed.status_code == 400 and field in changed.json()
    lexical.refresh_from_db()
    assert lexical.backend == Judge.BASELINE and lexical.base_url == ""


def _sneak(judge: Judge, **fields) -> Judge:
    """A judge changed around the services (an old row, or a direct database edit)."""
    Judge.objects.filter(pk=judge.pk).update(**fields)
    judge.refresh_from_db()
    return judge


def test_a_run_sends_nothing_with_a_secret_outside_the_list(make_judge, run_judge, chat_server, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "django-insecure-the-real-secret")
    judge = _sneak(make_judge(), api_key_env="SECRET_KEY")
    with pytest.raises(ValidationError) as exc:  # refused when the run is created
        run_judge(judge)
    assert "'SECRET_KEY' is not a credential" in str(exc.value) and not JudgeRun.objects.filter(judge=judge).exists()
    with pytest.raises(CallFailed, match="'SECRET_KEY' is not a credential") as failed:  # and by the backend itself
        ChatBackend(ChatConfig(model="m", base_url=chat_server.url, api_key_env="SECRET_KEY", temperature=0, max_retries=0))
    assert chat_server.requests == [] and "the-real-secret" not in str(failed.value)


def test_a_run_sends_nothing_to_an_address_outside_the_list(make_judge, run_judge, chat_server, settings):
    judge = make_judge()
    settings.EVALSITE_JUDGE_ENDPOINTS = [("http://localhost", "")]  # the server listens on 127.0.0.1: not listed now
    with pytest.raises(ValidationError, match="is not under an endpoint"):
        run_judge(judge)
    with pytest.raises(CallFailed, match="is not under an endpoint"):
        ChatBackend(ChatConfig(model="m", base_url=chat_server.url, api_key_env="", temperature=0, max_retries=0))
    assert chat_server.requests == []


def test_a_redirect_is_not_followed(make_judge, run_judge):
    other = ChatServer().start()
    try:
        target = other.url + "/chat/completions"
        server = ChatServer(lambda body, i: Reply(status=307, headers={"Location": target}, error="moved")).start()
        try:
            judge = make_judge(name="redirected", base_url=server.url, max_retries=0)
            run, _ = run_judge(judge)
            assert len(server.requests) > 0 and other.requests == []
            assert run.failed_calls > 0
        finally:
            server.stop()
    finally:
        other.stop()


def test_a_stored_error_is_short_and_carries_no_key(make_judge, run_judge, monkeypatch):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("JUDGE_TEST_KEY", secret)
    server = ChatServer()
    server.script = lambda body, i: Reply(status=400, error=f"bad request; you sent Authorization: "
                                                              f"{server.headers[i]['authorization']} " + "x" * 500)
    server.start()
    try:
        judge = make_judge(name="echo", base_url=server.url, api_key_env="JUDGE_TEST_KEY", max_retries=0)
        run, _ = run_judge(judge)
    finally:
        server.stop()
    assert server.headers and server.headers[0]["authorization"] == f"Bearer {secret}"
    stored = json.dumps([list(JudgeRun.objects.values()), list(judge.judgments.values())], default=str)
    assert secret not in stored and "[redacted]" in stored
    errors = [j["raw"] for j in judge.judgments.values("raw")] + [run.error]
    assert all(len(e or "") <= 300 for e in errors)


def test_redact_removes_keys_and_authorization_values():
    text = 'echo: Authorization: Bearer sk-abc123 {"api_key": "sk-zzz"} x-api-key=k1 key sk-live-999'
    out = redact(text, "sk-live-999")
    assert not any(secret in out for secret in ("sk-abc123", "sk-zzz", "k1 ", "sk-live-999"))


def test_every_change_of_a_judge_is_audited(mini_project, admin_client, django_user_model):
    boss = django_user_model.objects.get(username="admin")
    judge = judge_save(judge=Judge(project=mini_project, name="audited", backend=Judge.BASELINE), by=boss)
    created = AuditEvent.objects.get(action="judge", target="audited")
    assert (created.actor, created.before, created.after["backend"], created.note) == (boss, None, "baseline", "created")
    judge_save(judge=judge, by=boss)  # nothing changed: nothing recorded
    assert AuditEvent.objects.filter(action="judge", target="audited").count() == 1
    judge.temperature = 0.3
    judge_save(judge=judge, by=boss)
    changed = AuditEvent.objects.filter(action="judge", target="audited").first()
    assert (changed.before["temperature"], changed.after["temperature"], changed.note) == (0.0, 0.3, "changed")
    page = admin_client.post(f"/admin/grading/judge/{judge.pk}/delete/", {"post": "yes"})
    assert page.status_code == 302 and not Judge.objects.filter(pk=judge.pk).exists()
    deleted = AuditEvent.objects.filter(action="judge", target="audited").first()
    assert (deleted.actor, deleted.after, deleted.note) == (boss, None, "deleted")


def test_judges_created_or_changed_by_an_import_are_audited(db, tmp_path, django_user_model):
    parts = bundle_parts()
    parts["project"]["judges"] = [{"name": "local", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:8000/v1",
                                   "api_key_env": "LOCAL_KEY"}]
    boss = django_user_model.objects.create_superuser("boss", password="pw")
    bundle_import(path=write_bundle(tmp_path / "one", parts), user=boss)
    created = AuditEvent.objects.get(action="judge", target="local")
    assert (created.actor, created.before, created.after["base_url"]) == (boss, None, "http://127.0.0.1:8000/v1")
    assert created.note.startswith("created by import")
    parts["project"]["judges"][0]["temperature"] = 0.5
    bundle_import(path=write_bundle(tmp_path / "two", parts), user=boss)
    changed = AuditEvent.objects.filter(action="judge", target="local").first()
    assert (changed.before["temperature"], changed.after["temperature"]) == (0.0, 0.5)
    assert changed.note.startswith("changed by import")
