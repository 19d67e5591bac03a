"""Reads for the judge pages: a project's judges and runs, and the side-by-side view of one
response (every cohort's and every judge's decision, explanation and evidence per criterion).

The side-by-side decisions come from ``grading.selectors.source_decisions`` restricted to the
one response, so the page decides exactly as the reports, the export and the API do.
"""
import json
from dataclasses import dataclass, field
from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone

from annotation.access import project_check
from annotation.models import Criterion, Label, Response
from annotation.selectors import criteria_for_response, labels_final
from annotation.vocabulary import MET, NOT_MET, UNRESOLVED

from ..models import Judge, JudgeRun, Judgment
from ..sources import project_sources
from .backends import backend_for, backend_names
from .lease import LEASE_SECONDS
from .parsing import evidence_valid_quotes


def judges_for_project(*, project) -> list[Judge]:
    return list(Judge.objects.filter(project=project).select_related("prompt_template").order_by("name"))


@dataclass(frozen=True)
class JudgeListing:
    """A judge as the judge lists show it: its backend's badge and summary line, and whether the
    judges page edits it."""

    judge: Judge
    badge: object
    summary: str
    editable: bool


def judge_listing(judge: Judge) -> JudgeListing:
    backend = backend_for(judge)
    return JudgeListing(judge=judge, badge=backend.badge(judge), summary=backend.summary(judge), editable=backend.page_form)


RECENT_RUNS = 20  # what the project page's judge section shows; the runs page lists them all, a page at a time


def runs_of_project(*, project):
    """Every run of the project's judges, newest first, with its judge (one query per page of them)."""
    return JudgeRun.objects.filter(judge__project=project).select_related("judge").order_by("-created_at", "-pk")


def runs_for_project(*, project, limit: int | None = None) -> list[JudgeRun]:
    """The project's most recent runs (``RECENT_RUNS`` unless ``limit`` says otherwise)."""
    return list(runs_of_project(project=project)[:RECENT_RUNS if limit is None else limit])


def runs_mark(runs) -> None:
    """Mark each run as the run tables show it: stale, resumable, and its judge's badge."""
    for run in runs:
        run.stale = judge_run_stale(run=run)
        run.resumable = judge_run_resumable(run=run)
        run.judge_badge = backend_for(run.judge).badge(run.judge)


STALE_SECONDS = LEASE_SECONDS  # runners renew their lease at least every 10 s while they work


def judge_run_stale(*, run: JudgeRun, now=None) -> bool:
    """A running run whose worker has not been heard of for a lease: it died, and the sweeper
    hands it to another worker at its next sweep (``grading.judges.sweep``); a researcher may
    resume it meanwhile (without beat running, only that resumes it)."""
    if run.status not in (JudgeRun.RUNNING, JudgeRun.STOPPING):
        return False
    last = run.heartbeat_at or run.started_at or run.created_at
    return ((now or timezone.now()) - last).total_seconds() > STALE_SECONDS


def judge_run_resumable(*, run: JudgeRun) -> bool:
    return (
        run.status in (JudgeRun.STOPPED, JudgeRun.FAILED, JudgeRun.PAUSED)
        or (run.status == JudgeRun.FINISHED and run.failed_calls > 0)
        or judge_run_stale(run=run)
    )


def judge_section_data(*, project) -> dict:
    """What the judge section of the project page shows: judges, recent runs (each marked
    stale / resumable), how many runs there are in all (the runs page lists the older ones) and
    whether any run is still active (the table then polls)."""
    runs = runs_for_project(project=project)
    runs_mark(runs)
    active = (JudgeRun.QUEUED, JudgeRun.RUNNING, JudgeRun.STOPPING)
    return {
        "project": project,
        "judges": [judge_listing(j) for j in judges_for_project(project=project)],
        "runs": runs,
        "runs_total": runs_of_project(project=project).count(),
        "runs_active": any(r.status in active for r in runs),
    }


def run_get_for_manager(*, project, run_id: int, user) -> JudgeRun:
    """A run of the project's judges, for its managers (404 / 403 otherwise)."""
    project_check(project=project, user=user, action="manage")
    return get_object_or_404(JudgeRun.objects.select_related("judge"), pk=run_id, judge__project=project)


def judge_get_for_manager(*, project, judge_id: int, user) -> Judge:
    """A judge of the project that its managers may edit on the judges page (404 / 403 otherwise):
    one whose backend the judge form configures (panels have their own form; imported judges are data)."""
    project_check(project=project, user=user, action="manage")
    return get_object_or_404(Judge, pk=judge_id, project=project, backend__in=backend_names(page_form=True))


def run_figures(*, run: JudgeRun, now=None) -> dict:
    """What the run page shows beside the run's own counters: its duration (start to finish, or
    to now while it runs; none for a run that ended without finishing), the invalid rate, calls
    made per second of execution, the configuration as rows, and whether it is stale."""
    running = run.status in (JudgeRun.RUNNING, JudgeRun.STOPPING)
    end = run.finished_at or ((now or timezone.now()) if running else None)
    duration = (end - run.started_at).total_seconds() if run.started_at and end else None
    answered = run.done_calls + run.failed_calls
    config = dict(run.config or {})
    template = config.pop("template", None)
    settings = config.pop("settings", None) or {}
    return {
        "duration_seconds": duration,
        "invalid_rate": run.invalid_count / run.done_calls if run.done_calls else None,
        "calls_per_second": run.calls_made / run.seconds if run.seconds else None,
        "answered": answered,
        "template": template,
        "config_rows": sorted(config.items()),
        "settings_json": json.dumps(settings, indent=2, sort_keys=True) if settings else "",
        "stale": judge_run_stale(run=run, now=now),
    }


def response_get_for_inspection(*, response_id: int, user) -> Response:
    """The response, for the adjudicators and managers of its project: the side-by-side page
    shows every source. 404 for anybody without a role in that project, 403 for a viewer."""
    response = Response.objects.select_related("project", "case").filter(pk=response_id).first()
    if response is None:
        raise Http404("No such response")
    project_check(project=response.project, user=user, action="inspect")
    return response


@dataclass
class Cell:
    """One source's decision on one criterion."""

    decision: str = ""  # what to show: met / not met / an option / a mean value / unresolved
    tone: str = ""  # met | not_met | other, for colouring
    detail: str = ""  # e.g. "3 samples; 1 invalid"
    decision_fields: dict = field(default_factory=dict)  # the decision in bundle form (for tests and tools)
    unresolved: bool = False
    notes: list[str] = field(default_factory=list)  # explanations / rationales
    evidence: list[tuple[str, bool]] = field(default_factory=list)  # (quote, found verbatim in the response)
    capped: bool = False
    invalid: int = 0

    @property
    def decision_json(self) -> str:
        """The decision in bundle form as JSON (``data-decision`` on the page)."""
        return json.dumps(self.decision_fields, sort_keys=True) if self.decision_fields else ""


@dataclass
class Column:
    key: str
    title: str
    kind: str  # cohort | judge | baseline | panel
    subtitle: str = ""


@dataclass
class SideBySide:
    response: Response
    criteria: list[Criterion]
    columns: list[Column]
    cells: dict[tuple[int, str], Cell]  # (criterion pk, column key) -> cell
    cohort_decisions: Any = None  # the response's ``cohort_frames``, for a caller that needs them too

    def rows(self):
        """(criterion, [(column, cell), ...]) per criterion, a blank cell where a source has no decision."""
        for criterion in self.criteria:
            yield criterion, [(col, self.cells.get((criterion.pk, col.key), Cell())) for col in self.columns]


def _cell(decision, *, unit: str, votes: list[tuple] | None = None, ordinal: bool = False) -> Cell:
    """The cell of one source's decision: its text and tone, and what was behind it. ``votes``
    are the raw (verdict, option, value) votes behind the decision, to say how many agree."""
    tone = decision.verdict if decision.verdict in (MET, NOT_MET) and decision.option is None else "other"
    if decision.unresolved:
        text = f"{UNRESOLVED} (tie)"
    elif not decision.decided and decision.invalid:
        text, tone = "invalid", NOT_MET
    else:
        text = decision.text()
    cell = Cell(decision=text, tone=tone, decision_fields=decision.fields(), invalid=decision.invalid,
                unresolved=decision.unresolved)
    details, plural = [], f"{unit}s"
    if decision.n == 0 and decision.invalid:
        details.append("no output")
    elif decision.n > 1 and ordinal and decision.value is not None and decision.option is None:
        details.append(f"mean of {sum(1 for v in votes or [] if v[2] is not None)} {plural}")
    elif decision.n > 1 and votes is not None and decision.decided:
        agree = sum(1 for v in votes if v == (decision.verdict, decision.option, decision.value))
        details.append(f"{agree} of {decision.n} {plural}")
    elif decision.n > 1:
        details.append(f"{decision.n} {plural}")
    if decision.invalid and decision.n:
        details.append(f"{decision.invalid} invalid")
    cell.detail = "; ".join(details)
    return cell


def _votes(frame, *, source: str) -> dict:
    """Raw votes per source (the value of column ``source``: a cohort's pk, a judge's name) and
    criterion, from label rows or judge outputs: {source: {criterion pk: [(verdict, option, value),
    ...]}}, None for none."""
    from ..metrics.decisions import SourceDecision  # lazy: pandas and the decision rules load with the page, not at start-up

    out: dict = {}
    if frame.empty:
        return out
    columns = (frame[c].tolist() for c in (source, "criterion_id", "verdict", "option", "value"))
    for key, c_pk, verdict, option, value in zip(*columns):
        vote = SourceDecision.from_row({"verdict": verdict, "option": option, "value": value})
        out.setdefault(key, {}).setdefault(int(c_pk), []).append((vote.verdict, vote.option, vote.value))
    return out


def _by_source(decided: dict) -> dict:
    """{(source, response, criterion): decision} as {source: {(response, criterion): decision}}."""
    out: dict = {}
    for (key, response_id, criterion_id), decision in decided.items():
        out.setdefault(key, {})[(response_id, criterion_id)] = decision
    return out


def side_by_side(*, response: Response, cohort_decisions=None, cohort_notes: bool = True) -> SideBySide:
    """Every source's decision on every criterion of ``response`` — computed by the same decision
    rules as every report, restricted to this one response — with the rationales, explanations and
    evidence behind them. A fixed number of queries whatever the number of cohorts and judges.
    ``cohort_decisions``: the response's ``cohort_frames`` when the caller has them already;
    ``cohort_notes=False``: the cohort cells without the labels' rationales and quotes, for a
    caller that shows each rater's own (the adjudication page)."""
    # lazy: the frames need pandas, loaded by the page that shows them, not by every web process
    from ..metrics.decisions import cohort_votes, judge_outputs

    # lazy: pandas and the decision rules load with the page, not at start-up
    from ..selectors import (
        cohort_frames,
        criterion_frame,
        decisions_by_criterion,
        judges_frame,
        judgment_rows,
        label_rows,
        panel_members,
        response_frame,
    )

    project = response.project
    criteria = criteria_for_response(response=response)
    responses = response_frame(project=project, response_ids=[response.pk])
    frame = criterion_frame(project=project, rubric_version_ids={c.rubric_version_id for c in criteria})
    only = [response.pk]
    cells: dict[tuple[int, str], Cell] = {}
    columns = []
    labels = label_rows(project=project, response_ids=only)
    if cohort_decisions is None:
        cohort_decisions = cohort_frames(project=project, response_ids=only, rows=labels)
    # Each frame is split by source in one pass, not filtered once per cohort or judge.
    by_cohort = _by_source(decisions_by_criterion(cohort_decisions, source="cohort"))
    # Per cohort and criterion: its checker's label where it has one.
    cohort_votes_of = _votes(cohort_votes(labels, keys=["cohort", "criterion_id"]), source="cohort")
    for source in project_sources(project=project)["cohorts"]:
        columns.append(Column(source.spec, source.name, "cohort"))
        _fill(cells, source.spec, by_cohort.get(source.name, {}), response, criteria,
              unit="label", votes=cohort_votes_of.get(source.obj.pk, {}))
    if cohort_notes:
        _cohort_notes(response, cells)
    judges = judges_for_project(project=project)
    known = {j.name: j for j in judges}
    usable = []
    kinds = {j.name: backend_for(j) for j in judges}
    for judge in sorted(judges, key=lambda j: kinds[j.name].votes_over_members):
        backend = kinds[judge.name]
        columns.append(Column(f"judge:{judge.name}", judge.name, backend.column_kind, backend.subtitle(judge)))
        if backend.votes_over_members:
            try:
                panel_members(judge=judge, known=known)
            except (ValueError, LookupError) as exc:  # a misconfigured panel: say so in its column
                columns[-1].subtitle = f"misconfigured: {exc}"
                continue
        usable.append(judge)
    # One read of every plain judge's outputs (panel members included) serves the decisions and the votes.
    rows = judgment_rows(judges=[j for j in judges if not kinds[j.name].votes_over_members], criteria=frame,
                         response_ids=only)
    decided = judges_frame(judges=usable, responses=responses, criteria=frame, response_ids=only, known=known, outputs=rows)
    judge_votes = _votes(judge_outputs(rows), source="judge")
    by_judge = _by_source(decisions_by_criterion(decided, source="judge"))
    for judge in usable:
        panel = kinds[judge.name].votes_over_members
        votes = {} if panel else judge_votes.get(judge.name, {})
        _fill(cells, f"judge:{judge.name}", by_judge.get(judge.name, {}), response,
              criteria, unit="judge" if panel else "sample", votes=votes)
    _judge_notes(response, judges, cells)
    return SideBySide(response=response, criteria=criteria, columns=columns, cells=cells,
                      cohort_decisions=cohort_decisions)


def _fill(cells: dict, key: str, decided: dict, response: Response, criteria: list[Criterion], *, unit: str,
          votes: dict) -> None:
    for criterion in criteria:
        decision = decided.get((response.pk, criterion.pk))
        if decision is not None:
            cells[(criterion.pk, key)] = _cell(decision, unit=unit, votes=votes.get(criterion.pk),
                                               ordinal=criterion.kind == "ordinal")


def _quotes(quotes, text: str) -> list[tuple[str, bool]]:
    return [(q, bool(evidence_valid_quotes(quotes=[q], response_text=text))) for q in quotes or []]


def _cohort_notes(response: Response, cells: dict) -> None:
    """Rationales and quotes of the labels behind each cohort's decision."""
    for c_pk, cohort, rationale, evidence in labels_final(Label.objects.filter(response=response)) \
            .order_by("role", "annotator__username") \
            .values_list("criterion_id", "cohort__name", "rationale", "evidence"):
        cell = cells.get((c_pk, f"cohort:{cohort}"))
        if cell is None:
            continue
        if rationale and rationale not in cell.notes:
            cell.notes.append(rationale)
        cell.evidence += [pair for pair in _quotes(evidence, response.text) if pair not in cell.evidence]


def _judge_notes(response: Response, judges: list[Judge], cells: dict) -> None:
    """Explanations, quotes and evidence caps of the judgments behind each judge's decision."""
    names = {j.pk: j.name for j in judges}
    for judge_id, c_pk, explanation, evidence, capped in Judgment.objects.filter(response=response).order_by("sample") \
            .values_list("judge_id", "criterion_id", "explanation", "evidence", "evidence_capped"):
        cell = cells.get((c_pk, f"judge:{names.get(judge_id)}"))
        if cell is None:
            continue
        cell.capped = cell.capped or capped
        if explanation and explanation not in cell.notes:
            cell.notes.append(explanation)
        cell.evidence += [pair for pair in _quotes(evidence, response.text) if pair not in cell.evidence]
