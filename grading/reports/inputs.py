"""The inputs one report computation reads, loaded once and shared: a project's
responses, cases and criteria frames and the decision frame of each source it asks for.

Cases excluded by quality control (``CaseQuality.excluded``: flagged by the screening or removed
by the audit) are left out here, once, so no report counts them; ``n_excluded_cases`` says how
many were left out. Draft labels never reach a decision (the selectors read final labels only);
``n_draft_labels`` says how many there are. Each cohort's labels are read and decided once, when
a report first asks for them, and serve every use: that cohort as a source, its experts' own
values, and gold (every cohort's decisions together).
"""
from functools import cached_property

import numpy as np
import pandas as pd
from django.db.models import Count

from annotation.models import Case, CaseQuality, Cohort, Criterion, Project
from annotation.selectors import labels_check_count, labels_draft_count
from grading import selectors
from grading.judges.fewshot import fewshot_split_cases

from .subset import active_subset


class ReportInputs:
    """Lazily loaded frames of one project; ``decisions(source)`` is memoized by source."""

    def __init__(self, project: Project, *, include_excluded: bool = False):
        """``include_excluded``: keep the cases quality control excluded (for the screening itself).
        The model subset active when the inputs are made (``subset.model_subset``) restricts the
        responses, so every figure counts only those models' responses."""
        self.project = project
        self.include_excluded = include_excluded
        self.subset = active_subset()
        self._decisions: dict[str, pd.DataFrame] = {}
        self._cohort_rows: dict[int, pd.DataFrame] = {}
        self._cohort_frames: dict[int, pd.DataFrame] = {}
        self._others: dict[int, "ReportInputs"] = {}

    def for_source(self, source) -> "ReportInputs":
        """The inputs of the project a (possibly foreign) source belongs to."""
        if source.project.pk == self.project.pk:
            return self
        if source.project.pk not in self._others:
            self._others[source.project.pk] = ReportInputs(source.project)
        return self._others[source.project.pk]

    @cached_property
    def excluded_case_ids(self) -> frozenset:
        if self.include_excluded:
            return frozenset()
        return frozenset(CaseQuality.objects.filter(project=self.project, excluded=True).values_list("case_id", flat=True))

    @property
    def n_excluded_cases(self) -> int:
        return len(self.excluded_case_ids)

    @cached_property
    def n_draft_labels(self) -> int:
        """Labels of the project left out because they are drafts (``annotation.selectors.final``)."""
        return labels_draft_count(project=self.project)

    @cached_property
    def n_check_labels(self) -> int:
        """Labels of the project left out because they are on hidden check items (annotator quality)."""
        return labels_check_count(project=self.project)

    @cached_property
    def all_models(self) -> list[str]:
        """Every source model of the project's responses (before any subset)."""
        return sorted(map(str, self._responses["model"].unique()))

    @cached_property
    def _responses(self) -> pd.DataFrame:
        frame = selectors.response_frame(project=self.project)
        return frame[~frame["case_id"].isin(self.excluded_case_ids)] if self.excluded_case_ids else frame

    @cached_property
    def responses(self) -> pd.DataFrame:
        return self._counted(self._responses)

    def _counted(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The responses of ``frame`` reports count: the model subset's."""
        if self.subset is not None:
            frame = frame[[self.subset.keeps(str(m)) for m in frame["model"]]]
        return frame

    @cached_property
    def response_keys(self) -> pd.DataFrame:
        """``responses`` without their text lengths, when ``responses`` is not loaded already:
        measuring every response's text is most of the read (a queue of 27,500 responses)."""
        if "responses" in self.__dict__:
            return self.responses
        frame = selectors.response_frame(project=self.project, with_length=False)
        if self.excluded_case_ids:
            frame = frame[~frame["case_id"].isin(self.excluded_case_ids)]
        return self._counted(frame)

    @cached_property
    def cases(self) -> pd.DataFrame:
        frame = selectors.case_frame(project=self.project)
        return frame[~frame.index.isin(self.excluded_case_ids)] if self.excluded_case_ids else frame

    @cached_property
    def cohort_decisions(self) -> pd.DataFrame:
        """Every cohort's decisions (column ``cohort`` = name), of the responses reports count:
        each cohort's own frame (``cohort_decided``), so a report that needs one cohort and gold
        reads and decides each cohort's labels once."""
        parts = [self.cohort_decided(c).assign(cohort=c.name)
                 for c in Cohort.objects.filter(project=self.project).order_by("position", "pk")]
        parts = [p for p in parts if len(p)]
        if not parts:
            return pd.DataFrame(columns=[*selectors.DECISION_COLUMNS, "cohort"])
        frame = pd.concat(parts, ignore_index=True)
        return frame[frame["response_id"].isin(self.responses.index)]

    def cohort_decided(self, cohort) -> pd.DataFrame:
        """One cohort's decisions (``selectors.cohort_frame``: the cohort rule), decided once."""
        if cohort.pk not in self._cohort_frames:
            self._cohort_frames[cohort.pk] = selectors.cohort_frame(cohort=cohort, rows=self.cohort_rows(cohort))
        return self._cohort_frames[cohort.pk]

    def cohort_rows(self, cohort) -> pd.DataFrame:
        """The final labels of one cohort (``selectors.label_rows``), read once for all its uses."""
        if cohort.pk not in self._cohort_rows:
            self._cohort_rows[cohort.pk] = selectors.label_rows(project=self.project, cohort=cohort)
        return self._cohort_rows[cohort.pk]

    def expert_rows(self, cohort) -> pd.DataFrame:
        """The annotators' own labels of a cohort on the responses reports count
        (``selectors.expert_label_rows``)."""
        return selectors.expert_label_rows(cohort=cohort, criteria=self.criteria, response_ids=self.responses.index,
                                           rows=self.cohort_rows(cohort))

    @cached_property
    def criteria(self) -> pd.DataFrame:
        return selectors.criterion_frame(project=self.project)

    @cached_property
    def n_binary_criteria_by_case(self) -> pd.Series:
        """N_i of coverage: binary criteria of the rubric each case is judged against, counted in
        the database so that coverage never needs the whole criteria frame."""
        per_version = dict(
            Criterion.objects.filter(project=self.project, kind="binary").order_by()
            .values("rubric_version_id").annotate(n=Count("id")).values_list("rubric_version_id", "n")
        )
        versions = dict(Case.objects.filter(project=self.project).values_list("pk", "rubric_version_id"))
        return pd.Series([per_version.get(versions.get(c), 0) for c in self.cases.index], index=self.cases.index, dtype=np.int64)

    def decisions(self, source, *, outputs: pd.DataFrame | None = None) -> pd.DataFrame:
        """The decision frame of ``source``, without the responses of excluded cases; ``outputs``: a
        judge's ``selectors.judgment_rows`` when the caller has read them already."""
        inputs = self.for_source(source)
        if source.spec not in inputs._decisions:
            if source.kind == "cohort":
                frame = inputs.cohort_decided(source.obj)
            elif source.kind == "gold":
                frame = selectors.gold_decision_frame(project=inputs.project, cohorts=inputs.cohort_decisions)
            else:
                frame = selectors.source_decisions(source=source, responses=inputs.responses, criteria=inputs.criteria,
                                                   outputs=outputs)
            split = inputs.fewshot_cases(source)
            if split:  # a judge's few-shot examples came from these cases: its figures leave them out
                frame = frame[~frame["response_id"].map(inputs.responses["case_id"]).isin(split)]
            kept = frame["response_id"].isin(inputs.responses.index)
            inputs._decisions[source.spec] = frame if kept.all() else frame[kept].reset_index(drop=True)
        return inputs._decisions[source.spec]

    def fewshot_cases(self, source) -> frozenset:
        """The cases of a judge's few-shot split (a panel's: its members'), which every report of
        that source leaves out (``judges.fewshot``); empty for other sources."""
        if source.kind != "judge" or source.obj is None:
            return frozenset()

        judges = selectors.panel_members(judge=source.obj) if source.obj.kind.votes_over_members else [source.obj]
        return frozenset().union(*(fewshot_split_cases(j) for j in judges))

    def criteria_not_decided(self, source) -> int:
        """How many criteria of the rubrics of the responses ``source`` decided it never decides: a
        calibrated judge fitted for one criterion decides no other (``JudgeBackend.decides_own_criteria``),
        a cohort may have left a criterion unlabelled. Those criteria are not compared, not counted as
        invalid; reports say how many there are (``left_out``)."""
        inputs = self.for_source(source)
        frame = inputs.decisions(source)
        if frame.empty:
            return 0
        versions = inputs.responses["rubric_version_id"].reindex(frame["response_id"].unique()).dropna().unique()
        criteria = inputs.criteria
        applicable = set(criteria.index[criteria["rubric_version_id"].isin(versions)])
        return len(applicable - set(frame["criterion_id"].unique().tolist()))

    def left_out(self, sources=()) -> dict:
        """What the figures of ``sources`` leave out, in every report's words (``registry``): draft
        labels, cases excluded by quality control, each judge's few-shot split cases, the
        criteria each source does not decide (sources without any are not listed) and, when there
        are any, the labels of hidden check items."""
        def name(s) -> str:
            return s.spec if s.project.pk == self.project.pk else f"{s.project.slug}:{s.spec}"

        few_shot = {name(s): len(self.for_source(s).fewshot_cases(s)) for s in sources}
        undecided = {name(s): self.criteria_not_decided(s) for s in sources}
        stated = {"draft_labels": self.n_draft_labels, "excluded_cases": self.n_excluded_cases,
                  "few_shot_cases": {spec: n for spec, n in few_shot.items() if n},
                  "criteria_not_decided": {spec: n for spec, n in undecided.items() if n}}
        if self.n_check_labels:  # stated once a project has check items (a project without says nothing of them)
            stated["check_labels"] = self.n_check_labels
        return stated

    def annotated(self, source) -> pd.DataFrame:
        """Decisions of ``source`` joined with model, author kind, case and criterion kind/weight."""
        inputs = self.for_source(source)
        frame = self.decisions(source)
        responses, criteria = inputs.responses, inputs.criteria
        out = frame.copy()
        out["model"] = out["response_id"].map(responses["model"])
        out["author_kind"] = out["response_id"].map(responses["author_kind"])
        out["case_id"] = out["response_id"].map(responses["case_id"])
        out["kind"] = out["criterion_id"].map(criteria["kind"])
        out["weight"] = out["criterion_id"].map(criteria["weight"]).astype(float)
        return out


def as_number(value):
    """A JSON-safe number: None for NaN/None, int for integral numpy ints, float otherwise."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return value
    return None if np.isnan(value) else value


def interval_pair(interval) -> list | None:
    """A bootstrap interval (``metrics.BootstrapCI``) as the JSON the reports give: [low, high]."""
    return [as_number(interval.low), as_number(interval.high)] if interval is not None else None


def interval_text(pair) -> str | None:
    """An interval of a report's JSON as table text, "low – high"."""
    return None if not pair or pair[0] is None else f"{pair[0]:.3f} – {pair[1]:.3f}"


def report_table(columns: list[str], rows: list[list]) -> dict:
    """A table of a report page (shown, and offered as CSV): its columns and JSON-safe rows."""
    return {"columns": columns, "rows": [[as_number(v) if not isinstance(v, str) else v for v in row] for row in rows]}


def ci_columns(columns: list[str], with_interval: set[str], ci: bool) -> list[str]:
    """``columns`` with, when ``ci``, a "NAME 95% CI" column after each of ``with_interval``."""
    return [c for name in columns for c in ([name, f"{name} 95% CI"] if ci and name in with_interval else [name])]
