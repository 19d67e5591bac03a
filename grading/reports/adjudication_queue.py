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

It is also a report (SPEC §5 ``adjudication_queue``): computed on each request (never cached: it
changes as items are settled) and read by adjudicators, not viewers.
"""
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from rest_framework import serializers

from annotation.models import Project
from annotation.vocabulary import UNRESOLVED
from grading import metrics

from ..models import Adjudication
from ..selectors import ITEM, fetch_frame
from ..sources import project_sources
from .agreement import aligned_decisions, binary_pairs
from .inputs import ReportInputs
from .registry import Flag, Params, Report, register

STATUSES = ("open", "done", "all")
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

    @property
    def open_criteria(self) -> list[int]:
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
    criteria: pd.DataFrame
    choices: dict  # the values each filter can take in this project

    @property
    def done_pct(self) -> float:
        return round(100.0 * self.counts["done"] / self.counts["total"], 1) if self.counts["total"] else 0.0


def _case_mf1(inputs: ReportInputs, cohorts) -> pd.Series:
    """Case-level MF1 per response between the first two cohorts (NaN where undefined)."""
    if len(cohorts) < 2:
        return pd.Series(dtype=float)
    merged, _, _ = aligned_decisions(inputs=inputs, a=cohorts[0], b=cohorts[1])
    pairs, _ = binary_pairs(merged, strategy=metrics.parse_strategy("zero"))
    if pairs.empty:
        return pd.Series(dtype=float)
    per = metrics.case_level_mf1(pairs, keys=("response_id",)).per_group
    return per.set_index("response_id")["mf1"]


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
                       inputs: ReportInputs | None = None) -> Queue:
    """The queue of ``project``; ``filters`` keys: model, difficulty, register, theme, specialty,
    tag (a criterion tag of a disputed criterion) and status (open — the default — done or all)."""
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
    responses, cases = inputs.responses, inputs.cases

    cohort_decisions = inputs.cohort_decisions
    settled = metrics.gold_decide(cohort_decisions, None, keys=ITEM)
    disputed = settled.loc[settled["provenance"] == UNRESOLVED, ITEM]
    adjudicated = fetch_frame(Adjudication.objects.filter(project=project).values_list(*ITEM), ITEM)
    adjudicated = adjudicated.merge(disputed, on=ITEM, how="inner")
    mf1 = _case_mf1(inputs, cohorts)

    by_response = disputed.groupby("response_id")["criterion_id"].apply(list).to_dict()
    done_by_response = adjudicated.groupby("response_id")["criterion_id"].apply(list).to_dict()
    low = mf1[mf1 < threshold].index
    candidates = sorted((set(by_response) | set(int(r) for r in low)) & set(responses.index))
    rows = responses.loc[candidates, ["external_id", "case_id", "model", "position"]]
    case_external = cases["case_external_id"].to_dict()
    mf1_by_response = mf1.to_dict()
    items = []
    for response_id, external_id, case_id, model, position in zip(
            candidates, rows["external_id"], rows["case_id"], rows["model"], rows["position"]):
        value = mf1_by_response.get(response_id, np.nan)
        items.append(QueueItem(
            response_id=int(response_id), external_id=str(external_id), case_id=int(case_id),
            case_external_id=str(case_external[case_id]), model=str(model), position=int(position),
            case_mf1=None if pd.isna(value) else float(value),
            disputed=sorted(int(c) for c in by_response.get(response_id, [])),
            adjudicated=sorted(int(c) for c in done_by_response.get(response_id, [])),
        ))
    items.sort(key=lambda i: (i.case_mf1 is None, i.case_mf1 if i.case_mf1 is not None else 0.0, i.position, i.response_id))
    tags = inputs.criteria["tags"]
    if set(filters) - {"status"}:
        case_rows = cases[["difficulty", "register", "task_themes", "specialties"]].to_dict("index")
        tag_lists = tags.to_dict() if "tag" in filters else {}
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
        "tag": sorted({t for values in tags for t in values}),
        "status": list(STATUSES),
    }
    return Queue(threshold=threshold, cohorts=[c.name for c in cohorts], items=items, counts=counts,
                 excluded_cases=inputs.n_excluded_cases, draft_labels=inputs.n_draft_labels, criteria=inputs.criteria,
                 choices=choices)


def queue_json(queue: Queue) -> dict:
    """The ``adjudication_queue`` command's result (SPEC §5): items in queue order with the
    criteria still waiting for an adjudicator."""
    criteria = queue.criteria["criterion_external_id"]
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


def adjudication_queue_compute(*, inputs, threshold=None, all=False, **filters) -> dict:
    return queue_json(adjudication_queue(project=inputs.project, threshold=threshold,
                                         filters={**filters, "status": "all" if all else "open"}))


ADJUDICATION_QUEUE = register(Report(
    key="adjudication_queue", title="Adjudication queue", help="The adjudication queue of a project, in order.",
    params=AdjudicationQueueParams, compute=adjudication_queue_compute,
    intervals=False, subset=False, counted=False, cached=False, action="adjudicate", cannot_assess="zero",
))
