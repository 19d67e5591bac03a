"""The adjudication queue of a project (issue 10, point 2): which responses an adjudicator
should look at, in which order.

A (response, criterion) is *disputed* when the cohorts' decisions do not settle it: two cohorts
decided it differently, or a cohort's decision is a tie (the gold rule would call it
``unresolved``). The queue holds every response with a disputed criterion, and every response
whose case-level MF1 between the project's first two cohorts is below the low-agreement
threshold; it is ordered by that MF1, lowest first (so the low-agreement tail comes first),
responses with an undefined MF1 after those with one. A response is *done* when every disputed
criterion has an adjudication, *open* otherwise. Cases excluded by quality control are left out.

MF1 here is the agreement report's (SPEC §3): cohort B against reference A over binary
criteria, cannot-assess as not met (the agreement default), a tie as a disagreement.

It is also a report (SPEC §5 ``adjudication_queue``): computed on each request (not a cached report:
it changes as items are settled) and read by adjudicators, not viewers. What the cohorts decided,
counted from every final label of the project, is kept in the cache and brought up to date for the
responses whose labels or assignment statuses changed since (``_counted_disputes``); which items are
settled is read on each request. When nothing kept can be brought up to date (a new project, after an
import or a changed rubric), counting the whole project takes seconds to tens of seconds at full
scale: an import makes that count as it ends (``grading.formats.registry.format_import``), so the queue
is ready when the import is; otherwise the pages have it made by a worker (``queue_count_start``) and say
so until it is there, instead of holding the request.
"""
import json
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property

import numpy as np
import pandas as pd
from django.core.cache import cache
from django.utils import timezone
from rest_framework import serializers

from annotation.models import Criterion, Project
from annotation.vocabulary import UNRESOLVED
from grading import metrics

from .. import selectors
from ..models import Adjudication
from ..queueing import task_send
from ..selectors import ITEM, fetch_frame
from ..sources import project_sources
from .agreement import binary_pairs
from .inputs import ReportInputs
from .registry import Flag, Params, Report, ReportPreparing, register

logger = logging.getLogger(__name__)

STATUSES = ("open", "done", "all")
# How long kept counts last after they were counted or brought up to date: a study opened again weeks
# later is brought up to date response by response, not counted whole (replaced counts expire sooner, ``_keep``).
CACHE_SECONDS = 30 * 24 * 3600
# A kept count is taken as it is once it was made this long after the newest change it saw (a label
# write commits a moment after its ids and times are taken); before that it is brought up to date.
SETTLED = timedelta(seconds=30)
# Beyond this many changed responses, counting the whole project again is about as quick.
REFRESH_MAX = 2_000
# How long counts replaced by newer ones stay readable (by a request that read the pointer to them just before).
SUPERSEDED_SECONDS = 60
# Part of the kept counts' cache key: a change of what is kept there makes a new key, so an entry of
# an earlier shape is never read.
KEPT_VERSION = 3
# A background count queued this long ago is taken as lost (its worker gone); the next look queues it again.
COUNTING_SECONDS = 600
# How long a failed background count is shown before the next look tries again.
COUNT_FAILED_SECONDS = 60
COUNT_TASK = "grading.adjudication_queue_count"  # grading.reports.tasks.queue_count_task
FALLBACK_QUERIES = 3  # deciding the responses counts cannot: labels, cohort names, criterion kinds
FILTERS = ("model", "difficulty", "register", "theme", "specialty", "tag", "status")


@dataclass
class QueueItem:
    response_id: int
    external_id: str
    case_id: int
    case_external_id: str
    model: str
    position: int
    case_mf1: float | None
    disputed: list[int]  # criterion ids whose cohort decisions do not settle them
    adjudicated: list[int] = field(default_factory=list)  # those of them already decided by an adjudicator

    @cached_property  # asked for several times per item; an item does not change once made
    def open_criteria(self) -> list[int]:
        if not self.adjudicated:
            return self.disputed
        done = set(self.adjudicated)
        return [c for c in self.disputed if c not in done]

    @property
    def status(self) -> str:
        return "open" if self.open_criteria else "done"


@dataclass
class Queue:
    threshold: float
    cohorts: list[str]
    items: list[QueueItem]  # after the filters, in queue order
    counts: dict  # open / done / total over the filtered items (before the status filter)
    excluded_cases: int
    draft_labels: int
    project: Project
    choices: dict  # the values each filter can take in this project

    @property
    def done_pct(self) -> float:
        return round(100.0 * self.counts["done"] / self.counts["total"], 1) if self.counts["total"] else 0.0


def _frame_pairs(cohorts: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Cohort A's and B's decisions (``cohort_frames`` rows, by cohort name) paired by item, as
    ``agreement``'s aligned pairs, one per item (``n`` = 1)."""
    if len(names) < 2 or cohorts.empty:
        return pd.DataFrame(columns=["response_id", "verdict_a", "unresolved_a", "verdict_b", "unresolved_b", "n"])
    fa, fb = (cohorts[cohorts["cohort"] == name] for name in names)
    merged = fa[[*ITEM, "verdict", "unresolved"]].merge(fb[[*ITEM, "verdict", "unresolved"]], on=ITEM, suffixes=("_a", "_b"))
    binary = set(Criterion.objects.filter(pk__in=merged["criterion_id"].unique().tolist(), kind="binary")
                 .values_list("pk", flat=True))
    merged = merged[merged["criterion_id"].isin(binary).to_numpy()]
    return merged.drop(columns="criterion_id").assign(n=1)


def _case_mf1(pairs: pd.DataFrame) -> pd.Series:
    """Case-level MF1 per response between the first two cohorts (NaN where undefined), from the
    paired binary decisions tallied per response (``pairs``: response_id, verdict_a, unresolved_a,
    verdict_b, unresolved_b, n): each tally goes through ``agreement``'s pairing (cannot assess as
    not met, a tie as a disagreement), then the counts through the MF1 definition."""
    if pairs.empty:
        return pd.Series(dtype=float)
    tallies = pairs.reset_index(drop=True)
    rows = tallies.assign(criterion_id=np.arange(len(tallies)), kind="binary", weight=1.0, model=None, case_id=None,
                          invalid_b=0)  # weight counts only under the FAIL strategy; the queue's is ZERO
    paired, _ = binary_pairs(rows, strategy=metrics.parse_strategy("zero"))
    n = tallies["n"].to_numpy(dtype=np.int64)[paired["criterion_id"].to_numpy()]
    a, b = paired["a"].to_numpy(dtype=np.int64), paired["b"].to_numpy(dtype=np.int64)
    counts = pd.DataFrame({"response_id": paired["response_id"].to_numpy(), "tp": n * (a & b), "fp": n * ((1 - a) & b),
                           "fn": n * (a & (1 - b)), "tn": n * ((1 - a) & (1 - b))}).groupby("response_id").sum()
    return pd.Series(metrics.mf1_from_counts(counts["tp"], counts["fp"], counts["fn"], counts["tn"]), index=counts.index)


@dataclass(frozen=True)
class _Kept:
    """Where the kept counts stand: counted on the project's decision inputs ``base``
    (``selectors.disputes_fingerprint``) as of ``mark``, read at ``at``; the counts themselves are
    under ``counts_key`` (apart, so that bringing the mark up to date rewrites only this)."""

    base: str
    mark: selectors.LabelMark
    at: datetime
    counts_key: str


def _kept_key(*, project: Project, cohorts) -> str:
    pair = [c.obj for c in cohorts[:2]]
    return f"evalsite:queue-disputes:{KEPT_VERSION}:{project.pk}:{'-'.join(str(c.pk) for c in pair if c)}"


def _counted_disputes(*, project: Project, cohorts, whole: bool = True) -> selectors.CohortDisputes | None:
    """``selectors.cohort_disputes`` of the first two cohorts, kept in the cache and brought up to
    date response by response: counting a full-scale project's labels takes many seconds, while
    the responses whose labels or assignments changed since the last count are a few, counted in
    milliseconds; an assignment made counts its response again. A change of what the counts rest on
    (``base``: a criterion, a response, a cohort, an import, an admin edit) or an assignment removed
    counts the whole project again; an adjudication changes nothing here. ``whole=False``: None instead of counting
    the whole project (the page then has it counted in the background, ``queue_count_start``)."""
    pair = [c.obj for c in cohorts[:2]] + [None, None]
    key = _kept_key(project=project, cohorts=cohorts)
    at = timezone.now()  # before the mark: a change made from now on is after it, or within its margins
    base = selectors.disputes_fingerprint(project=project)
    mark = selectors.label_mark(project=project)
    kept = cache.get(key)
    counted = cache.get(kept.counts_key) if kept is not None and kept.base == base else None
    if counted is not None:
        # Taken as it is only when made well after the newest change it saw, which was then committed.
        if kept.mark == mark and (mark.newest is None or kept.at - mark.newest >= SETTLED):
            return counted
        changed = selectors.responses_changed(project=project, since=kept.mark, at=kept.at)
        if changed is not None and len(changed) <= REFRESH_MAX:
            counts_key = kept.counts_key
            if changed:
                counted = counted.updated(
                    selectors.cohort_disputes(project=project, a=pair[0], b=pair[1], response_ids=changed), changed)
                counts_key = f"{key}:{at.timestamp()}"
                cache.set(counts_key, counted, CACHE_SECONDS)
            _keep(key, _Kept(base=base, mark=mark, at=at, counts_key=counts_key), kept)
            return counted
    if not whole:
        return None
    counted = selectors.cohort_disputes(project=project, a=pair[0], b=pair[1])
    counts_key = f"{key}:{at.timestamp()}"
    cache.set(counts_key, counted, CACHE_SECONDS)
    _keep(key, _Kept(base=base, mark=mark, at=at, counts_key=counts_key), kept)
    return counted


def _keep(key: str, new: _Kept, old: _Kept | None) -> None:
    """Point ``key`` at ``new`` (the pointer ``old`` was read before). Counts it replaced
    (megabytes at full scale, one entry per refresh) expire ``SUPERSEDED_SECONDS`` later instead of
    a day, still there for a request that read the old pointer a moment ago."""
    cache.set(key, new, CACHE_SECONDS)
    if old is not None and old.counts_key != new.counts_key:
        cache.touch(old.counts_key, SUPERSEDED_SECONDS)
    elif old is not None:
        # The same counts, for longer: a request that replaced them meanwhile (and shortened their
        # life) may have written its pointer before this one.
        cache.touch(new.counts_key, CACHE_SECONDS)


class QueueCounting(ReportPreparing):
    """The queue cannot be read yet: the cohorts' decisions are being counted in the background,
    queued at ``since`` (epoch seconds), or that count failed (``error``, its first line)."""


def _counting_marks(project: Project, cohorts) -> tuple[str, str]:
    key = _kept_key(project=project, cohorts=cohorts)
    return f"{key}:counting", f"{key}:failed"


def queue_count(*, project: Project) -> None:
    """Count the cohorts' decisions of ``project`` into the kept counts (``_counted_disputes``), as
    the queue page reads them: what an import runs as it ends, and the background task when the page
    found nothing kept. A failure is logged and remembered for ``COUNT_FAILED_SECONDS`` (the page
    says why instead of waiting); the next look after that queues a new count."""
    cohorts = project_sources(project=project)["cohorts"][:2]
    counting, failed = _counting_marks(project, cohorts)
    try:
        _counted_disputes(project=project, cohorts=cohorts)
    except Exception as exc:
        logger.exception("counting the adjudication queue of project %r failed", project.slug)
        cache.set(failed, _first_line(exc), COUNT_FAILED_SECONDS)
    finally:
        cache.delete(counting)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{exc.__class__.__name__}: {text[0]}" if text else exc.__class__.__name__


def queue_count_start(*, project: Project, cohorts=None) -> selectors.CohortDisputes | None:
    """Queue the background count of ``project``'s queue unless one is queued or under way (one
    count for any number of pages looking at once), or one ended since the caller looked: then its
    kept counts are returned and nothing is queued. A count whose worker is gone is taken as ended
    after ``COUNTING_SECONDS``; the next look queues it again. If it cannot be queued (the broker
    is down), that is logged and shown as the count's failure, not a page error."""
    cohorts = project_sources(project=project)["cohorts"][:2] if cohorts is None else cohorts
    counting, failed = _counting_marks(project, cohorts)
    if not cache.add(counting, time.time(), COUNTING_SECONDS):
        return None
    # A count ending between the caller's look and this mark kept its counts (or its failure) before
    # it lifted its own mark: look once more, so it is not followed by a second whole count.
    try:
        error = cache.get(failed)
        counted = None if error is not None else _counted_disputes(project=project, cohorts=cohorts, whole=False)
    except BaseException:
        cache.delete(counting)  # nothing queued: the pages must not wait for it
        raise
    if counted is not None or error is not None:
        cache.delete(counting)
        return counted
    try:
        task_send(COUNT_TASK, kwargs={"project_id": project.pk}, watch_after=None)  # by name: the task imports this module
    except Exception as exc:
        logger.exception("queuing the count of the adjudication queue of project %r failed", project.slug)
        cache.delete(counting)  # nothing is counting: the page must not wait for it
        cache.set(failed, f"it could not be queued ({_first_line(exc)})", COUNT_FAILED_SECONDS)
    return None


def _counted_or_counting(*, project: Project, cohorts) -> selectors.CohortDisputes:
    """The kept counts when they can be read or brought up to date in the request; otherwise the
    whole project is counted in the background (``queue_count_start``; under eager Celery it is
    counted when that returns) and QueueCounting says since when, or why that count failed."""
    counted = _counted_disputes(project=project, cohorts=cohorts, whole=False)
    if counted is not None:
        return counted
    counting, failed = _counting_marks(project, cohorts)
    error = cache.get(failed)
    since = None
    if error is None:
        counted = queue_count_start(project=project, cohorts=cohorts)
        if counted is not None:  # a count ended since the look above
            return counted
        since = cache.get(counting)
        if since is None:  # ended already (eager Celery counts as it queues): read what it kept, or why it failed
            counted = _counted_disputes(project=project, cohorts=cohorts, whole=False)
            if counted is not None:
                return counted
            error = cache.get(failed)
    raise QueueCounting(since=float(since) if isinstance(since, (int, float)) else None, error=error)


def queue_disputes(*, inputs: ReportInputs, cohorts, background: bool = False) -> tuple[pd.DataFrame, pd.Series, int]:
    """The disputed items (response_id, criterion_id; over every cohort, by the gold rule) and the
    case-level MF1 of each response between ``cohorts`` (the first two), of the responses reports
    count, and how many draft labels the project has (none of them counted). Counted in the
    database (``selectors.cohort_disputes``); the responses whose labels counts cannot decide
    (options, values, a third cohort) are decided through the decision frames. ``background``: a
    whole count is not made here but queued (QueueCounting, see ``_counted_or_counting``)."""
    counted = (_counted_or_counting if background else _counted_disputes)(project=inputs.project, cohorts=cohorts)
    disputed, pairs = counted.disputed, counted.pairs
    if counted.fallback:
        fallback = sorted(counted.fallback)
        disputed = disputed[~disputed["response_id"].isin(fallback)]
        pairs = pairs[~pairs["response_id"].isin(fallback)]
        frames = selectors.cohort_frames(project=inputs.project, response_ids=fallback)
        if len(frames):
            settled = metrics.gold_decide(frames, None, keys=ITEM, with_cohort_decisions=False)
            disputed = pd.concat([disputed, settled.loc[settled["provenance"] == UNRESOLVED, ITEM]], ignore_index=True)
            pairs = pd.concat([pairs, _frame_pairs(frames, [c.name for c in cohorts[:2]])], ignore_index=True)
    counted_responses = inputs.response_keys.index
    disputed = disputed[disputed["response_id"].isin(counted_responses)].astype("int64")
    pairs = pairs[pairs["response_id"].isin(counted_responses)]
    mf1 = _case_mf1(pairs) if len(cohorts) >= 2 else pd.Series(dtype=float)
    return disputed.reset_index(drop=True), mf1, counted.drafts


def _criteria_by_response(items: pd.DataFrame) -> dict[int, list[int]]:
    """{response_id: its criterion ids, ascending} of (response_id, criterion_id) rows."""
    if items.empty:
        return {}
    response, criterion = items["response_id"].to_numpy(), items["criterion_id"].to_numpy()
    order = np.lexsort((criterion, response))
    response = response[order]
    starts = np.flatnonzero(np.r_[True, response[1:] != response[:-1]])
    ends = np.r_[starts[1:], len(response)]
    criteria = criterion[order].tolist()  # one list, sliced: far faster than an array per response
    return {r: criteria[s:e] for r, s, e in zip(response[starts].tolist(), starts.tolist(), ends.tolist())}


def _tag_list(raw) -> list[str]:
    if isinstance(raw, str):
        raw = json.loads(raw)
    return [str(t) for t in raw or []]


def _distinct_tag_lists(project: Project) -> list[list[str]]:
    """The distinct tag lists of the project's criteria (a few, where criteria number thousands)."""
    return [_tag_list(raw) for raw in Criterion.objects.filter(project=project).order_by().values_list(
        "tags", flat=True).distinct()]


def _criterion_tags(project: Project) -> dict[int, list[str]]:
    """Each tagged criterion's tags, by criterion id (the tag filter)."""
    return {pk: tags for pk, raw in Criterion.objects.filter(project=project).order_by().values_list("pk", "tags")
            if (tags := _tag_list(raw))}


def _matches(item: QueueItem, filters: dict, cases: dict, tags: dict) -> bool:
    case = cases[item.case_id]
    if filters.get("model") and item.model != filters["model"]:
        return False
    if filters.get("difficulty") and case["difficulty"] != filters["difficulty"]:
        return False
    if filters.get("register") and case["register"] != filters["register"]:
        return False
    if filters.get("theme") and filters["theme"] not in case["task_themes"]:
        return False
    if filters.get("specialty") and filters["specialty"] not in case["specialties"]:
        return False
    if filters.get("tag") and not any(filters["tag"] in tags.get(c, []) for c in item.disputed):
        return False
    return True


def adjudication_queue(*, project: Project, threshold: float | None = None, filters: dict | None = None,
                       inputs: ReportInputs | None = None, background: bool = False) -> Queue:
    """The queue of ``project``; ``filters`` keys: model, difficulty, register, theme, specialty,
    tag (a criterion tag of a disputed criterion) and status (open — the default — done or all).
    ``background`` (the pages): when the cohorts' decisions would have to be counted over the whole
    project, that count is queued instead and QueueCounting raised (``queue_disputes``)."""
    filters = {k: v for k, v in (filters or {}).items() if v not in (None, "")}
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise ValueError(f"unknown queue filter {unknown[0]!r} (use {', '.join(FILTERS)})")
    status = filters.get("status", "open")
    if status not in STATUSES:
        raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
    threshold = float(project.low_agreement_threshold if threshold is None else threshold)
    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold {threshold} is not between 0 and 1")
    inputs = inputs or ReportInputs(project)
    cohorts = project_sources(project=project)["cohorts"][:2]
    disputed, mf1, drafts = queue_disputes(inputs=inputs, cohorts=cohorts, background=background)
    responses, cases = inputs.response_keys, inputs.cases
    adjudicated = fetch_frame(Adjudication.objects.filter(project=project).values_list(*ITEM), ITEM)
    adjudicated = adjudicated.merge(disputed, on=ITEM, how="inner")

    by_response = _criteria_by_response(disputed)
    done_by_response = _criteria_by_response(adjudicated)
    low = mf1[mf1 < threshold].index
    candidates = sorted((set(by_response) | set(int(r) for r in low)) & set(responses.index))
    rows = responses.loc[candidates, ["external_id", "case_id", "model", "position"]]
    case_external = cases["case_external_id"].to_dict()
    mf1_by_response = mf1.dropna().astype(float).to_dict()  # an undefined MF1 is no entry: None on the item
    items = []
    for response_id, external_id, case_id, model, position in zip(
            candidates, rows["external_id"], rows["case_id"], rows["model"], rows["position"]):
        value = mf1_by_response.get(response_id)
        items.append(QueueItem(
            response_id=int(response_id), external_id=str(external_id), case_id=int(case_id),
            case_external_id=str(case_external[case_id]), model=str(model), position=int(position),
            case_mf1=value,
            disputed=by_response.get(response_id, []), adjudicated=done_by_response.get(response_id, []),
        ))
    items.sort(key=lambda i: (i.case_mf1 is None, i.case_mf1 if i.case_mf1 is not None else 0.0, i.position, i.response_id))
    if set(filters) - {"status"}:
        case_rows = cases[["difficulty", "register", "task_themes", "specialties"]].to_dict("index")
        tag_lists = _criterion_tags(project) if "tag" in filters else {}
        items = [i for i in items if _matches(i, filters, case_rows, tag_lists)]
    counts = {"total": len(items), "open": sum(1 for i in items if i.status == "open")}
    counts["done"] = counts["total"] - counts["open"]
    if status != "all":
        items = [i for i in items if i.status == status]
    choices = {
        "model": sorted(responses["model"].astype(str).unique()),
        "difficulty": sorted(v for v in cases["difficulty"].dropna().unique() if v),
        "register": sorted(v for v in cases["register"].dropna().unique() if v),
        "theme": sorted({t for themes in cases["task_themes"] for t in themes}),
        "specialty": sorted({s for values in cases["specialties"] for s in values}),
        "tag": sorted({str(t) for values in _distinct_tag_lists(project) for t in values}),
        "status": list(STATUSES),
    }
    return Queue(threshold=threshold, cohorts=[c.name for c in cohorts], items=items, counts=counts,
                 excluded_cases=inputs.n_excluded_cases, draft_labels=drafts, project=project,
                 choices=choices)


def queue_json(queue: Queue) -> dict:
    """The ``adjudication_queue`` command's result (SPEC §5): items in queue order with the
    criteria still waiting for an adjudicator."""
    criteria = dict(Criterion.objects.filter(project=queue.project).order_by().values_list("pk", "external_id"))
    return {
        "threshold": queue.threshold,
        "n_items": len(queue.items),
        "n_disputed": sum(len(i.open_criteria) if i.status == "open" else len(i.disputed) for i in queue.items),
        "items": [
            {"response_id": i.external_id, "case_id": i.case_external_id, "model": i.model, "case_mf1": i.case_mf1,
             "disputed": [str(criteria[c]) for c in (i.open_criteria if i.status == "open" else i.disputed)]}
            for i in queue.items
        ],
        "excluded_cases": queue.excluded_cases,
        "draft_labels": queue.draft_labels,
        "counts": queue.counts,
    }



class AdjudicationQueueParams(Params):
    threshold = serializers.FloatField(required=False, allow_null=True, default=None, min_value=0, max_value=1,
                                       help_text="low-agreement threshold (default: the project's)")
    all = Flag(help_text="also the items whose disputes are all adjudicated")
    model = serializers.CharField(required=False, allow_null=True, default=None, help_text="only items of this model")
    difficulty = serializers.CharField(required=False, allow_null=True, default=None,
                                       help_text="only items of this difficulty")
    register = serializers.CharField(required=False, allow_null=True, default=None, help_text="only items of this register")
    theme = serializers.CharField(required=False, allow_null=True, default=None, help_text="only items of this theme")
    specialty = serializers.CharField(required=False, allow_null=True, default=None, help_text="only items of this specialty")
    tag = serializers.CharField(required=False, allow_null=True, default=None, help_text="only items of this tag")


def adjudication_queue_compute(*, inputs, threshold=None, all=False, background=False, **filters) -> dict:
    return queue_json(adjudication_queue(project=inputs.project, threshold=threshold, background=background,
                                         filters={**filters, "status": "all" if all else "open"}))


ADJUDICATION_QUEUE = register(Report(
    key="adjudication_queue", title="Adjudication queue", help="The adjudication queue of a project, in order.",
    params=AdjudicationQueueParams, compute=adjudication_queue_compute,
    intervals=False, subset=False, counted=False, cached=False, prepares=True, action="adjudicate", cannot_assess="zero",
))
