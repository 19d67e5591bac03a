"""Reads for the judge pages: a project's judges and runs, and the side-by-side view of one
response (every cohort's and every judge's decision, explanation and evidence per criterion).

Judge decisions are aggregated over samples as SPEC §2 says (majority for binary, with an
invalid output counting as not met; mean value for ordinal; the modal option for nominal);
a panel votes over its members' aggregated decisions with ``grading.metrics.ensemble``.
"""
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from statistics import mean

import pandas as pd
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from annotation.models import Cohort, Criterion, Label, Response

from ..metrics.ensemble import ensemble_vote
from ..models import Judge, JudgeRun, Judgment
from .parsing import evidence_valid_quotes
from .settings import SettingsError, judge_settings_parse


def judges_for_project(*, project) -> list[Judge]:
    return list(Judge.objects.filter(project=project).select_related("prompt_template").order_by("name"))


def runs_for_project(*, project, limit: int = 20) -> list[JudgeRun]:
    return list(
        JudgeRun.objects.filter(judge__project=project).select_related("judge").order_by("-created_at", "-pk")[:limit]
    )


def run_get_for_researcher(*, project, run_id: int, user) -> JudgeRun:
    if not user.is_staff:
        raise PermissionDenied
    return get_object_or_404(JudgeRun.objects.select_related("judge"), pk=run_id, judge__project=project)


def response_get_for_researcher(*, response_id: int, user) -> Response:
    """The response, for researchers (staff) only: the side-by-side page shows every source."""
    if not (user.is_authenticated and user.is_staff):
        raise PermissionDenied
    return get_object_or_404(Response.objects.select_related("project", "case"), pk=response_id)


@dataclass
class Cell:
    """One source's decision on one criterion."""

    decision: str = ""  # what to show: met / not met / an option / a mean value / unresolved
    tone: str = ""  # met | not_met | other, for colouring
    detail: str = ""  # e.g. "3 of 5 samples", "2 invalid"
    notes: list[str] = field(default_factory=list)  # explanations / rationales
    evidence: list[tuple[str, bool]] = field(default_factory=list)  # (quote, found verbatim in the response)
    capped: bool = False
    invalid: int = 0


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

    def rows(self):
        for criterion in self.criteria:
            yield criterion, [self.cells.get((criterion.pk, col.key), Cell()) for col in self.columns]


def _criteria_for(response: Response) -> list[Criterion]:
    own = list(Criterion.objects.filter(case_id=response.case_id).order_by("position"))
    return own or list(Criterion.objects.filter(project_id=response.project_id, case__isnull=True).order_by("position"))


def _show(verdict, option, value) -> tuple[str, str]:
    if option is not None:
        return option, "other"
    if verdict is not None:
        return verdict.replace("_", " "), verdict
    if value is not None:
        return f"{value:g}", "other"
    return "unresolved", "other"


def _cohort_cells(response: Response, criteria: dict[int, Criterion], cells: dict) -> list[Column]:
    columns = [Column(f"cohort:{c.name}", c.name, "cohort") for c in Cohort.objects.filter(project_id=response.project_id)]
    rows = defaultdict(list)
    for c_pk, cohort, role, verdict, option, value, rationale, evidence in Label.objects.filter(response=response).values_list(
        "criterion_id", "cohort__name", "role", "verdict", "option_label", "value", "rationale", "evidence"
    ):
        rows[(c_pk, cohort)].append((role, (verdict, option, value), rationale, evidence))
    for (c_pk, cohort), labels in rows.items():
        checked = [d for role, d, _, _ in labels if role == "checker"]
        counts = Counter(checked or [d for _, d, _, _ in labels]).most_common()
        tie = len(counts) > 1 and counts[0][1] == counts[1][1]
        shown, tone = ("unresolved (tie)", "other") if tie else _show(*counts[0][0])
        cell = Cell(decision=shown, tone=tone, detail=f"{len(labels)} label{'s' if len(labels) != 1 else ''}")
        for _, _, rationale, evidence in labels:
            if rationale:
                cell.notes.append(rationale)
            cell.evidence += [(q, bool(evidence_valid_quotes(quotes=[q], response_text=response.text))) for q in evidence or []]
        cells[(c_pk, f"cohort:{cohort}")] = cell
    return columns


def _aggregate(criterion: Criterion, rows: list) -> tuple[str | None, Cell]:
    """(vote key, cell) of one judge on one criterion over its samples."""
    n = len(rows)
    invalid = sum(1 for r in rows if not r["valid"])
    cell = Cell(invalid=invalid, capped=any(r["evidence_capped"] for r in rows))
    for r in rows:
        if r["explanation"] and r["explanation"] not in cell.notes:
            cell.notes.append(r["explanation"])
        for q in r["evidence"] or []:
            pair = (q, bool(evidence_valid_quotes(quotes=[q], response_text=r["text"])))
            if pair not in cell.evidence:
                cell.evidence.append(pair)
    if criterion.kind == "binary":
        votes = Counter((r["verdict"] if r["valid"] and r["verdict"] else "not_met") for r in rows)
        (top, count), *rest = votes.most_common()
        key = None if rest and rest[0][1] == count else top
        cell.decision, cell.tone = (key.replace("_", " "), key) if key else ("unresolved (tie)", "other")
        cell.detail = f"{count} of {n} samples" if n > 1 else ""
        key = f"v:{key}" if key else None
    elif criterion.kind == "ordinal":
        values = [r["value"] for r in rows if r["valid"] and r["value"] is not None]
        if values:
            avg = mean(values)
            cell.decision, cell.tone = (f"{avg:g}" if n > 1 else (rows[0]["option_label"] or f"{avg:g}")), "other"
            cell.detail = f"mean of {len(values)} samples" if n > 1 else ""
            key = f"x:{round(avg, 6)!r}"
        else:
            cell.decision, cell.tone, key = "invalid", "not_met", None
    else:
        options = Counter(r["option_label"] for r in rows if r["valid"] and r["option_label"])
        if options:
            top, count = options.most_common(1)[0]
            cell.decision, cell.tone, key = top, "other", f"o:{top}"
            cell.detail = f"{count} of {n} samples" if n > 1 else ""
        else:
            cell.decision, cell.tone, key = "invalid", "not_met", None
    if invalid:
        cell.detail = (cell.detail + "; " if cell.detail else "") + f"{invalid} invalid"
    return key, cell


def _panel_cells(panel: Judge, criteria: list[Criterion], votes: dict[tuple[int, str], str | None], cells: dict) -> str:
    try:
        s = judge_settings_parse(panel.settings)
    except SettingsError as exc:
        return f"misconfigured: {exc}"
    rows = [(c.pk, m, votes[(c.pk, m)]) for c in criteria for m in s.members if votes.get((c.pk, m)) is not None]
    if not rows:
        return f"{s.vote} vote of {', '.join(s.members)}"
    result = ensemble_vote(
        pd.DataFrame(rows, columns=["item", "voter", "vote"]), rule=s.vote, weights=s.weights or None,
        positive="v:met", negative="v:not_met",
    )
    for c_pk, decision in result.decisions.items():
        kind, _, rest = decision.partition(":") if isinstance(decision, str) else ("", "", "")
        shown = {"v": rest.replace("_", " "), "o": rest, "x": rest}.get(kind, "unresolved")
        voters = sum(1 for c, _, _ in rows if c == c_pk)
        cells[(c_pk, f"judge:{panel.name}")] = Cell(
            decision=shown, tone=rest if kind == "v" else "other", detail=f"{s.vote} of {voters} judge{'s' if voters != 1 else ''}",
        )
    return f"{s.vote} vote of {', '.join(s.members)}"


def side_by_side(*, response: Response) -> SideBySide:
    """Every source's decision on every criterion of ``response``, in a handful of queries."""
    criteria = _criteria_for(response)
    by_pk = {c.pk: c for c in criteria}
    cells: dict[tuple[int, str], Cell] = {}
    columns = _cohort_cells(response, by_pk, cells)
    judges = judges_for_project(project=response.project)
    judgments = defaultdict(list)
    for row in Judgment.objects.filter(response=response).values(
        "judge_id", "criterion_id", "verdict", "option_label", "value", "valid", "evidence_capped", "explanation", "evidence"
    ):
        row["text"] = response.text
        judgments[(row["judge_id"], row["criterion_id"])].append(row)
    votes: dict[tuple[int, str], str | None] = {}
    for judge in judges:
        if judge.backend == Judge.PANEL:
            continue
        kind = "baseline" if judge.backend == Judge.BASELINE else "judge"
        subtitle = {"baseline": "offline baseline (lexical)", "judge": f"{judge.model or judge.backend} · {judge.condition}"}[kind]
        if judge.backend == Judge.REPLAY:
            subtitle = f"imported · {judge.model or 'unknown model'} · {judge.condition}"
        columns.append(Column(f"judge:{judge.name}", judge.name, kind, subtitle))
        for criterion in criteria:
            rows = judgments.get((judge.pk, criterion.pk))
            if rows:
                votes[(criterion.pk, judge.name)], cells[(criterion.pk, f"judge:{judge.name}")] = _aggregate(criterion, rows)
    for panel in (j for j in judges if j.backend == Judge.PANEL):
        subtitle = _panel_cells(panel, criteria, votes, cells)
        columns.append(Column(f"judge:{panel.name}", panel.name, "panel", subtitle))
    return SideBySide(response=response, criteria=criteria, columns=columns, cells=cells)
