"""Caching of report results in Django's cache (the database cache in deployments).

A key holds the report name, its parameters and the fingerprint of every project the
report reads (``selectors.project_fingerprint``), so a changed label, judgment,
adjudication, criterion or judge of one of those projects makes a new key and the stale
entry is never read again — nothing has to be invalidated explicitly and no signals are
needed, and a change in another project leaves the entry in place.

A computation that fails unexpectedly is stored as ``{"error", "failed": True}`` for a
short while (``FAILED_SECONDS``), so a page shows the error instead of waiting, and
``report_forget`` clears it (the page's retry button). A report's background computation
(``background``) keeps why it ended without a result apart, under ``KEY:error``
(``report_store_error``), since its result's entry is read by every caller of ``Report.run``.
"""
import hashlib
import json
import time
from collections.abc import Callable

from django.core.cache import cache

from annotation.models import Project
from grading import selectors

from .subset import active_subset

TIMEOUT_SECONDS = 7 * 24 * 3600
PENDING_SECONDS = 600
FAILED_SECONDS = 15 * 60


def report_key(*, projects: list[Project], name: str, params: dict) -> str:
    prints = [f"{p.pk}.{selectors.project_fingerprint(project=p)}" for p in projects]
    subset = active_subset()  # a result restricted to some models is its own entry
    text = json.dumps({"name": name, "params": params, "projects": prints, **({"subset": subset.key()} if subset else {})},
                      sort_keys=True, default=str)
    return f"evalsite:report:{name}:{hashlib.sha256(text.encode()).hexdigest()[:32]}"


def report_cached(*, projects: list[Project], name: str, params: dict, compute: Callable[[], dict]) -> dict:
    """The cached result for (name, params, fingerprints), computing and storing it on a miss.
    While it computes, the key is marked pending (unless a queued computation marked it already),
    so a request for the same result meanwhile waits for this one instead of queuing another."""
    key = report_key(projects=projects, name=name, params=params)
    result = cache.get(key)
    if result is None:
        marked = report_mark_pending(key=key)
        try:
            result = compute()
        except BaseException:
            if marked:
                cache.delete(f"{key}:pending")
            raise
        cache.set(key, result, TIMEOUT_SECONDS)
        cache.delete(f"{key}:pending")
    return result


def report_peek(*, key: str) -> dict | None:
    return cache.get(key)


def report_ready(*, key: str) -> bool:
    """Whether the result is cached, without reading it: a full-scale result is tens of megabytes
    to fetch and unpickle, which whoever reads it afterwards would do a second time."""
    return cache.has_key(key)


def report_mark_pending(*, key: str) -> bool:
    """Mark a background computation as queued; False if one is queued already."""
    return cache.add(f"{key}:pending", time.time(), PENDING_SECONDS)


def report_unmark_pending(*, key: str) -> None:
    cache.delete(f"{key}:pending")


def report_pending_since(*, key: str) -> float | None:
    """When the computation of ``key`` was queued (epoch seconds), or None."""
    since = cache.get(f"{key}:pending")
    return float(since) if isinstance(since, (int, float)) and not isinstance(since, bool) else None


def report_store_failure(*, key: str, message: str) -> dict:
    """Remember that computing ``key`` failed, so the page shows why instead of polling."""
    failure = {"error": message, "failed": True}
    cache.set(key, failure, FAILED_SECONDS)
    cache.delete(f"{key}:pending")
    return failure


def report_store_error(*, key: str, error: dict, seconds: int) -> None:
    """Remember why the background computation of ``key`` ended without a result (``error``: what
    ``report_error`` reads), then drop its pending mark: a reader never sees neither. Kept apart
    from the result's entry, which ``report_cached`` reads as a result."""
    cache.set(f"{key}:error", error, seconds)
    cache.delete(f"{key}:pending")


def report_error(*, key: str) -> dict | None:
    """Why the computation of ``key`` ended without a result, while that is remembered, or None."""
    return cache.get(f"{key}:error")


def report_forget(*, key: str) -> None:
    """Drop a stored result or failure and the pending mark: the next view computes it again."""
    cache.delete_many([key, f"{key}:pending", f"{key}:error"])
