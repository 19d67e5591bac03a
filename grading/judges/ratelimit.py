"""Provider rate limits (issue 11, point 4): requests and tokens per minute per endpoint, shared
by every judge and run that uses the endpoint, in every worker process.

An *endpoint* is what a provider limits: a base URL together with the name of the variable
that holds the key (two keys on one URL are two accounts). Its limits are the strictest
``requests_per_minute`` and ``tokens_per_minute`` that any judge using it sets (0 or absent on
every judge: no limit), so two judges that disagree never add up to more than either allows.
Which judges share an endpoint is read by the chat backend (``backends.chat.endpoint_limits``);
this module holds the arithmetic and the shared state, and reads no model.

- Requests are spaced evenly, one every 60 / RPM seconds (GCRA with a burst of one): a provider
  that also enforces its per-minute limit over shorter windows sees no burst.
- Tokens come from a bucket that holds one minute's worth and refills continuously. A request's
  tokens are estimated before it is sent, as providers count it when it arrives: its characters
  divided by four plus its ``max_tokens``. A request larger than the whole minute's limit waits
  for a full bucket.
- Every attempt is a request: a retry waits for its turn like a first attempt.

The arithmetic (GCRA) and the waiting are pyrate-limiter's. The state is one timestamp per
limit: in Redis when ``EVALSITE_RATE_LIMIT_REDIS_URL`` is set (by default the broker, when it
is Redis), through the library's atomic Lua script, so every process on every machine shares
it; otherwise (the embedded mode) in a small file per limit under ``EVALSITE_RATE_LIMIT_DIR``,
read and written under an exclusive ``fcntl`` lock, so every process on the machine shares it.
"""
import fcntl
import hashlib
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from math import ceil
from pathlib import Path

from django.conf import settings
from pyrate_limiter import (
    Duration,
    Limiter,
    Rate,
    RedisStateStore,
    SingleBucketFactory,
    StateBucket,
    StateStore,
    WallClock,
)

from .endpoints import DEFAULT_BASE_URL, UrlRefused, endpoint_url

CHARS_PER_TOKEN = 4
WAKE_BUFFER_MS = 5  # after a wait, try again this much later than the limit allows (clock grain)


@dataclass(frozen=True)
class EndpointLimits:
    requests_per_minute: int = 0
    tokens_per_minute: int = 0

    def __bool__(self) -> bool:
        return bool(self.requests_per_minute or self.tokens_per_minute)

    def as_dict(self) -> dict:
        return {"requests_per_minute": self.requests_per_minute, "tokens_per_minute": self.tokens_per_minute}


def endpoint_id(*, base_url: str, api_key_env: str) -> str:
    """A short stable name of the endpoint (base URL + key variable name), used as the key of
    its shared state; an empty base URL is the official one. Two spellings of one URL (case, a
    default port, an escaped dot) are one endpoint: the normalized URL counts (endpoints.py)."""
    try:
        url = endpoint_url(base_url)
    except UrlRefused:  # never called, but still named
        url = (base_url or DEFAULT_BASE_URL).rstrip("/")
    return hashlib.sha256(f"{url}\n{api_key_env}".encode()).hexdigest()[:24]


def stricter(current: int, candidate: int) -> int:
    """The stricter of two per-minute limits, 0 meaning none."""
    if not candidate:
        return current
    return min(current, candidate) if current else candidate


def request_tokens(messages: list[dict], max_tokens: int | None) -> int:
    """What a request counts against a tokens-per-minute limit, estimated before it is sent."""
    chars = sum(len(m.get("content") or "") for m in messages)
    return max(1, ceil(chars / CHARS_PER_TOKEN) + (max_tokens or 0))


class FileStateStore(StateStore):
    """A limit's state in a file, read and written under an exclusive ``fcntl`` lock: shared by
    every process of the machine (the embedded mode, where there is no Redis)."""

    is_async = False
    default_clock = WallClock()  # state that outlives a process: wall time, not a monotonic clock

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    @contextmanager
    def _locked(self):
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # releases the lock

    @staticmethod
    def _load(fd: int, algorithm, rates):
        values = os.pread(fd, 256, 0).decode("ascii", errors="replace").split()
        if len(values) != len(rates) or not all(v.isdigit() for v in values):
            return algorithm.initial(rates)
        return algorithm.decode(values)

    def check(self, algorithm, rates, now, weight):
        with self._locked() as fd:
            state, decision = algorithm.step(rates, self._load(fd, algorithm, rates), now, weight)
            if decision.allowed:
                data = " ".join(str(int(v)) for v in state).encode("ascii")
                os.pwrite(fd, data, 0)
                os.ftruncate(fd, len(data))
            return decision

    def read(self, algorithm, rates):
        with self._locked() as fd:
            return self._load(fd, algorithm, rates)

    def reset(self) -> None:
        with self._locked() as fd:
            os.ftruncate(fd, 0)


class EndpointLimiter:
    """Waits, before each request to one endpoint, until its limits allow the request.
    Thread-safe: the runner's threads call ``acquire`` concurrently."""

    def __init__(self, *, endpoint: str, limits: EndpointLimits):
        self.endpoint, self.limits = endpoint, limits
        self._redis = None
        redis_url = getattr(settings, "EVALSITE_RATE_LIMIT_REDIS_URL", "")
        if redis_url:
            import redis  # lazy: only with a Redis URL for the shared limits

            self._redis = redis.Redis.from_url(redis_url)
        self.requests = self._limiter("requests", Rate(limits.requests_per_minute, Duration.MINUTE, burst=1)) \
            if limits.requests_per_minute else None
        self.tokens = self._limiter("tokens", Rate(limits.tokens_per_minute, Duration.MINUTE)) \
            if limits.tokens_per_minute else None

    def _limiter(self, kind: str, rate: Rate) -> Limiter:
        name = f"{self.endpoint}-{kind}"
        if self._redis is not None:
            store = RedisStateStore(self._redis, key=f"evalsite:ratelimit:{name}")
        else:
            store = FileStateStore(Path(settings.EVALSITE_RATE_LIMIT_DIR) / name)
        bucket = StateBucket([rate], store=store)
        return Limiter(SingleBucketFactory(bucket, schedule_leak=False), buffer_ms=WAKE_BUFFER_MS)

    def acquire(self, *, tokens: int = 1) -> float:
        """Block until one request of ``tokens`` may go; returns the seconds waited."""
        started = time.monotonic()
        if self.requests is not None:
            self.requests.try_acquire(self.endpoint)
        if self.tokens is not None:
            self.tokens.try_acquire(self.endpoint, weight=min(tokens, self.limits.tokens_per_minute))
        return time.monotonic() - started

    def close(self) -> None:
        if self._redis is not None:
            self._redis.close()
