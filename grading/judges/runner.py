"""Executing one judge run (SPEC §7): one call per (response, criterion, sample), up to the
judge's concurrency limit at once, answers served from the persistent cache when the same
request was made before, every result written idempotently on the ``judgment_unique_call``
key, progress and cost written as it goes.

Threads do only HTTP; this thread does all database work (a Django connection belongs to
one thread). At most the concurrency limit of calls is sent and not yet written: the answers
that have come back are written (one transaction for all of them) before another call is
sent, so a worker killed mid-run leaves at most that many calls to be made, and paid, again
(issue 27, point 3; with 50 ms calls, 32 at once, on a busy 2-core machine this costs 5-15%
of the throughput, bench/judge_calls.py; with a model's seconds-long calls, nothing to speak
of). Memory stays flat, and a stop takes effect within one flush: in-flight calls finish and
are written, nothing new starts. Resuming a run skips the calls it already finished; a
crashed worker's run is re-executed by the next worker the same way, and the unique key makes
double writes impossible. A transport failure (retries exhausted) is stored as an invalid
judgment with its error, counted, and redone when the run is resumed; an unparseable answer
is a real answer: stored invalid, cached, never retried.

What a run calls is its judge's backend's business (``grading.judges.backends``): the backend
plans (``compiled``), executes (``execute``, through the ``RunContext`` this module implements:
``record`` for a local answer, ``answer_concurrently`` for calls to a client), parses and
prices its answers; this module owns the lease, the writes, the cache, the budget and the counters.
"""
import logging
import queue
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from itertools import islice
from typing import Callable, Iterable

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from ..models import Judge, JudgeCacheEntry, JudgeRun, Judgment
from . import parsing, plan
from .backends import JudgeBackend, backend_for
from .backends.chat import CallFailed, cache_key
from .calls import Call
from .compiled import CompiledCall, compiled_calls
from .lease import HEARTBEAT_SECONDS, LeaseLost, lease_add, lease_claim, lease_held, lease_token, lease_update
from .settings import JudgeSettings

logger = logging.getLogger(__name__)


class RunHeld(Exception):
    """The run is being executed by another worker (its lease is live): this copy does nothing."""


FLUSH_EVERY = 200
FLUSH_SECONDS = 0.5
CHUNK = 256
JUDGMENT_COLUMNS = (
    "judge_id", "run_id", "response_id", "criterion_id", "rubric_version_id", "sample", "condition", "verdict",
    "option_label", "value", "valid", "evidence_capped", "explanation", "evidence", "raw", "tokens_in", "tokens_out",
    "latency_ms", "cost_usd", "cached", "error", "created_at",
)
JUDGMENT_KEY = ("judge_id", "response_id", "criterion_id", "sample")  # the judgment_unique_call constraint
CACHE_COLUMNS = ("key", "model", "text", "tokens_in", "tokens_out", "created_at")


def _upsert_sql(table: str, columns: tuple, conflict: tuple, update: tuple) -> str:
    """INSERT ... ON CONFLICT for SQLite (3.24+) and PostgreSQL alike.

    Raw SQL rather than ``bulk_create(update_conflicts=True)``: building model instances and
    compiling every field was the largest share of the runner's own GIL time (bench)."""
    q = connection.ops.quote_name
    action = "DO UPDATE SET " + ", ".join(f"{q(c)} = EXCLUDED.{q(c)}" for c in update) if update else "DO NOTHING"
    return (
        f"INSERT INTO {q(table)} ({', '.join(q(c) for c in columns)}) VALUES ({', '.join(['%s'] * len(columns))}) "
        f"ON CONFLICT ({', '.join(q(c) for c in conflict)}) {action}"
    )


@dataclass(frozen=True)
class RunSummary:
    run: int
    status: str
    judgments: int
    invalid: int
    failed: int
    cache_hits: int
    calls: int
    cost_usd: float
    seconds: float

    def as_dict(self) -> dict:
        return {
            "run": self.run, "status": self.status, "judgments": self.judgments, "invalid": self.invalid,
            "failed": self.failed, "cache_hits": self.cache_hits, "calls": self.calls, "cost_usd": self.cost_usd,
            "seconds": round(self.seconds, 3),
        }


def run_config(judge: Judge) -> dict:
    """What an execution of ``judge`` runs with: model, endpoint, sampling, limits, settings
    and the prompt template's name and version (the key variable's name only, never a key)."""
    template = plan.template_for(judge)
    return {
        "model": judge.model, "backend": judge.backend, "base_url": judge.base_url, "api_key_env": judge.api_key_env,
        "condition": judge.condition, "temperature": judge.temperature, "samples": judge.samples,
        "concurrency": judge.concurrency, "max_retries": judge.max_retries,
        "price_in_per_mtok": float(judge.price_in_per_mtok), "price_out_per_mtok": float(judge.price_out_per_mtok),
        "settings": judge.settings or {}, "template": {"name": template.name, "version": template.version},
        "endpoint_limits": backend_for(judge).limits(judge=judge),
    }


class _Writer:
    """Buffers results and writes them in batches, with the run's counters and the stop check."""

    def __init__(self, run: JudgeRun, on_flush: Callable | None, token: str):
        self.run, self.token = run, token
        self.on_flush = on_flush
        self.rows: list[dict] = []
        self.cache_rows: list[tuple] = []
        self.delta = dict(done=0, invalid=0, failed=0, hits=0, calls=0, retries=0, tin=0, tout=0, cost=Decimal(0))
        self.last_flush = time.monotonic()
        self.last_heartbeat = time.monotonic()
        self.last_status = time.monotonic()
        self.stopping = False
        # The budget: what the run had spent before this execution, plus what it adds, and the
        # mean cost of the calls made so far (the estimate of a call not yet answered).
        self.budget = run.budget_usd
        self.spent = Decimal(run.cost_usd or 0)
        self.priced_calls, self.priced_cost = 0, Decimal(0)
        self.budget_held = False  # a call was not sent because the budget could not cover it

    def budget_allows(self, in_flight: int) -> bool:
        """Whether one more call may be sent with ``in_flight`` calls unanswered: what is spent
        plus every unanswered call (this one included) at the mean cost so far stays within the
        budget. Before the first answer the cost of a call is unknown: one at a time."""
        if self.budget is None:
            return True
        if self.priced_calls == 0:
            allowed = in_flight == 0 and self.spent < self.budget
        else:
            allowed = self.spent + (in_flight + 1) * (self.priced_cost / self.priced_calls) <= self.budget
        self.budget_held = self.budget_held or not allowed
        return allowed

    def add(self, row: dict, *, calls: int = 0, retries: int = 0, hit: bool = False) -> None:
        self.rows.append(row)
        d = self.delta
        d["done"] += 0 if row["error"] else 1
        d["invalid"] += 1 if (not row["valid"] and not row["error"]) else 0
        d["failed"] += 1 if row["error"] else 0
        d["hits"] += 1 if hit else 0
        d["calls"] += calls
        d["retries"] += retries
        d["tin"] += row["tokens_in"]
        d["tout"] += row["tokens_out"]
        d["cost"] += row["cost_usd"]
        self.spent += row["cost_usd"]
        if calls:
            self.priced_calls += 1
            self.priced_cost += row["cost_usd"]

    def add_cache(self, *, key: str, model: str, text: str, tokens_in: int, tokens_out: int) -> None:
        self.cache_rows.append((key, model, text, tokens_in, tokens_out))

    def maybe_flush(self) -> None:
        if len(self.rows) >= FLUSH_EVERY or time.monotonic() - self.last_flush >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the buffered answers, cache entries and counter deltas in one transaction."""
        self.last_flush = time.monotonic()
        if self.rows or self.cache_rows:
            now = connection.ops.adapt_datetimefield_value(timezone.now())
            evidence = Judgment._meta.get_field("evidence")
            updated = tuple(c for c in JUDGMENT_COLUMNS if c not in JUDGMENT_KEY and c != "created_at")
            d = self.delta
            with transaction.atomic(), connection.cursor() as cursor:
                # The counters first, on the lease: an execution that lost the run writes nothing.
                lease_add(
                    run=self.run, token=self.token, done_calls=d["done"], invalid_count=d["invalid"],
                    failed_calls=d["failed"], cache_hits=d["hits"], calls_made=d["calls"], retries=d["retries"],
                    tokens_in=d["tin"], tokens_out=d["tout"], cost_usd=d["cost"],
                )
                if self.cache_rows:
                    cursor.executemany(_upsert_sql(JudgeCacheEntry._meta.db_table, CACHE_COLUMNS, ("key",), ()),
                                       [(*row, now) for row in self.cache_rows])
                if self.rows:
                    cursor.executemany(
                        _upsert_sql(Judgment._meta.db_table, JUDGMENT_COLUMNS, JUDGMENT_KEY, updated),
                        [tuple(evidence.get_db_prep_save(r["evidence"], connection) if c == "evidence" else
                               (now if c == "created_at" else r[c]) for c in JUDGMENT_COLUMNS) for r in self.rows],
                    )
            self.rows, self.cache_rows = [], []
            self.last_heartbeat = time.monotonic()
            self.delta = {k: (Decimal(0) if k == "cost" else 0) for k in self.delta}
        if time.monotonic() - self.last_heartbeat >= HEARTBEAT_SECONDS:  # slow calls: still alive, still ours
            lease_update(run=self.run, token=self.token)
            self.last_heartbeat = time.monotonic()
        if self.on_flush is not None or time.monotonic() - self.last_status >= FLUSH_SECONDS:
            # a stop is seen within FLUSH_SECONDS however often answers are written (at every
            # flush when a test's on_flush watches them)
            status = JudgeRun.objects.filter(pk=self.run.pk).values_list("status", flat=True).first()
            self.stopping = status == JudgeRun.STOPPING
            self.last_status = time.monotonic()
        if self.on_flush is not None:
            self.on_flush(self.run)


class _Execution:
    """The ``RunContext`` of one execution: what the judge's backend writes its answers through."""

    def __init__(self, run: JudgeRun, backend: JudgeBackend, settings: JudgeSettings, writer: _Writer,
                 sleep: Callable[[float], None]):
        self.run = run
        self.judge = run.judge
        self.backend = backend
        self.settings = settings
        self.writer = writer
        self.sleep = sleep

    @property
    def stopping(self) -> bool:
        return self.writer.stopping

    def record(self, call: Call, outcome: parsing.Outcome, **extra) -> None:
        self.writer.add(self.judgment(call, outcome, **extra))

    def flush_maybe(self) -> None:
        self.writer.maybe_flush()

    def judgment(self, call: Call, outcome: parsing.Outcome, **extra) -> dict:
        item = call.item
        outcome = parsing.evidence_apply(
            outcome=outcome, response_text=item.response_text, kind=item.kind, options=item.options,
            min_quotes=max(item.min_evidence, self.settings.min_evidence),
        )
        explanation = outcome.explanation
        if not outcome.valid and outcome.problem:
            explanation = f"[invalid output: {outcome.problem}] {explanation}".strip()
        return {
            "judge_id": self.judge.pk, "run_id": self.run.pk, "response_id": item.response_pk,
            "criterion_id": item.criterion_pk, "rubric_version_id": item.rubric_version_id, "sample": call.sample,
            "condition": self.judge.condition, "verdict": outcome.verdict, "option_label": outcome.option_label,
            "value": outcome.value, "valid": outcome.valid, "evidence_capped": outcome.evidence_capped,
            "explanation": explanation, "evidence": outcome.evidence, "raw": "", "tokens_in": 0, "tokens_out": 0,
            "latency_ms": None, "cost_usd": Decimal(0), "cached": False, "error": "", **extra,
        }

    def add_answer(self, call, text: str, *, calls: int = 0, retries: int = 0, hit: bool = False, **extra) -> None:
        """Write the judgments of one answer; tokens, cost and the call itself count once, on the first."""
        for n, (single, outcome) in enumerate(self.backend.parse(call, text)):
            once = extra if n == 0 else {k: v for k, v in extra.items() if k not in ("tokens_in", "tokens_out", "cost_usd")}
            self.writer.add(self.judgment(single, outcome, raw=text, **once), calls=calls if n == 0 else 0,
                            retries=retries if n == 0 else 0, hit=hit)

    # -- calls to a client (the chat backend's HTTP client), from a pool of threads --------------
    def answer_concurrently(self, calls: Iterable, *, client, messages: Callable, params: dict, concurrency: int) -> None:
        """``client.complete(messages)`` returns a ``Completion`` or raises ``CallFailed``
        (``backends.chat``); it is called from ``concurrency`` threads and does no database work."""
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"judge-run-{self.run.pk}") as pool:
            self._pump(pool, self._misses(calls, messages, params), client, window=concurrency)

    def _misses(self, calls, messages_for, params):
        """Yield (call, key) for calls the cache cannot answer; write the answered ones."""
        calls = iter(calls)
        while batch := list(islice(calls, CHUNK)):
            chunk = [(c, messages_for(c)) for c in batch]
            keyed = [(c, m, cache_key(model=self.judge.model, messages=m, params=params, sample=c.sample)) for c, m in chunk]
            cached = dict(JudgeCacheEntry.objects.filter(key__in=[k for *_, k in keyed]).values_list("key", "text"))
            for call, messages, key in keyed:
                if self.writer.stopping:
                    return
                text = cached.get(key)
                if text is None:
                    yield call, messages, key
                    continue
                self.add_answer(call, text, hit=True, cached=True)
                self.writer.maybe_flush()

    def _pump(self, pool, source, client, *, window: int) -> None:
        """Keep ``window`` calls submitted; collect each as it completes (a done-callback puts
        it on a queue, which is cheaper than re-arming ``wait`` on every pending future) and
        write the answers collected before sending more: a call is sent only when fewer than
        ``window`` are sent and unwritten, so a kill repeats at most ``window`` calls."""
        finished: queue.SimpleQueue = queue.SimpleQueue()
        in_flight: dict = {}
        exhausted = False
        while True:
            while (not exhausted and not self.writer.stopping and len(in_flight) < window
                   and self.writer.budget_allows(len(in_flight))):
                nxt = next(source, None)
                if nxt is None:
                    exhausted = True
                    break
                call, messages, key = nxt
                future = pool.submit(client.complete, messages)
                in_flight[future] = (call, key)
                future.add_done_callback(finished.put)
            if not in_flight:
                break
            try:
                future = finished.get(timeout=FLUSH_SECONDS)
            except queue.Empty:
                future = None
            collected = future is not None
            while future is not None:
                call, key = in_flight.pop(future)
                self._collect(call, key, future)
                try:
                    future = finished.get_nowait()
                except queue.Empty:
                    future = None
            if collected and not exhausted:
                self.writer.flush()  # written before the next call is sent (see above)
            else:
                self.writer.maybe_flush()

    def _collect(self, call: Call, key: str, future) -> None:
        try:
            completion = future.result()
        except CallFailed as exc:
            failed = parsing.Outcome(valid=False)
            singles = call.calls() if isinstance(call, CompiledCall) else [call]
            for n, single in enumerate(singles):
                self.writer.add(self.judgment(single, failed, error=str(exc)), calls=(exc.attempts and 1) if n == 0 else 0,
                                retries=max(0, exc.attempts - 1) if n == 0 else 0)
            return
        cost = self.backend.cost(judge=self.judge, tokens_in=completion.tokens_in, tokens_out=completion.tokens_out)
        self.writer.add_cache(key=key, model=self.judge.model, text=completion.text, tokens_in=completion.tokens_in,
                              tokens_out=completion.tokens_out)
        self.add_answer(call, completion.text, calls=1, retries=completion.attempts - 1, tokens_in=completion.tokens_in,
                        tokens_out=completion.tokens_out, latency_ms=completion.latency_ms, cost_usd=cost)


def judge_run_execute(*, run: JudgeRun, handoff: str = "", sleep: Callable[[float], None] = time.sleep,
                      on_flush: Callable | None = None) -> RunSummary:
    """Execute (or resume) ``run`` in this process and return its summary. ``handoff``: the token
    the sweeper handed the run over with (``grading.judges.sweep``).

    ``sleep`` (backoff waits) and ``on_flush`` (called after every batch write) are for tests.
    """
    token = lease_token()
    if not lease_claim(run=run, token=token, handoff=handoff):
        if lease_held(run=run):  # another execution works on it: this copy must not
            raise RunHeld(f"run {run.pk} is being executed elsewhere")
        run.refresh_from_db()
        return run_summary(run=run, seconds=0.0)  # stopped, finished or failed meanwhile: nothing to do
    run.refresh_from_db()
    if run.started_at is None:
        JudgeRun.objects.filter(pk=run.pk).update(started_at=timezone.now())
    judge = run.judge
    started = time.perf_counter()
    try:
        lease_update(run=run, token=token, config=run_config(judge))
        backend = backend_for(judge)
        if backend.votes_over_members:
            raise ValueError(f"judge {judge.name!r} is a panel: it votes over its members' judgments and is not run")
        if not backend.executes_calls:  # stored judgments: nothing to call
            _replay(run)
            lease_update(run=run, token=token, status=JudgeRun.FINISHED, finished_at=timezone.now(), lease_owner="")
        else:
            settings = backend.settings_parse(judge.settings)
            is_compiled = backend.compiled(settings)
            total = plan.plan_count(project=judge.project, scope=run.scope, samples=judge.samples, compiled=is_compiled)
            _recount(run)
            # Failed calls are redone now; they are counted again if they fail again.
            lease_update(run=run, token=token, total_calls=total, failed_calls=0)
            pending = _pending(run, judge, compiled=is_compiled, reverse=settings.variant == "reversed")
            writer = _Writer(run, on_flush, token)
            backend.execute(context=_Execution(run, backend, settings, writer, sleep), calls=pending)
            writer.flush()
            _recount(run)
            run.refresh_from_db(fields=["done_calls", "failed_calls", "total_calls"])
            unfinished = run.done_calls + run.failed_calls < run.total_calls
            final = (JudgeRun.STOPPED if writer.stopping else
                     JudgeRun.PAUSED if writer.budget_held and unfinished else JudgeRun.FINISHED)
            note = (f"paused at its budget: ${writer.spent:.4f} spent of ${writer.budget:.4f}; raise the budget to resume"
                    if final == JudgeRun.PAUSED else "")
            lease_update(run=run, token=token, status=final, lease_owner="", error=note,
                         finished_at=timezone.now() if final == JudgeRun.FINISHED else None)
    except LeaseLost as exc:  # taken over after this worker went silent too long: the other one finishes it
        logger.warning("%s; this execution stops", exc)
    except Exception as exc:
        JudgeRun.objects.filter(pk=run.pk, lease_owner=token).update(
            status=JudgeRun.FAILED, error=f"{exc.__class__.__name__}: {exc}"[:2000], lease_owner="")
        raise
    finally:
        elapsed = time.perf_counter() - started
        JudgeRun.objects.filter(pk=run.pk).update(seconds=F("seconds") + elapsed)
    run.refresh_from_db()
    return run_summary(run=run, seconds=elapsed)


def _pending(run: JudgeRun, judge: Judge, *, compiled: bool = False, reverse: bool = False):
    """The calls of ``run`` not answered yet, a chunk of responses at a time (the plan and the
    answered keys of one chunk in memory, never the whole run's). In compiled mode a call is one
    trait's checklist, pending while any of its items is."""
    for items in plan.plan_items(project=judge.project, scope=run.scope, compiled=compiled):
        finished = set(Judgment.objects.filter(run=run, error="", response_id__in={i.response_pk for i in items})
                       .values_list("response_id", "criterion_id", "sample"))
        if compiled:
            yield from (c for c in compiled_calls(items=items, samples=judge.samples, reverse=reverse)
                        if any(key not in finished for key in c.keys))
            continue
        calls = plan.plan_calls(items=items, samples=judge.samples)
        if reverse:  # a reversed rubric: each response's criteria asked last to first (one chunk in memory)
            first, position = {}, {}
            for n, i in enumerate(items):
                first.setdefault(i.response_pk, n)
                position[(i.response_pk, i.criterion_pk)] = n
            calls = sorted(calls, key=lambda c: (first[c.item.response_pk],
                                                 -position[(c.item.response_pk, c.item.criterion_pk)], c.sample))
        for call in calls:
            if call.key not in finished:
                yield call


def _recount(run: JudgeRun) -> None:
    """Set the done / invalid / failed counters from the judgments themselves (exact)."""
    rows = Judgment.objects.filter(run=run)
    JudgeRun.objects.filter(pk=run.pk).update(
        done_calls=rows.filter(error="").count(), invalid_count=rows.filter(error="", valid=False).count(),
        failed_calls=rows.exclude(error="").count(),
    )


def _replay(run: JudgeRun) -> None:
    """Imported judgments are the replay judge's answers: the run only takes stock of them."""
    rows = Judgment.objects.filter(judge=run.judge)
    total = rows.count()
    JudgeRun.objects.filter(pk=run.pk).update(
        total_calls=total, done_calls=total, invalid_count=rows.filter(valid=False).count(),
        status=JudgeRun.FINISHED, finished_at=timezone.now(),
    )


def run_summary(*, run: JudgeRun, seconds: float) -> RunSummary:
    return RunSummary(
        run=run.pk, status=run.status, judgments=run.done_calls, invalid=run.invalid_count, failed=run.failed_calls,
        cache_hits=run.cache_hits, calls=run.calls_made, cost_usd=float(run.cost_usd), seconds=seconds,
    )
