"""The OpenAI-compatible chat judge (``Judge.backend`` "openai"): its settings, how a run of it
builds prompts and calls the server, and the HTTP client, ``ChatBackend``.

Calling an OpenAI-compatible Chat Completions server (OpenAI, vLLM, Ollama, llama.cpp
server, ...): ``POST {base_url}/chat/completions`` with a bearer key, through urllib3's
thread-safe connection pool, with the retry policy below: 429, 408, 409, 5xx, timeouts and
connection errors are retried; other errors fail at once. JSON mode is asked for where the
server supports it (a 400 about ``response_format`` switches it off for the rest of the run).
The retry loop is tenacity's (random exponential waits, the server's Retry-After or
retry-after-ms first), so every attempt is counted in the run.

urllib3 rather than the official ``openai`` client: with 32 calls in flight the client's
request and response machinery alone kept 10,000 calls of 50 ms from finishing within 1.4x of
the ideal time on the 2-core benchmark machine, where urllib3 stays within 1.1x (issue 11's
note has the figures). One endpoint and its JSON are all a judge uses of the protocol.

Before every attempt (a retry too) the backend waits for its turn under the endpoint's
provider rate limits, when it was given a limiter (``ratelimit.EndpointLimiter``).

The API key is read from the environment variable the judge names, at call time; it is never
stored, logged or put in an error message. Redirects are never followed (a 30x is a failed
call), and the environment's HTTP(S) proxy is used when one is set for the endpoint's host.
``ChatBackend.complete`` is thread-safe and does no database work, so the runner can call it
from a pool of threads.
"""
import email.utils
import hashlib
import json
import os
import time
import urllib.request
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

import orjson
import urllib3
from django import forms
from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential
from tenacity.wait import wait_base
from urllib3.exceptions import HTTPError as TransportError
from urllib3.exceptions import NewConnectionError
from urllib3.exceptions import TimeoutError as TransportTimeout

from ...models import Judge
from ..compiled import CompiledCall, compiled_parse
from ..endpoints import endpoint_problems, endpoint_url, redact
from ..plan import PromptBuilder, template_for
from ..ratelimit import EndpointLimiter, EndpointLimits, endpoint_id, request_tokens, stricter
from ..settings import REASONING_EFFORTS, JudgeSettings, SettingsError
from .base import JudgeBackend, backend_get, backend_names, register

RETRYABLE_STATUS = {408, 409, 429}
MAX_RETRY_AFTER_SECONDS = 300.0  # a server asking for more would stall the run: cap the wait
ERROR_CHARS = 200  # of a server's error body kept in the stored error (keys and auth values redacted)


class CallFailed(Exception):
    """A call that produced no answer (retries exhausted or a non-retryable error)."""

    def __init__(self, message: str, *, attempts: int):
        super().__init__(message)
        self.attempts = attempts


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    latency_ms: float
    attempts: int


@dataclass(frozen=True)
class ChatConfig:
    model: str
    base_url: str
    api_key_env: str
    temperature: float
    max_retries: int
    timeout_seconds: float = 60.0
    max_tokens: int | None = 1024
    json_mode: bool = True
    backoff_base_seconds: float = 0.5
    backoff_max_seconds: float = 30.0
    reasoning_effort: str = ""

    def params(self) -> dict:
        """The request parameters that change the answer (part of the cache key)."""
        params: dict = {"temperature": self.temperature}
        if self.max_tokens:
            params["max_tokens"] = self.max_tokens
        if self.reasoning_effort:
            params["reasoning_effort"] = self.reasoning_effort
        if self.json_mode:
            params["response_format"] = {"type": "json_object"}
        return params


def cache_key(*, model: str, messages: list[dict], params: dict, sample: int) -> str:
    """sha256 of the canonical JSON of everything that determines an answer."""
    payload = json.dumps(
        {"model": model, "messages": messages, "params": params, "sample": sample},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def retry_after_seconds(headers) -> float | None:
    """Seconds the server asked us to wait, from retry-after-ms or Retry-After (seconds or date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def completion_from_body(body: bytes, *, latency_ms: float, attempts: int) -> Completion:
    """The answer text and token counts of a Chat Completions response body.

    A body that is not a completion (not JSON, no choices) is kept whole as the answer's raw
    text, so it is stored and counted invalid rather than lost."""
    text = body.decode("utf-8", errors="replace")
    try:
        data = orjson.loads(body)
        content = data["choices"][0]["message"]["content"]
        usage = data.get("usage") or {}
    except (orjson.JSONDecodeError, ValueError, KeyError, IndexError, TypeError):
        return Completion(text=text, tokens_in=0, tokens_out=0, latency_ms=latency_ms, attempts=attempts)
    return Completion(
        text=content if isinstance(content, str) else "", tokens_in=int(usage.get("prompt_tokens") or 0),
        tokens_out=int(usage.get("completion_tokens") or 0), latency_ms=latency_ms, attempts=attempts,
    )


def _pool(url: str, *, size: int):
    """A connection pool for ``url``'s host (``size`` connections kept alive: one per thread),
    through the environment's proxy for that host if it has one. No retries, no redirects: the
    backend decides what is retried, and a 30x must not lead the worker, or its key, to an
    address nobody allowed."""
    options = dict(maxsize=size, block=True, retries=False)
    host = urlsplit(url).hostname or ""
    proxy = urllib.request.getproxies().get(urlsplit(url).scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        return urllib3.ProxyManager(proxy, num_pools=1, **options)
    return urllib3.PoolManager(num_pools=1, **options)


class ChatBackend:
    """One per run; ``complete`` may be called from many threads at once."""

    def __init__(self, config: ChatConfig, *, sleep: Callable[[float], None] = time.sleep, limiter=None,
                 pool_size: int = 8):
        self.config = config
        self.sleep = sleep
        self.limiter = limiter
        self.json_mode = config.json_mode
        self.reasoning = bool(config.reasoning_effort)
        # The operator's endpoints, checked again here: a judge saved before they changed, or
        # written around the services, still sends nothing anywhere else, and its key only to the
        # endpoint it is paired with (issues 11 and 27). The URL called is the normalized one checked.
        problems = endpoint_problems(base_url=config.base_url, api_key_env=config.api_key_env, calls_out=True)
        if problems:
            raise CallFailed("; ".join(problems.values()), attempts=0)
        api_key = "not-needed"
        if config.api_key_env:
            api_key = os.environ.get(config.api_key_env, "")
            if not api_key:
                raise CallFailed(f"environment variable {config.api_key_env} is not set", attempts=0)
        self.api_key = api_key
        self.url = endpoint_url(config.base_url) + "/chat/completions"
        self.headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "evalsite-judge"}
        if config.api_key_env:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.timeout = urllib3.Timeout(total=config.timeout_seconds)
        self.pool = _pool(self.url, size=max(1, pool_size))

    def close(self) -> None:
        self.pool.clear()
        if self.limiter is not None:
            self.limiter.close()

    def _retrying(self) -> Retrying:
        """tenacity's retry loop for one call: up to ``max_retries`` more attempts after a
        retryable failure, waiting what the server asked for (Retry-After) or else a random
        wait up to the exponential bound ("full jitter"), so threads that failed together do not
        come back together."""
        return Retrying(
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=_ServerWait(wait_random_exponential(multiplier=self.config.backoff_base_seconds,
                                                     max=self.config.backoff_max_seconds)),
            retry=retry_if_exception_type(_Retryable), sleep=self.sleep, reraise=False,
        )

    def complete(self, messages: list[dict]) -> Completion:
        """One answer for ``messages``; raises ``CallFailed``."""
        attempts = 0
        tokens = request_tokens(messages, self.config.max_tokens) if self.limiter is not None else 0

        def attempt() -> Completion:
            nonlocal attempts
            attempts += 1
            while True:
                if self.limiter is not None:
                    self.limiter.acquire(tokens=tokens)
                params = self.config.params()
                if not self.json_mode:
                    params.pop("response_format", None)
                if not self.reasoning:
                    params.pop("reasoning_effort", None)
                started = time.perf_counter()
                payload = orjson.dumps({"model": self.config.model, "messages": messages, **params})
                try:
                    reply = self.pool.request("POST", self.url, body=payload, headers=self.headers, timeout=self.timeout,
                                              redirect=False, retries=False)
                except NewConnectionError:
                    raise _Retryable("connection error (cannot connect)") from None
                except TransportTimeout:
                    raise _Retryable(f"timeout after {self.config.timeout_seconds:g} s") from None
                except TransportError as exc:
                    raise _Retryable(f"connection error ({exc.__class__.__name__})") from None
                status = reply.status
                if status == 200:
                    return completion_from_body(reply.data, latency_ms=(time.perf_counter() - started) * 1000,
                                                attempts=attempts)
                message = _error_message(reply.data)
                if status == 400 and self.json_mode and "response_format" in message:
                    self.json_mode = False  # the server has no JSON mode: ask again without it (same attempt)
                    continue
                if status == 400 and self.reasoning and "reasoning_effort" in message:
                    self.reasoning = False  # nor reasoning effort: the same, for the rest of the run
                    continue
                if status not in RETRYABLE_STATUS and status < 500:
                    raise CallFailed(f"HTTP {status}: {redact(message, self.api_key)[:ERROR_CHARS]}", attempts=attempts)
                raise _Retryable(f"HTTP {status}", retry_after_seconds(reply.headers))

        # The first attempt runs bare: most calls succeed, and building the retry loop for each
        # is measurable GIL time at 32 calls in flight. A retryable failure then enters the loop
        # as its first attempt (replayed, not sent again), so the waits are tenacity's alone.
        try:
            return attempt()
        except _Retryable as failure:
            replay = [failure]

        def again() -> Completion:
            if replay:
                raise replay.pop()
            return attempt()

        try:
            return self._retrying()(again)
        except RetryError as exc:
            reason = exc.last_attempt.exception().reason
            raise CallFailed(f"{reason}; gave up after {attempts} attempts", attempts=attempts) from None


def _error_message(body: bytes) -> str:
    """The message of an error response: its ``error.message`` when it is the usual JSON, else
    the body as text."""
    try:
        error = orjson.loads(body).get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
    except (orjson.JSONDecodeError, AttributeError):
        pass
    return body.decode("utf-8", errors="replace")


class _Retryable(Exception):
    """A failure worth another attempt; ``wait``: the seconds the server asked for, if it did."""

    def __init__(self, reason: str, wait: float | None = None):
        super().__init__(reason)
        self.reason, self.wait = reason, wait


class _ServerWait(wait_base):
    """The server's Retry-After (capped at ``MAX_RETRY_AFTER_SECONDS``) when it gave one, else ``jitter``."""

    def __init__(self, jitter: wait_base):
        self.jitter = jitter

    def __call__(self, retry_state) -> float:
        failure = retry_state.outcome.exception() if retry_state.outcome else None
        wait = getattr(failure, "wait", None)
        return min(wait, MAX_RETRY_AFTER_SECONDS) if wait is not None else self.jitter(retry_state)


# -- provider limits --------------------------------------------------------------------------------


def endpoint_limits(*, base_url: str, api_key_env: str) -> EndpointLimits:
    """The endpoint's limits (``ratelimit``): the strictest each judge on it sets, over the judges
    of every backend that calls out (a judge whose settings do not parse is skipped; it cannot run
    anyway)."""
    mine = endpoint_id(base_url=base_url, api_key_env=api_key_env)
    rpm = tpm = 0
    rows = (Judge.objects.filter(backend__in=backend_names(calls_out=True))
            .values_list("backend", "base_url", "api_key_env", "settings"))
    for backend, url, key_env, data in rows.iterator():
        if endpoint_id(base_url=url, api_key_env=key_env) != mine:
            continue
        try:
            parsed = backend_get(backend).settings_parse(data)
        except SettingsError:
            continue
        rpm = stricter(rpm, parsed.requests_per_minute)
        tpm = stricter(tpm, parsed.tokens_per_minute)
    return EndpointLimits(requests_per_minute=rpm, tokens_per_minute=tpm)


def endpoint_limiter(judge) -> EndpointLimiter | None:
    """The limiter for ``judge``'s endpoint, or None when no judge on it sets a limit."""
    limits = endpoint_limits(base_url=judge.base_url, api_key_env=judge.api_key_env)
    if not limits:
        return None
    return EndpointLimiter(endpoint=endpoint_id(base_url=judge.base_url, api_key_env=judge.api_key_env), limits=limits)


# -- the backend ----------------------------------------------------------------------------------

LIMIT_HELP = ("The provider's limit for this endpoint (base URL + key variable), shared by every judge and run "
              "on it; the strictest one set applies. Empty or 0: none.")
PLAIN_SETTINGS = ("json_mode", "timeout_seconds", "max_tokens", "reasoning_effort", "requests_per_minute",
                  "tokens_per_minute", "shuffle_options", "shuffle_seed", "min_evidence")
DROPPED_WHEN_EMPTY = ("reasoning_effort", "requests_per_minute", "tokens_per_minute")


def _ids(text: str) -> list[str]:
    return [t for t in text.replace(",", " ").split() if t]


def min_evidence_field() -> forms.Field:
    return forms.IntegerField(min_value=0, initial=0, help_text="Verbatim quotes required (raises the criterion's own minimum).")


@register
class ChatCompletionsBackend(JudgeBackend):
    """An LLM behind an OpenAI-compatible Chat Completions endpoint, one call per (response,
    criterion, sample), or per trait checklist in compiled mode."""

    name = "openai"
    label = "OpenAI-compatible chat completions"
    position = 0
    calls_out = needs_model = executes_calls = page_form = configurable = True
    settings_keys = ("json_mode", "timeout_seconds", "max_tokens", "reasoning_effort", "backoff_base_seconds",
                     "backoff_max_seconds", "requests_per_minute", "tokens_per_minute", "shuffle_options", "shuffle_seed",
                     "min_evidence", "few_shot", "compiled", "variant", "variant_of")

    def settings_fields(self) -> dict:
        return {
            "json_mode": forms.BooleanField(required=False, initial=True, help_text="Ask for JSON mode where the server has it."),
            "timeout_seconds": forms.FloatField(min_value=0.001, initial=60, help_text="Per request."),
            "max_tokens": forms.IntegerField(required=False, min_value=1, initial=1024, help_text="Most output tokens per answer."),
            "reasoning_effort": forms.ChoiceField(
                required=False, choices=[("", "(not sent)"), *[(e, e) for e in REASONING_EFFORTS]],
                help_text="For reasoning models; dropped if the server does not know it."),
            "requests_per_minute": forms.IntegerField(required=False, min_value=0, label="Requests per minute",
                                                      help_text=LIMIT_HELP),
            "tokens_per_minute": forms.IntegerField(required=False, min_value=0, label="Tokens per minute", help_text=LIMIT_HELP),
            "shuffle_options": forms.BooleanField(required=False, help_text="Shuffle ordinal / nominal options per item."),
            "shuffle_seed": forms.IntegerField(initial=0),
            "min_evidence": min_evidence_field(),
            "few_shot_cohort": forms.CharField(required=False, help_text="Cohort whose labels give the few-shot examples."),
            "few_shot_k": forms.IntegerField(min_value=0, initial=0, help_text="Examples per item, verdict-balanced."),
            "few_shot_seed": forms.IntegerField(initial=0),
            "few_shot_cases": forms.CharField(
                required=False, label="Few-shot cases",
                help_text="Case ids the examples may come from, separated by commas (empty: a seeded fifth of the cases). "
                          "Reports of this judge leave these cases out."),
        }

    def settings_initial(self, settings: JudgeSettings) -> dict:
        return {**{name: getattr(settings, name) for name in PLAIN_SETTINGS},
                "few_shot_cohort": settings.few_shot_cohort, "few_shot_k": settings.few_shot_k,
                "few_shot_seed": settings.few_shot_seed, "few_shot_cases": ", ".join(settings.few_shot_split.get("cases", []))}

    def settings_write(self, data: dict, settings: dict) -> None:
        for key in PLAIN_SETTINGS:
            if data.get(key) is not None:
                settings[key] = data[key]
        for key in DROPPED_WHEN_EMPTY:
            if not data.get(key):
                settings.pop(key, None)  # emptied or not set: kept out of the settings JSON
        settings.pop("few_shot", None)
        if data.get("few_shot_cohort") or data.get("few_shot_k"):
            settings["few_shot"] = {"cohort": data.get("few_shot_cohort") or "", "k": data.get("few_shot_k") or 0,
                                    "seed": data.get("few_shot_seed") or 0}
            named = _ids(data.get("few_shot_cases") or "")
            if named:
                settings["few_shot"]["split"] = {"cases": named}

    def compiled(self, settings: JudgeSettings) -> bool:
        return settings.compiled

    def execute(self, *, context, calls) -> None:
        judge, s = context.judge, context.settings
        config = ChatConfig(
            model=judge.model, base_url=judge.base_url, api_key_env=judge.api_key_env, temperature=judge.temperature,
            max_retries=judge.max_retries, timeout_seconds=s.timeout_seconds, max_tokens=s.max_tokens,
            json_mode=s.json_mode, reasoning_effort=s.reasoning_effort, backoff_base_seconds=s.backoff_base_seconds,
            backoff_max_seconds=s.backoff_max_seconds,
        )
        concurrency = max(1, judge.concurrency)
        client = ChatBackend(config, sleep=context.sleep, limiter=endpoint_limiter(judge), pool_size=concurrency)
        builder = PromptBuilder(judge=judge, settings=s, template=template_for(judge))
        try:
            context.answer_concurrently(calls, client=client, messages=builder.messages, params=config.params(),
                                        concurrency=concurrency)
        finally:
            client.close()

    def parse(self, call, text: str) -> list:
        if isinstance(call, CompiledCall):
            return list(zip(call.calls(), compiled_parse(text=text, call=call)))
        return super().parse(call, text)

    def limits(self, *, judge) -> dict:
        return endpoint_limits(base_url=judge.base_url, api_key_env=judge.api_key_env).as_dict()

    def summary(self, judge) -> str:
        text = super().summary(judge)
        try:
            settings = self.settings_parse(judge.settings)
        except ValueError:
            return text
        if settings.requests_per_minute:
            text += f" · ≤ {settings.requests_per_minute} requests/min"
        if settings.tokens_per_minute:
            text += f" · ≤ {settings.tokens_per_minute} tokens/min"
        return text
