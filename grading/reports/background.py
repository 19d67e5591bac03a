"""A report's result as background work (issue 26, point 3): the one place that says, for a report,
its project and its validated parameters, whether the result is there, why its computation ended
without one, or that it is being computed — queuing exactly one computation when none is.

Everything reads and writes ``Report.run``'s one cache entry (``Report.cache_key``: the report, its
parameters, the model subset and the fingerprints of the projects it reads), so a page's builder,
an API request and a command with the same inputs compute once. Identical requests at once share
one computation: the first adds the key's pending mark (an atomic ``cache.add``) and queues the
task; the others find the mark. A changed label makes a new key (a new fingerprint), so the next
request queues one computation of the new data, and the requests after it wait for that one.

- The API (``grading.api.reports``) calls ``report_state``: a result answers 200, an error its
  status, a pending computation 202 with a status URL.
- A command calls ``report_settled``: the cached result, else, while another process computes it,
  that result when it comes (waiting at most ``WAIT_SECONDS``), else it computes it itself, with
  the key marked pending meanwhile (``cache.report_cached``), so requests wait for it.
"""
import time
from dataclasses import dataclass

from annotation.models import Project

from .cache import report_error, report_mark_pending, report_peek, report_pending_since, report_ready
from .registry import Report
from .subset import ModelSubset, model_subset
from .tasks import report_task

# How long a command waits for a computation another process has under way before doing it itself
# (its worker may be gone), and how often it looks.
WAIT_SECONDS = 120
LOOK_SECONDS = 0.2


@dataclass(frozen=True)
class ReportState:
    """Where the result of one report request stands: exactly one of ``result`` (``Report.run``'s
    whole result), ``error`` (``{"kind", "detail"}``; kind: unavailable, missing, invalid or failed)
    and ``since`` (epoch seconds when its computation was queued or started) is set."""
    key: str
    result: dict | None = None
    error: dict | None = None
    since: float | None = None


def _state(key: str) -> ReportState | None:
    result = report_peek(key=key)
    if result is not None:
        return ReportState(key=key, result=result)
    error = report_error(key=key)
    if error is not None:
        return ReportState(key=key, error=error)
    since = report_pending_since(key=key)
    return ReportState(key=key, since=since) if since is not None else None


def _enqueue(**kwargs) -> None:
    # Nothing was written, so there is no commit to wait for before queuing.
    report_task.delay(**kwargs)


def report_state(*, report: Report, project: Project, params: dict, data: dict, ci: bool = False,
                 subset: ModelSubset | None = None) -> ReportState:
    """The state of ``report``'s result for validated ``params`` (the parameter texts they were
    parsed from: ``data``, which the task parses again) under the model subset ``subset``; queues its
    computation when it is neither there nor under way. Under eager Celery (tests, small setups) the
    computation has run when this returns. A report that is not cached has no state: ValueError."""
    with model_subset(subset):
        key = report.cache_key(project=project, ci=ci, **params)
    if key is None:
        raise ValueError(f"report {report.key!r} is not cached: compute it in the request")
    state = _state(key)
    if state is None:
        if report_mark_pending(key=key):
            _enqueue(project_id=project.pk, report=report.key, data=data, ci=ci,
                     subset=subset.key() if subset else None, key=key)
        state = _state(key)
    # (None only if the mark went between the two looks and left nothing: the next look queues it again)
    return state or ReportState(key=key, since=time.time())


def report_settled(*, report: Report, project: Project, ci: bool = False, **params) -> dict:
    """``report``'s result for validated ``params`` (under the active model subset), as a command
    needs it now: cached, or computed by whoever has it under way (waited for), or computed here."""
    key = report.cache_key(project=project, ci=ci, **params)
    if key is not None:
        deadline = time.monotonic() + WAIT_SECONDS
        while not report_ready(key=key) and report_error(key=key) is None \
                and report_pending_since(key=key) is not None and time.monotonic() < deadline:
            time.sleep(LOOK_SECONDS)
    # a result there is read, not computed; an error found is raised again by computing (the same words)
    return report.run(project=project, ci=ci, **params)
