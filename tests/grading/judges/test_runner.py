"""Judge runs against a real Chat Completions server on loopback: answers, parsing, retries,
timeouts, the concurrency limit, cost, the cache, stop / resume and crash recovery."""
import json
import re
import threading
from decimal import Decimal

import pytest

from grading.judges import runner
from grading.judges.runner import judge_run_execute
from grading.judges.services import judge_run_resume
from grading.models import Judge, JudgeRun, Judgment
from tests.grading.judges.chat_server import Reply, answer, default_script

ITEMS = 11  # mini project: 3 responses x 3 binary criteria of case c1, 1 response x 2 project criteria


def parts(body: dict) -> tuple[str, str]:
    """(answer text, rubric item) of a request built from the default template."""
    user = body["messages"][-1]["content"]
    text = re.search(r"<answer author=\"[^\"]*\">\n(.*?)\n</answer>", user, re.DOTALL).group(1)
    item = re.search(r"<rubric_item>\n(.*?)\n</rubric_item>", user, re.DOTALL).group(1)
    return text, item


def grader(body: dict, index: int) -> Reply:
    """A plausible grader: met when the answer mentions the item's key word, quoting it."""
    text, item = parts(body)
    if "<options>" in body["messages"][-1]["content"]:
        return default_script(body, index)
    word = {"Recommends an ECG": "ECG", "Advises calling emergency services": "emergency",
            "Recommends antibiotics": "antibiotics"}[item]
    sentence = next((s.strip() for s in re.split(r"(?<=\.)\s", text) if word in s), None)
    reply = answer({"explanation": f"mentions {word}" if sentence else f"no {word}", "criteria_met": bool(sentence),
                    "evidence": [sentence] if sentence else []})
    reply.usage = (100, 20)
    return reply


def judgments(run):
    return {(j.response.external_id, j.criterion.external_id, j.sample): j
            for j in Judgment.objects.filter(run=run).select_related("response", "criterion")}


def test_valid_answers_are_stored_with_tokens_latency_and_cost(make_judge, run_judge, chat_server):
    chat_server.script = grader
    judge = make_judge(price_in_per_mtok=Decimal("2.5"), price_out_per_mtok=Decimal("10"))
    run, summary = run_judge(judge)
    assert (run.status, run.total_calls, run.done_calls, run.invalid_count, run.calls_made) == ("finished", ITEMS, ITEMS, 0, ITEMS)
    got = judgments(run)
    assert got[("r1", "c1-ecg", 0)].verdict == "met"
    assert got[("r1", "c1-ecg", 0)].evidence == ["An ECG is needed."]
    assert got[("r2", "c1-ecg", 0)].verdict == "not_met"
    assert got[("r2", "c1-abx", 0)].verdict == "met"
    assert got[("r1", "c1-call", 0)].verdict == "met" and not got[("r1", "c1-call", 0)].evidence_capped
    assert got[("r3", "tone", 0)].option_label == "poor"  # the first listed option, value 0
    binary = [j for j in got.values() if j.criterion.kind == "binary"]
    # cost arithmetic: 100 tokens in at $2.5/M + 20 out at $10/M = $0.00025 + $0.0002 per call
    assert {(j.tokens_in, j.tokens_out, j.cost_usd) for j in binary} == {(100, 20, Decimal("0.00045"))}
    assert all(j.latency_ms is not None and j.latency_ms > 0 for j in got.values())
    options = ITEMS - len(binary)  # the default script's usage: 10 in, 5 out
    assert run.tokens_in == 100 * len(binary) + 10 * options and run.tokens_out == 20 * len(binary) + 5 * options
    expected = len(binary) * Decimal("0.00045") + options * (Decimal(10) * Decimal("2.5") + Decimal(5) * Decimal(10)) / 1_000_000
    assert run.cost_usd == expected == Decimal("0.0042")
    assert summary.cost_usd == float(expected)
    assert len(chat_server.requests) == ITEMS and {r["model"] for r in chat_server.requests} == {"judge-model"}


def test_fenced_and_bare_json_both_parse(make_judge, run_judge, chat_server):
    def script(body, index):
        reply = grader(body, index)
        if index % 2:
            reply.content = f"```json\n{reply.content}\n```"
        return reply

    chat_server.script = script
    run, _ = run_judge(make_judge())
    assert run.invalid_count == 0 and all(j.valid for j in judgments(run).values())
    assert sum(j.raw.startswith("```json") for j in judgments(run).values()) == ITEMS // 2


def test_garbage_and_missing_fields_are_stored_invalid_counted_and_never_retried(make_judge, run_judge, chat_server):
    def script(body, index):
        text, _ = parts(body)
        if text.startswith("Rest and take antibiotics"):  # r2: garbage
            return Reply(content="Sure! The answer looks great to me.")
        if text.startswith("Call 911"):  # r4: JSON without criteria_met
            return Reply(content='{"explanation": "fine"}')
        return grader(body, index)

    chat_server.script = script
    judge = make_judge()
    run, summary = run_judge(judge)
    got = judgments(run)
    bad = [j for j in got.values() if not j.valid]
    assert {(j.response.external_id, j.criterion.external_id) for j in bad} == {
        (r, c) for r in ("r2", "r4") for c in ("c1-ecg", "c1-call", "c1-abx")}
    assert all(j.verdict is None and j.error == "" for j in bad)
    assert got[("r2", "c1-ecg", 0)].raw == "Sure! The answer looks great to me."
    assert got[("r4", "c1-ecg", 0)].raw == '{"explanation": "fine"}'
    assert "criteria_met" in got[("r4", "c1-ecg", 0)].explanation
    assert (run.invalid_count, run.done_calls, summary.invalid) == (6, ITEMS, 6)
    # an invalid answer is an answer: a re-run is served from the cache, not retried into another one
    requests = len(chat_server.requests)
    rerun, _ = run_judge(judge)
    assert len(chat_server.requests) == requests and rerun.invalid_count == 6 and rerun.cache_hits == ITEMS


@pytest.mark.parametrize("headers, wait", [({"Retry-After": "1.5"}, 1.5), ({"retry-after-ms": "250"}, 0.25)])
def test_429_then_success_honours_retry_after(make_judge, run_judge, chat_server, headers, wait):
    chat_server.script = lambda body, index: Reply(status=429, headers=headers, error="slow down") if index == 0 else grader(body, index)
    run, _ = run_judge(make_judge(concurrency=1))
    assert run_judge.sleeps == [wait]
    assert (run.status, run.done_calls, run.retries, run.failed_calls, run.invalid_count) == ("finished", ITEMS, 1, 0, 0)
    assert len(chat_server.requests) == ITEMS + 1 and run.calls_made == ITEMS


def test_500s_exhaust_retries_then_resume_redoes_only_the_failed_call(make_judge, run_judge, chat_server):
    broken = {"on": True}

    def script(body, index):
        text, item = parts(body) if "<options>" not in body["messages"][-1]["content"] else ("", "")
        if broken["on"] and text.startswith("Call emergency") and item == "Recommends antibiotics":
            return Reply(status=500)
        return grader(body, index)

    chat_server.script = script
    judge = make_judge(max_retries=2, concurrency=1)
    run, summary = run_judge(judge)
    failed = Judgment.objects.get(run=run, response__external_id="r1", criterion__external_id="c1-abx")
    assert (failed.valid, failed.verdict) == (False, None)
    assert "HTTP 500" in failed.error and "3 attempts" in failed.error
    # Random exponential backoff from 0.5 s: each wait anywhere below its bound.
    assert len(run_judge.sleeps) == 2 and 0 <= run_judge.sleeps[0] <= 0.5 and 0 <= run_judge.sleeps[1] <= 1.0
    assert (run.status, run.failed_calls, run.done_calls, run.retries) == ("finished", 1, ITEMS - 1, 2)
    assert len(chat_server.requests) == ITEMS + 2

    broken["on"] = False
    run = judge_run_resume(run=run, enqueue=False)
    judge_run_execute(run=run, sleep=run_judge.sleeps.append)
    run.refresh_from_db()
    assert (run.status, run.failed_calls, run.done_calls) == ("finished", 0, ITEMS)
    assert len(chat_server.requests) == ITEMS + 3  # only the failed call was made again
    failed.refresh_from_db()
    assert (failed.valid, failed.verdict, failed.error) == (True, "not_met", "")
    assert Judgment.objects.filter(judge=judge).count() == ITEMS


def test_timeouts_are_retried_and_can_exhaust_retries(make_judge, run_judge, chat_server):
    stalled = set()

    def script(body, index):
        text = body["messages"][-1]["content"]
        if "Rest and take antibiotics" in text and "Recommends an ECG" in text:
            return Reply(content="{}", delay=2.0)  # r2/c1-ecg always stalls past the timeout
        if "Call 911" in text and "Recommends an ECG" in text and "r4" not in stalled:
            stalled.add("r4")
            return Reply(content="{}", delay=2.0)  # r4/c1-ecg stalls once, then answers
        return grader(body, index)

    chat_server.script = script
    judge = make_judge(max_retries=1, concurrency=1, settings={"timeout_seconds": 0.3})
    run, _ = run_judge(judge, scope={"criteria": ["c1-ecg"]})
    got = judgments(run)
    assert "timeout" in got[("r2", "c1-ecg", 0)].error and not got[("r2", "c1-ecg", 0)].valid
    assert got[("r4", "c1-ecg", 0)].valid and got[("r4", "c1-ecg", 0)].verdict == "met"
    assert (run.failed_calls, run.done_calls, run.retries) == (1, 2, 2)


def test_concurrency_limit_is_respected(make_judge, run_judge, chat_server):
    overlapped = threading.Event()

    def script(body, index):
        # The first call is answered only once another one is in flight: calls overlap because the
        # runner sends them side by side, not because this machine happened to be quick.
        with chat_server.lock:
            if chat_server.in_flight >= 2:
                overlapped.set()
        if index == 0:
            overlapped.wait(60)
        return default_script(body, index)

    chat_server.script, chat_server.latency = script, 0.03
    run, _ = run_judge(make_judge(concurrency=3, samples=4))
    assert run.done_calls == ITEMS * 4 == len(chat_server.requests)
    assert overlapped.is_set() and 2 <= chat_server.max_in_flight <= 3


def test_rerun_is_served_from_the_cache_and_costs_nothing(make_judge, run_judge, chat_server):
    chat_server.script = grader
    judge = make_judge(price_in_per_mtok=Decimal("3"), price_out_per_mtok=Decimal("15"))
    first, _ = run_judge(judge)
    assert first.cache_hits == 0 and first.cost_usd > 0
    first_verdicts = {k: j.verdict for k, j in judgments(first).items()}
    second, summary = run_judge(judge)
    assert len(chat_server.requests) == ITEMS
    assert (second.cache_hits, second.calls_made, second.cost_usd, second.done_calls) == (ITEMS, 0, 0, ITEMS)
    assert (summary.calls, summary.cache_hits, summary.cost_usd) == (0, ITEMS, 0.0)
    assert Judgment.objects.filter(judge=judge).count() == ITEMS  # overwritten in place, never duplicated
    assert all(j.cached for j in judgments(second).values())
    assert {k: j.verdict for k, j in judgments(second).items()} == first_verdicts
    # another judge sending identical requests (same model, prompt, parameters) is served too
    twin, _ = run_judge(make_judge(name="twin"))
    assert (twin.cache_hits, twin.calls_made, len(chat_server.requests)) == (ITEMS, 0, ITEMS)
    # a different sample index is a different request
    more, _ = run_judge(make_judge(name="sampled", samples=2))
    assert (more.cache_hits, more.calls_made) == (ITEMS, ITEMS)


def test_stop_then_resume_never_repeats_a_finished_call(make_judge, chat_server, monkeypatch):
    monkeypatch.setattr(runner, "FLUSH_EVERY", 2)
    chat_server.script = grader
    judge = make_judge(concurrency=1)
    run = JudgeRun.objects.create(judge=judge)

    def stop_once(r):
        JudgeRun.objects.filter(pk=r.pk, status=JudgeRun.RUNNING).update(status=JudgeRun.STOPPING)

    judge_run_execute(run=run, on_flush=stop_once)
    run.refresh_from_db()
    assert run.status == "stopped" and 0 < run.done_calls < ITEMS
    stopped_at = run.done_calls
    assert len(chat_server.requests) == stopped_at  # in-flight calls were finished and written, nothing new started

    run = judge_run_resume(run=run, enqueue=False)
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert (run.status, run.done_calls, run.calls_made) == ("finished", ITEMS, ITEMS)
    prompts = [json.dumps(r["messages"]) for r in chat_server.requests]
    assert len(prompts) == ITEMS == len(set(prompts))
    assert Judgment.objects.filter(judge=judge).count() == ITEMS


def test_crashed_run_resumes_without_duplicates(make_judge, chat_server, monkeypatch):
    monkeypatch.setattr(runner, "FLUSH_EVERY", 3)
    chat_server.script = grader
    judge = make_judge(concurrency=1)
    run = JudgeRun.objects.create(judge=judge)

    def crash(r):
        raise RuntimeError("worker lost")

    with pytest.raises(RuntimeError):
        judge_run_execute(run=run, on_flush=crash)
    run.refresh_from_db()
    assert run.status == "failed" and "worker lost" in run.error
    judgments = Judgment.objects.filter(run=run).select_related("response", "criterion")
    written = {json.dumps(j.response.text) + j.criterion.text for j in judgments}
    assert 0 < len(written) < ITEMS
    before = len(chat_server.requests)

    run = judge_run_resume(run=run, enqueue=False)
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert (run.status, run.done_calls) == ("finished", ITEMS)
    keys = list(Judgment.objects.filter(judge=judge).values_list("response_id", "criterion_id", "sample"))
    assert len(keys) == len(set(keys)) == ITEMS
    # calls finished before the crash were not made again
    redone = [parts(r) for r in chat_server.requests[before:] if "<options>" not in r["messages"][-1]["content"]]
    assert not {json.dumps(t) + i for t, i in redone} & written


def test_json_mode_is_requested_and_dropped_when_the_server_lacks_it(make_judge, run_judge, chat_server):
    def script(body, index):
        if "response_format" in body:
            return Reply(status=400, error="Unknown parameter: response_format")
        return grader(body, index)

    chat_server.script = script
    run, _ = run_judge(make_judge(concurrency=1))
    assert chat_server.requests[0]["response_format"] == {"type": "json_object"}
    assert "response_format" not in chat_server.requests[-1]
    assert (run.done_calls, run.invalid_count, run.failed_calls) == (ITEMS, 0, 0)


def test_the_api_key_comes_from_the_environment_and_is_never_stored(make_judge, run_judge, chat_server, monkeypatch):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("JUDGE_TEST_KEY", secret)
    judge = make_judge(api_key_env="JUDGE_TEST_KEY")
    run, _ = run_judge(judge)
    assert {h["authorization"] for h in chat_server.headers} == {f"Bearer {secret}"}
    stored = json.dumps([list(Judge.objects.values()), list(JudgeRun.objects.values()), list(Judgment.objects.values())], default=str)
    assert secret not in stored

    monkeypatch.delenv("JUDGE_TEST_KEY")
    with pytest.raises(Exception):
        run_judge(judge)
    failed = JudgeRun.objects.filter(judge=judge).order_by("-pk").first()
    assert failed.status == "failed" and "JUDGE_TEST_KEY is not set" in failed.error and secret not in failed.error


def test_replay_judge_takes_stock_of_imported_judgments(mini_project, run_judge):
    judge = Judge.objects.get(project=mini_project, name="judge-a")
    assert judge.backend == "replay"
    run, summary = run_judge(judge)
    assert (run.status, run.done_calls, run.invalid_count, run.calls_made) == ("finished", 3, 1, 0)


def test_retries_of_a_burst_are_jittered(make_judge, run_judge, chat_server):
    """Every call of the run (all eleven in flight at once) fails with a 429 that names no wait:
    their retries must not come back together (tenacity's random exponential wait), and every
    retry is counted in the run."""
    first = set()

    def script(body, index):
        key = str(body["messages"])
        if key not in first:
            first.add(key)
            return Reply(status=429, error="slow down")
        return grader(body, index)

    chat_server.script = script
    run, _ = run_judge(make_judge(concurrency=16, max_retries=3))
    waits = run_judge.sleeps
    assert len(waits) == ITEMS and len(set(waits)) == ITEMS  # one wait per call, no two alike
    assert all(0 <= w <= 0.5 for w in waits) and max(waits) - min(waits) > 0.1
    assert (run.status, run.done_calls, run.retries, run.failed_calls) == ("finished", ITEMS, ITEMS, 0)
    assert len(chat_server.requests) == 2 * ITEMS


def test_a_server_that_is_not_there_fails_each_call_as_a_connection_error(make_judge, run_judge):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    judge = make_judge(name="nowhere", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, concurrency=2)
    run, _ = run_judge(judge, scope={"criteria": ["c1-ecg"]})
    errors = set(Judgment.objects.filter(run=run).values_list("error", flat=True))
    assert errors == {"connection error (cannot connect); gave up after 2 attempts"}
    assert run.failed_calls == Judgment.objects.filter(run=run).count() > 0 and run.retries == run.failed_calls


def test_the_environments_proxy_carries_the_calls(make_judge, run_judge, chat_server, monkeypatch):
    """With HTTP_PROXY set for the endpoint's scheme, requests go through the proxy (here the
    loopback server stands in for it and sees the absolute URL); NO_PROXY hosts go direct."""
    import urllib.request

    monkeypatch.setenv("http_proxy", chat_server.url.removesuffix("/v1"))
    monkeypatch.setenv("no_proxy", "")
    monkeypatch.setattr(urllib.request, "proxy_bypass", lambda host: False)  # loopback is bypassed by default
    judge = make_judge(name="proxied", base_url="http://127.0.0.1:9/v1", max_retries=0)  # nothing listens on :9
    run, _ = run_judge(judge, scope={"criteria": ["c1-ecg"]})
    assert run.failed_calls == 0 and run.done_calls == len(chat_server.requests) > 0
