"""The inputs one report computation reads, loaded once and shared: a project's
responses, cases and criteria frames and the decision frame of each source it asks for.
"""
from functools import cached_property

import numpy as np
import pandas as pd
from django.db.models import Count

from annotation.models import Criterion, Project
from grading import selectors


class ReportInputs:
    """Lazily loaded frames of one project; ``decisions(source)`` is memoized by source."""

    def __init__(self, project: Project):
        self.project = project
        self._decisions: dict[str, pd.DataFrame] = {}
        self._others: dict[int, "ReportInputs"] = {}

    def for_source(self, source) -> "ReportInputs":
        """The inputs of the project a (possibly foreign) source belongs to."""
        if source.project.pk == self.project.pk:
            return self
        if source.project.pk not in self._others:
            self._others[source.project.pk] = ReportInputs(source.project)
        return self._others[source.project.pk]

    @cached_property
    def responses(self) -> pd.DataFrame:
        return selectors.response_frame(project=self.project)

    @cached_property
    def cases(self) -> pd.DataFrame:
        return selectors.case_frame(project=self.project)

    @cached_property
    def criteria(self) -> pd.DataFrame:
        return selectors.criterion_frame(project=self.project)

    @cached_property
    def n_binary_criteria_by_case(self) -> pd.Series:
        """N_i of coverage: binary criteria of each case (its own rubric, else the project's),
        counted in the database so that coverage never needs the whole criteria frame."""
        criteria = Criterion.objects.filter(project=self.project).order_by()
        own = dict(
            criteria.filter(kind="binary", case__isnull=False).values("case_id").annotate(n=Count("id")).values_list("case_id", "n")
        )
        cases_with_own = set(criteria.filter(case__isnull=False).values_list("case_id", flat=True).distinct())
        shared = criteria.filter(kind="binary", case__isnull=True).count()
        return pd.Series(
            [own.get(c, 0) if c in cases_with_own else shared for c in self.cases.index], index=self.cases.index, dtype=np.int64
        )

    def decisions(self, source) -> pd.DataFrame:
        inputs = self.for_source(source)
        if source.spec not in inputs._decisions:
            inputs._decisions[source.spec] = selectors.source_decisions(
                source=source, responses=inputs.responses, criteria=inputs.criteria
            )
        return inputs._decisions[source.spec]

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
