"""Hardening (issue 15, point 5): API tokens instead of Basic authentication, throttled failures
on the login form and on tokens, the site's own 403/404 pages logged in one line, a
Content-Security-Policy on every page, and production settings that ``check --deploy`` passes.
Second round (issue 27): throttles count the client's address, ``X-Forwarded-For`` only as far as
``EVALSITE_TRUSTED_PROXIES`` says (point 2); a NUL character in a parameter is a 400 (point 7);
one settings default, production, and ``Cache-Control: no-store`` on authenticated answers (point 8)."""
import json
import logging
import os
import subprocess
import sys
from base64 import b64encode
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client, RequestFactory, override_settings
from django.utils.module_loading import import_string
from rest_framework.authtoken.models import Token

from annotation.models import AuditEvent
from tests.roles import grant

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()  # the token failure counts live in the cache
    yield
    cache.clear()


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", password="right-password-1")


def _token(user) -> str:
    out = StringIO()
    call_command("api_token", user.username, "--json", stdout=out)
    return json.loads(out.getvalue())["token"]


# --- tokens ---------------------------------------------------------------------------------


def test_api_token_command_creates_a_working_token_and_replaces_the_old_one(alice):
    first = _token(alice)
    assert len(first) == 40 and Token.objects.get(user=alice).key == first
    client = Client()
    assert client.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {first}").status_code == 200
    second = _token(alice)
    assert second != first
    assert client.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {first}").status_code == 401
    assert client.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {second}").status_code == 200
    out = StringIO()
    call_command("api_token", "alice", "--keep", "--json", stdout=out)
    assert json.loads(out.getvalue()) == {"token": second}
    events = AuditEvent.objects.filter(action="api_token", target="alice")
    assert events.count() == 2 and all(second not in json.dumps([e.before, e.after]) for e in events)


def test_api_token_command_refuses_an_unknown_user(db):
    with pytest.raises(CommandError, match="unknown user 'ghost'"):
        call_command("api_token", "ghost", "--json")


def test_the_token_page_creates_shows_once_and_revokes(alice):
    client = Client()
    client.force_login(alice)
    page = client.get("/account/api-token/")
    assert page.status_code == 200 and b"You have no token" in page.content
    created = client.post("/account/api-token/", {"action": "create"})
    key = Token.objects.get(user=alice).key
    assert key.encode() in created.content
    again = client.get("/account/api-token/")
    assert key.encode() not in again.content and b"You have a token" in again.content
    client.post("/account/api-token/", {"action": "revoke"})
    assert not Token.objects.filter(user=alice).exists()


def test_basic_authentication_is_not_accepted(alice):
    basic = b64encode(b"alice:right-password-1").decode()
    response = Client().get("/api/assignments/", HTTP_AUTHORIZATION=f"Basic {basic}")
    assert response.status_code in (401, 403)
    assert "rest_framework.authentication.BasicAuthentication" not in settings.REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"]


def test_ten_wrong_tokens_make_the_address_wait_even_with_the_right_token(alice):
    key = _token(alice)
    client = Client()
    for attempt in range(10):
        response = client.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token wrong{attempt:035d}")
        assert response.status_code == 401, attempt
    refused = client.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {key}")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many failed token attempts" in refused.json()["detail"]
    other_address = Client(REMOTE_ADDR="10.0.0.7")
    assert other_address.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


# --- client identity behind proxies (issue 27, point 2) --------------------------------------


def test_a_new_forwarded_for_on_each_wrong_token_still_ends_in_429(alice):
    """The finding: 200 wrong tokens, each with another X-Forwarded-For, were 200 × 401."""
    client = Client()
    answers = [client.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token wrong{attempt:035d}",
                          HTTP_X_FORWARDED_FOR=f"198.51.100.{attempt % 250}, 10.9.{attempt // 250}.{attempt % 250}").status_code
               for attempt in range(200)]
    assert answers[:10] == [401] * 10 and set(answers[10:]) == {429}


def test_a_spoofed_forwarded_for_cannot_lock_another_client_out(alice):
    """The finding: ten wrong tokens sent with ``X-Forwarded-For: 127.0.0.3`` locked out the
    client really at 127.0.0.3."""
    key = _token(alice)
    attacker = Client()  # 127.0.0.1
    for attempt in range(10):
        attacker.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token wrong{attempt:035d}", HTTP_X_FORWARDED_FOR="127.0.0.3")
    victim = Client(REMOTE_ADDR="127.0.0.3")
    assert victim.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    assert attacker.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 429


def test_behind_one_trusted_proxy_the_address_it_appended_counts(alice, settings):
    settings.EVALSITE_TRUSTED_PROXIES = 1
    key = _token(alice)
    proxy = Client(REMOTE_ADDR="10.0.0.1")
    for attempt in range(10):  # the client at 192.0.2.50 writes a new first entry each time; the proxy appends the truth
        answer = proxy.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token wrong{attempt:035d}",
                           HTTP_X_FORWARDED_FOR=f"203.0.113.{attempt}, 192.0.2.50")
        assert answer.status_code == 401
    same = proxy.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {key}", HTTP_X_FORWARDED_FOR="198.51.100.1, 192.0.2.50")
    assert same.status_code == 429
    neighbour = proxy.get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {key}", HTTP_X_FORWARDED_FOR="192.0.2.50, 192.0.2.51")
    assert neighbour.status_code == 200  # another client behind the same proxy, whatever it wrote first


def test_the_anonymous_rate_counts_the_address_not_the_header(monkeypatch):
    from rest_framework.request import Request

    anonymous = import_string(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"][0])
    monkeypatch.setattr(anonymous, "rate", "3/min", raising=False)
    factory = RequestFactory()
    answers = [anonymous().allow_request(Request(factory.get("/api/", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")), None)
               for n in range(5)]
    assert answers == [True, True, True, False, False]


@pytest.mark.parametrize("trusted, expected", [(0, "10.0.0.1"), (1, "192.0.2.9"), (2, "203.0.113.7"), (5, "203.0.113.7")])
def test_every_throttle_and_the_login_lockout_count_one_address(settings, trusted, expected):
    """One function says who a request comes from: DRF's anonymous and per-user rates, the
    report-interval rate, the failed-token count and django-axes all agree with it."""
    from axes.helpers import get_client_ip_address
    from rest_framework.request import Request
    from rest_framework.settings import api_settings

    from evalsite.api_auth import TokenFailureThrottle
    from evalsite.throttling import client_address
    from grading.api.reports import ReportIntervalThrottle

    settings.EVALSITE_TRUSTED_PROXIES = trusted
    request = RequestFactory().get("/api/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7,192.0.2.9")
    classes = [import_string(c) for c in settings.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]]
    classes += [ReportIntervalThrottle, TokenFailureThrottle]
    assert {cls().get_ident(Request(request)) for cls in classes} == {expected}
    assert client_address(request) == get_client_ip_address(request) == expected
    assert settings.REST_FRAMEWORK["NUM_PROXIES"] == api_settings.NUM_PROXIES == 0  # set from the same number (0 here)


def test_a_header_that_is_no_address_is_not_believed(settings):
    from evalsite.throttling import client_address

    settings.EVALSITE_TRUSTED_PROXIES = 1
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="x" * 500)
    assert client_address(request) == "10.0.0.1"


def test_a_trusted_proxy_count_that_is_no_number_stops_the_start():
    result = _settings_run("local", "check", EVALSITE_TRUSTED_PROXIES="one")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "EVALSITE_TRUSTED_PROXIES='one': write the number of trusted proxies" in result.stderr


# --- the login form -------------------------------------------------------------------------


def test_ten_wrong_passwords_lock_the_account_out_of_the_login_form(alice):
    """django-axes: the tenth failure locks out the user name and the address for the cool-off."""
    client = Client()
    for _ in range(9):
        response = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
        assert response.status_code == 200 and b"didn't match" in response.content
    assert client.post("/accounts/login/", {"username": "alice", "password": "wrong"}).status_code == 429  # the tenth
    locked = client.post("/accounts/login/", {"username": "alice", "password": "right-password-1"})
    assert locked.status_code == 429 and b"Too many failed log-ins" in locked.content
    assert "_auth_user_id" not in client.session
    # Another address is locked out of this account too (the user name counts on its own).
    elsewhere = Client(REMOTE_ADDR="10.0.0.8").post("/accounts/login/", {"username": "alice", "password": "right-password-1"})
    assert elsewhere.status_code == 429


def test_a_successful_login_resets_the_count(alice):
    client = Client()
    for _ in range(9):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert client.post("/accounts/login/", {"username": "alice", "password": "right-password-1"}).status_code == 302
    client.logout()
    for _ in range(9):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert client.post("/accounts/login/", {"username": "alice", "password": "right-password-1"}).status_code == 302


# --- error pages, logging, headers ----------------------------------------------------------


@override_settings(DEBUG=True)
def test_with_debug_on_an_unknown_url_gets_the_sites_page_not_the_url_list(alice, caplog):
    client = Client()
    client.force_login(alice)
    with caplog.at_level(logging.WARNING):
        response = client.get("/no/such/page/")
    assert response.status_code == 404
    body = response.content.decode()
    assert "Not found" in body and "URLconf" not in body and "admin/" not in body
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].getMessage() == "404 GET /no/such/page/ (user alice): no such page"
    assert lines[0].exc_info is None


def test_a_refused_page_is_the_sites_403_logged_once_without_a_traceback(mini_project, caplog):
    viewer = grant(get_user_model().objects.create_user("vera"), mini_project, "viewer")
    client = Client()
    client.force_login(viewer)
    with caplog.at_level(logging.WARNING):
        response = client.get(f"/projects/{mini_project.slug}/assignments/")
    assert response.status_code == 403
    assert "Not allowed" in response.content.decode() and "(viewer) does not allow this" in response.content.decode()
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].exc_info is None
    assert lines[0].getMessage().startswith(f"403 GET /projects/{mini_project.slug}/assignments/ (user vera)")


def test_api_refusals_are_logged_in_one_line_too(alice, caplog):
    client = Client()
    client.force_login(alice)
    with caplog.at_level(logging.WARNING):
        assert client.get("/api/assignments/999999/").status_code == 404
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].getMessage().startswith("404 GET /api/assignments/999999/ (user alice)")


def test_every_page_carries_a_csp_without_inline_script(alice):
    client = Client()
    client.force_login(alice)
    for url in ("/", "/accounts/login/", "/api/", "/account/api-token/", "/no/such/page/"):
        policy = client.get(url)["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
        assert directives["script-src"] == "'self'", url
        assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"


def test_the_api_documentation_page_and_its_script_are_served_locally(db):
    client = Client()
    page = client.get("/api/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "<script>" not in body and "swagger-ui-bundle.js" in body and "cdn" not in body.lower()
    assert client.get("/api/?script=")["Content-Type"].startswith("application/javascript")


# --- answers for one user are not stored (issue 27, point 8) ---------------------------------


def test_every_authenticated_answer_says_no_store(mini_project, alice):
    grant(alice, mini_project)
    client = Client()
    client.force_login(alice)
    answers = {
        "page": client.get("/"),
        "project page": client.get(f"/projects/{mini_project.slug}/"),
        "htmx partial": client.get(f"/projects/{mini_project.slug}/judges/runs/", HTTP_HX_REQUEST="true"),
        "api by session": client.get("/api/assignments/"),
        "api by token": Client().get("/api/assignments/", HTTP_AUTHORIZATION=f"Token {_token(alice)}"),
        "refused token": Client().get("/api/assignments/", HTTP_AUTHORIZATION="Token " + "0" * 40),
        "csv download": client.get(f"/projects/{mini_project.slug}/audit/", {"format": "csv"}),
        "not found": client.get("/no/such/page/"),
        "redirect": client.post(f"/projects/{mini_project.slug}/roles/", {"username": "alice", "role": "manager"}),
    }
    for name, answer in answers.items():
        assert answer.status_code < 500, name
        assert "no-store" in answer.get("Cache-Control", ""), (name, answer.get("Cache-Control"))
        assert "private" in answer["Cache-Control"] and "public" not in answer["Cache-Control"], name


# --- a NUL character (issue 27, point 7) ------------------------------------------------------


def test_a_nul_character_in_a_parameter_is_a_400_naming_it(mini_project, alice, caplog):
    grant(alice, mini_project)
    client = Client()
    client.force_login(alice)
    with caplog.at_level(logging.WARNING):
        page = client.get(f"/projects/{mini_project.slug}/judges/side-by-side/?response=%00")
    assert page.status_code == 400
    assert "The parameter &#x27;response&#x27; holds a NUL character (%00)." in page.content.decode()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f"400 GET /projects/{mini_project.slug}/judges/side-by-side/ (user alice): the parameter 'response' holds a NUL character (%00)"]
    api = client.get(f"/api/projects/{mini_project.slug}/judgments/", {"response_id": "a\x00b"})
    assert api.status_code == 400 and api.json() == {"detail": "the parameter 'response_id' holds a NUL character (%00)"}
    for body in ({"username": "alice\x00", "role": "viewer"}, "username=alice%00&role=viewer"):  # multipart, urlencoded
        form = client.post(f"/projects/{mini_project.slug}/roles/", body,
                           **({} if isinstance(body, dict) else {"content_type": "application/x-www-form-urlencoded"}))
        assert form.status_code == 400 and "The form field &#x27;username&#x27; holds a NUL" in form.content.decode()
    assert client.get(f"/projects/{mini_project.slug}/judges/side-by-side/?response=nope").status_code == 404


# --- production settings --------------------------------------------------------------------


def _production(*args: str, **env: str) -> subprocess.CompletedProcess:
    # (DJANGO_ALLOW_ASYNC_UNSAFE is the browser tests' own, for Playwright's event loop.)
    environment = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    environment.update({"DJANGO_SETTINGS_MODULE": "evalsite.settings.production",
                        "SECRET_KEY": "a-long-random-production-key-" + "x7Qp2" * 12,
                        "ALLOWED_HOSTS": "evalsite.example.org", **env})
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=120)


def _settings_run(settings_name: str | None, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``manage.py ARGS`` with ``evalsite.settings.NAME`` (None: DJANGO_SETTINGS_MODULE unset) and
    ``env`` (a value None: that variable unset)."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("DJANGO_SETTINGS_MODULE", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE", "SECRET_KEY")}
    if settings_name:
        environment["DJANGO_SETTINGS_MODULE"] = f"evalsite.settings.{settings_name}"
    environment.update({k: v for k, v in env.items() if v is not None})
    return subprocess.run([sys.executable, *args] if args and args[0] == "-c" else [sys.executable, "manage.py", *args],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)


def test_manage_celery_and_wsgi_default_to_production():
    """Issue 27, point 8: manage.py and the Celery app defaulted to the demo's settings (DEBUG on,
    judges on any loopback port), WSGI to production's."""
    secret = "a-long-random-production-key-" + "x7Qp2" * 12
    code = "from django.conf import settings; print(settings.SETTINGS_MODULE, settings.DEBUG)"
    command = _settings_run(None, "shell", "-c", code, SECRET_KEY=secret, ALLOWED_HOSTS="evalsite.example.org")
    assert command.returncode == 0, command.stderr
    assert command.stdout.strip().splitlines()[-1] == "evalsite.settings.production False"
    for module in ("evalsite.celery", "evalsite.wsgi"):
        started = _settings_run(None, "-c", f"import {module}; {code}", SECRET_KEY=secret, ALLOWED_HOSTS="evalsite.example.org")
        assert started.returncode == 0, started.stderr
        assert started.stdout.strip().splitlines()[-1] == "evalsite.settings.production False", module


def test_production_without_a_secret_key_refuses_to_start_in_one_line():
    result = _settings_run(None, "check")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    line, = result.stderr.strip().splitlines()
    assert line.startswith("evalsite: the settings evalsite.settings.production cannot start: SECRET_KEY is not set.")
    assert "DJANGO_SETTINGS_MODULE=evalsite.settings.local" in line


def test_the_demo_and_the_tests_name_their_settings():
    makefile = (ROOT / "Makefile").read_text()
    assert "demo: export DJANGO_SETTINGS_MODULE = evalsite.settings.local" in makefile
    assert "DJANGO_SETTINGS_MODULE=evalsite.settings.test $(BIN)/python -m pytest" in makefile
    assert "DJANGO_SETTINGS_MODULE=evalsite.settings.local $(BIN)/python -m bench.run" in makefile
    assert "DJANGO_SETTINGS_MODULE = evalsite.settings.test" in (ROOT / "pytest.ini").read_text()
    local = _settings_run("local", "check")
    assert local.returncode == 0, local.stderr


def test_check_deploy_with_production_settings_prints_no_warning():
    result = _production("check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout + result.stderr


def test_collectstatic_with_production_storage_hashes_every_file(tmp_path):
    """A deployment's first step: production's storage (hashed, compressed names) refuses a file that
    names another it cannot find, as the vendored Vega bundles did with their source maps."""
    result = _production("collectstatic", "--noinput", "-v", "0", STATIC_ROOT=str(tmp_path))
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    assert {"vendor/vega/vega-embed.min.js", "vendor/htmx/htmx.min.js", "js/labeling.js"} <= set(manifest)
    assert (tmp_path / manifest["js/labeling.js"]).is_file()


def test_production_never_runs_with_debug_and_reads_the_proxy_header():
    code = ("from django.conf import settings; "
            "print(settings.DEBUG, settings.SECURE_PROXY_SSL_HEADER, settings.SECURE_HSTS_SECONDS, settings.SESSION_COOKIE_SECURE)")
    result = _production("shell", "-c", code, DEBUG="1", SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].split() == ["False", "('HTTP_X_FORWARDED_PROTO',", "'https')", "31536000", "True"]


# --- request sizes and ids ------------------------------------------------------------------


def test_a_body_over_the_limit_is_a_413_before_it_is_read(alice, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    client = Client()
    client.force_login(alice)
    response = client.post("/api/labels/", "x" * 5000, content_type="application/json")
    assert response.status_code == 413 and response.json()["detail"] == "the request body is 4.9 KiB; the limit is 1.0 KiB"
    page = client.post("/work/1/criteria/1/", "x" * 5000, content_type="text/plain")
    assert page.status_code == 413 and "Nothing was saved" in page.content.decode()


@pytest.mark.parametrize("path", ["/api/assignments/99999999999999999999/", "/work/18446744073709551616/",
                                  "/api/projects/x/runs/9223372036854775808/"])
def test_ids_beyond_the_database_range_are_a_404(alice, path):
    client = Client()
    client.force_login(alice)
    assert client.get(path).status_code == 404


def test_an_id_beyond_range_in_a_body_is_a_404_not_a_500(alice):
    client = Client()
    client.force_login(alice)
    body = {"assignment": 2**63, "criterion": 2**70, "verdict": "met", "revision": 0}
    assert client.post("/api/labels/", body, content_type="application/json").status_code == 404


def test_every_state_change_by_session_needs_the_csrf_token(mini_project, alice):
    """Pages and the API alike: a session POST without the token is refused and changes nothing
    (token-authenticated API calls carry no cookie to forge)."""
    grant(alice, mini_project)
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    before = AuditEvent.objects.count()
    page = client.post(f"/projects/{mini_project.slug}/roles/", {"username": "alice", "role": "viewer"})
    api = client.post(f"/api/projects/{mini_project.slug}/roles/", {"username": "alice", "role": "viewer"},
                      content_type="application/json")
    assert page.status_code == 403 and api.status_code == 403 and "CSRF" in api.json()["detail"]
    assert AuditEvent.objects.count() == before
    key = _token(alice)
    with_token = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Token {key}")
    ok = with_token.post(f"/api/projects/{mini_project.slug}/roles/", {"username": "alice", "role": "manager"},
                         content_type="application/json")
    assert ok.status_code == 200


def test_json_nested_past_the_parser_is_a_400_not_a_500(alice):
    client = Client()
    client.force_login(alice)
    response = client.post("/api/labels/", "[" * 100_000 + "]" * 100_000, content_type="application/json")
    assert response.status_code == 400 and "nested too deeply" in response.json()["detail"]


def test_a_deeply_nested_batch_from_the_labeling_page_is_refused_not_a_500(db):
    from django import forms

    from annotation.forms import label_batch_parse

    with pytest.raises(forms.ValidationError, match="nested too deeply"):
        label_batch_parse("[" * 100_000 + "]" * 100_000)


def test_the_wsgi_application_is_loaded_whole_and_kept_out_of_the_collectors_sight():
    """A web worker loads every view before its first request, then freezes what it loaded: a full
    garbage collection no longer walks the application's hundred thousand objects, a pause that
    stalled every thread of the worker (measured: 126 ms a collection on this machine under load)."""
    code = ("import gc, sys; import evalsite.wsgi; "
            "print(gc.get_freeze_count(), 'annotation.apis' in sys.modules, 'grading.views' in sys.modules)")
    started = _settings_run("test", "-c", code)
    assert started.returncode == 0, started.stderr
    frozen, apis, views = started.stdout.strip().splitlines()[-1].split()
    assert int(frozen) > 50_000 and apis == views == "True"
