"""Provider rate limits (issue 11, point 4): requests and tokens per minute per endpoint (base
URL + key variable), shared by every judge and run on it and by every process, configured per
judge (settings, project.json, the judges page and its edit page).

Measured by the loopback Chat Completions server, which records when each request arrived. The
state is in Redis when the tests run with a Redis broker (the PostgreSQL + Redis leg of
``.ci/run``), else in lock files; the cross-process test runs both stores whatever the leg. The
same limit across two real Celery workers is in tests/test_broker_judge_lease.py."""
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from grading.bundles import BundleError, bundle_import
from grading.judges.backends.chat import endpoint_limiter, endpoint_limits
from grading.judges.ratelimit import EndpointLimiter, EndpointLimits, endpoint_id, request_tokens
from grading.judges.settings import SettingsError, judge_settings_parse
from grading.models import Judge, JudgeRun
from tests.bundles import bundle_parts, write_bundle
from tests.grading.judges.chat_server import Reply, assert_paced, default_script
from tests.roles import grant

ROOT = Path(__file__).resolve().parents[3]
ITEMS = 11  # calls of one run of the mini project
def redis_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
        return True
    except OSError:
        return False


# -- configuration --------------------------------------------------------------------------------

def test_settings_read_the_limits_and_refuse_bad_values():
    parsed = judge_settings_parse({"requests_per_minute": 500, "tokens_per_minute": 30000})
    assert (parsed.requests_per_minute, parsed.tokens_per_minute) == (500, 30000)
    assert judge_settings_parse({}).requests_per_minute == 0
    with pytest.raises(SettingsError, match=r"settings.requests_per_minute: must be a whole number, not 1.5"):
        judge_settings_parse({"requests_per_minute": 1.5})
    with pytest.raises(SettingsError, match=r"settings.tokens_per_minute: must be at least 0"):
        judge_settings_parse({"tokens_per_minute": -1})
    with pytest.raises(SettingsError, match=r"settings.requests_per_minute: must be a number, not '60'"):
        judge_settings_parse({"requests_per_minute": "60"})


def test_an_endpoint_is_its_base_url_and_key_variable_and_takes_the_strictest_limit(mini_project):
    def judge(name, url, key, **settings):
        return Judge.objects.create(project=mini_project, name=name, backend=Judge.OPENAI, model="m", base_url=url,
                                    api_key_env=key, settings=settings)

    judge("a", "http://127.0.0.1:9/v1", "LOCAL_KEY", requests_per_minute=600, tokens_per_minute=90000)
    judge("b", "http://127.0.0.1:9/v1/", "LOCAL_KEY", requests_per_minute=120)  # the same URL, trailing slash
    judge("c", "http://127.0.0.1:9/v1", "JUDGE_TEST_KEY", requests_per_minute=30)  # another key: another account
    judge("d", "", "OPENAI_API_KEY", tokens_per_minute=1000)
    judge("e", "https://api.openai.com/v1", "OPENAI_API_KEY", requests_per_minute=50)  # empty base URL is this one
    judge("f", "http://127.0.0.1:9/v1", "LOCAL_KEY")  # no limit of its own: bound by the others'
    assert endpoint_limits(base_url="http://127.0.0.1:9/v1", api_key_env="LOCAL_KEY") == EndpointLimits(120, 90000)
    assert endpoint_limits(base_url="http://127.0.0.1:9/v1", api_key_env="JUDGE_TEST_KEY") == EndpointLimits(30, 0)
    assert endpoint_limits(base_url="", api_key_env="OPENAI_API_KEY") == EndpointLimits(50, 1000)
    assert endpoint_limits(base_url="http://127.0.0.1:10/v1", api_key_env="LOCAL_KEY") == EndpointLimits(0, 0)
    assert endpoint_id(base_url="", api_key_env="K") == endpoint_id(base_url="https://api.openai.com/v1/", api_key_env="K")
    no_limit = Judge.objects.create(project=mini_project, name="g", backend=Judge.OPENAI, model="m",
                                    base_url="http://127.0.0.1:11/v1")
    assert endpoint_limiter(no_limit) is None  # nothing set on that endpoint: no limiter, no overhead


def test_project_json_carries_the_limits_and_refuses_a_bad_one(db, tmp_path):
    parts = bundle_parts()
    parts["project"]["judges"] = [{"name": "paced", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1/v1",
                                   "settings": {"requests_per_minute": 500, "tokens_per_minute": 200000}}]
    bundle_import(path=write_bundle(tmp_path / "ok", parts))
    assert Judge.objects.get(name="paced").settings == {"requests_per_minute": 500, "tokens_per_minute": 200000}
    parts["project"]["judges"][0]["settings"] = {"requests_per_minute": "lots"}
    with pytest.raises(BundleError, match=r"requests_per_minute: must be a number, not 'lots'"):
        bundle_import(path=write_bundle(tmp_path / "bad", parts))
    assert Judge.objects.get(name="paced").settings["requests_per_minute"] == 500


def test_the_judges_page_sets_the_limits_and_the_edit_page_changes_them(client, mini_project, django_user_model):
    client.force_login(grant(django_user_model.objects.create_user("boss", password="pw"), mini_project, "manager"))
    fields = {"name": "paced", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
              "condition": "anonymized", "temperature": "0", "samples": "1", "concurrency": "2", "max_retries": "0",
              "price_in_per_mtok": "0", "price_out_per_mtok": "0", "timeout_seconds": "20", "max_tokens": "512",
              "min_evidence": "0", "shuffle_seed": "0", "few_shot_k": "0", "few_shot_seed": "0", "json_mode": "on"}
    page = client.post(f"/projects/{mini_project.slug}/judges/",
                       {"action": "judge", **{f"judge-{k}": v for k, v in {**fields, "requests_per_minute": "300"}.items()}})
    assert page.status_code == 302, page.content.decode()[:2000]
    judge = mini_project.judges.get(name="paced")
    assert judge.settings["requests_per_minute"] == 300 and "tokens_per_minute" not in judge.settings
    listing = client.get(f"/projects/{mini_project.slug}/judges/").content.decode()
    assert "≤ 300 requests/min" in listing and f"/projects/{mini_project.slug}/judges/{judge.pk}/edit/" in listing

    edit = f"/projects/{mini_project.slug}/judges/{judge.pk}/edit/"
    form = client.get(edit).content.decode()
    assert 'name="requests_per_minute"' in form and 'value="300"' in form
    refused = client.post(edit, {**fields, "requests_per_minute": "-5"})
    assert refused.status_code == 200 and "Ensure this value is greater than or equal to 0" in refused.content.decode()
    judge.refresh_from_db()
    assert judge.settings["requests_per_minute"] == 300  # a refused edit changes nothing
    assert client.post(edit, {**fields, "requests_per_minute": "", "tokens_per_minute": "40000"}).status_code == 302
    judge.refresh_from_db()
    assert "requests_per_minute" not in judge.settings and judge.settings["tokens_per_minute"] == 40000
    history = mini_project.audit_events.filter(action="judge", target="paced").order_by("pk").last()
    assert history.before["settings"]["requests_per_minute"] == 300 and history.after["settings"]["tokens_per_minute"] == 40000


def test_a_panel_and_an_imported_judge_have_no_edit_page(client, mini_project, django_user_model):
    client.force_login(grant(django_user_model.objects.create_user("boss", password="pw"), mini_project, "manager"))
    imported = Judge.objects.create(project=mini_project, name="imported", backend=Judge.REPLAY, model="m")
    assert client.get(f"/projects/{mini_project.slug}/judges/{imported.pk}/edit/").status_code == 404


# -- the limiter ------------------------------------------------------------------------------------

def limiter(rpm=0, tpm=0) -> EndpointLimiter:
    return EndpointLimiter(endpoint=f"test-{uuid.uuid4().hex}", limits=EndpointLimits(rpm, tpm))


@pytest.fixture
def limiter_waits(monkeypatch) -> list[float]:
    """The waits the limiter decides on (pyrate-limiter's sleeps, still slept): whether it waited is
    its decision, where the time a wait took is the machine's."""
    import pyrate_limiter.limiter

    waits, sleep = [], pyrate_limiter.limiter.sleep

    def recorded(seconds):
        waits.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(pyrate_limiter.limiter, "sleep", recorded)
    return waits


def test_requests_are_spaced_evenly(settings, tmp_path):
    settings.EVALSITE_RATE_LIMIT_DIR = tmp_path
    paced = limiter(rpm=300)  # one every 0.2 s
    times = []
    for _ in range(6):
        paced.acquire()
        times.append(time.monotonic())
    assert_paced(times, 0.2)


def test_tokens_come_from_a_minute_bucket_and_an_oversized_request_still_goes(settings, tmp_path, limiter_waits):
    settings.EVALSITE_RATE_LIMIT_DIR = tmp_path
    paced = limiter(tpm=120)  # two tokens a second, a bucket of 120
    started = time.monotonic()
    paced.acquire(tokens=120)
    assert limiter_waits == []  # a full bucket at rest: no wait
    paced.acquire(tokens=1)
    # the next token comes half a second after the bucket was emptied (a lower bound: a loaded
    # machine only makes it later)
    assert limiter_waits and time.monotonic() - started >= 0.5 - 0.03
    # Larger than the whole minute's limit: it goes when the bucket is full (at once, at rest),
    # instead of never.
    limiter_waits.clear()
    limiter(tpm=120).acquire(tokens=10_000)
    assert limiter_waits == []


def test_a_request_counts_its_characters_and_its_output_cap():
    messages = [{"role": "system", "content": "x" * 400}, {"role": "user", "content": "y" * 401}]
    assert request_tokens(messages, 1024) == 201 + 1024
    assert request_tokens([], None) == 1


CHILD = """
import sys, time, django
django.setup()
from grading.judges.ratelimit import EndpointLimiter, EndpointLimits
paced = EndpointLimiter(endpoint=sys.argv[1], limits=EndpointLimits(requests_per_minute=int(sys.argv[2])))
print("ready", flush=True)
sys.stdin.readline()  # "go": the test starts both processes together
for _ in range(5):
    paced.acquire()
    print(time.time(), flush=True)
"""


@pytest.mark.parametrize("store", ["file", "redis"])
def test_two_processes_share_one_endpoint(store, tmp_path):
    """Two processes start acquiring at the same instant on one endpoint: together they keep the
    spacing one would keep alone."""
    if store == "redis" and not redis_up():
        pytest.skip("no Redis server on 127.0.0.1:6379")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalsite.settings.test", "PYTHONPATH": str(ROOT),
           "EVALSITE_RATE_LIMIT_DIR": str(tmp_path),
           "EVALSITE_RATE_LIMIT_REDIS_URL": "redis://127.0.0.1:6379/0" if store == "redis" else ""}
    endpoint = f"test-{uuid.uuid4().hex}"
    children = [subprocess.Popen([sys.executable, "-c", CHILD, endpoint, "300"], env=env, cwd=ROOT,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    for child in children:  # each has set up Django and its limiter ...
        assert child.stdout.readline().strip() == "ready"
    for child in children:  # ... before either is told to go
        child.stdin.write("go\n")
        child.stdin.flush()
    times = []
    for child in children:
        out, _ = child.communicate(timeout=60)
        assert child.returncode == 0
        times += [float(t) for t in out.split()]
    assert len(times) == 10
    assert_paced(times, 0.2)  # 300 per minute: one every 0.2 s, as one process alone would


# -- runs against the loopback server -------------------------------------------------------------

def test_two_judges_on_one_endpoint_share_its_limit(make_judge, run_judge, chat_server, settings, tmp_path):
    """Two judges on the loopback endpoint, one setting 600 requests per minute, the other 300:
    both runs are paced at 300 (the strictest), the second run's first request waits for the
    first run's last, and the server never sees two requests closer than 0.2 s."""
    settings.EVALSITE_RATE_LIMIT_DIR = tmp_path
    fast = make_judge("fast", concurrency=4, settings={"requests_per_minute": 600})
    strict = make_judge("strict", model="other-model", concurrency=4, settings={"requests_per_minute": 300})
    run_fast, _ = run_judge(fast)
    run_strict, _ = run_judge(strict)
    assert run_fast.status == run_strict.status == JudgeRun.FINISHED
    assert len(chat_server.times) == 2 * ITEMS
    assert_paced(chat_server.times, 0.2)  # across the two runs: the second did not start with a fresh allowance
    assert run_fast.config["endpoint_limits"] == {"requests_per_minute": 300, "tokens_per_minute": 0}


def test_a_retry_waits_for_its_turn_too(make_judge, run_judge, chat_server, settings, tmp_path):
    settings.EVALSITE_RATE_LIMIT_DIR = tmp_path

    refused: set[str] = set()
    lock = threading.Lock()

    def script(body, index):  # the first attempt of the first three calls is refused
        prompt = str(body["messages"])
        with lock:
            refuse = len(refused) < 3 and prompt not in refused
            if refuse:
                refused.add(prompt)
        return Reply(status=429, error="slow down") if refuse else default_script(body, index)

    chat_server.script = script
    judge = make_judge("retrying", concurrency=3, max_retries=2, settings={"requests_per_minute": 300})
    run, _ = run_judge(judge)
    assert run.status == JudgeRun.FINISHED and run.retries == 3 and len(chat_server.times) == ITEMS + 3
    assert_paced(chat_server.times, 0.2)


def test_without_a_limit_nothing_waits(make_judge, run_judge, chat_server, limiter_waits, monkeypatch):
    from grading.judges.backends import chat

    limiters, limiter_for = [], chat.endpoint_limiter
    monkeypatch.setattr(chat, "endpoint_limiter", lambda judge: limiters.append(limiter_for(judge)) or limiters[-1])
    judge = make_judge("free", concurrency=4)
    run, _ = run_judge(judge)
    assert run.status == JudgeRun.FINISHED and len(chat_server.times) == ITEMS
    assert limiters and all(made is None for made in limiters)  # no limiter on the endpoint ...
    assert limiter_waits == [] and run_judge.sleeps == []  # ... so no call waited for its turn
