"""Reads of routed labelling: each response's uncertainty as the judges see it, and a cohort's design."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Avg, Case, FloatField, Value, When

from annotation.models import Cohort, Criterion, Project, Response
from annotation.vocabulary import MET

from ..models import Judge, Judgment, RoutingDesign, RoutingDraw

if TYPE_CHECKING:  # the frames' type only: pandas loads with the functions
    import pandas as pd


def response_uncertainties(*, project: Project, judges: list[Judge], n_criteria: pd.Series) -> pd.Series:
    """The standard deviation of each response's rubric accuracy as ``judges`` see it
    (``metrics.response_uncertainty``: how their decisions, over judges and Monte Carlo samples, split on
    each binary criterion), indexed by response id; ``n_criteria``: N_i per response id. Responses no
    judge decided are absent. Cannot assess counts as not met, as in rubric accuracy."""
    import numpy as np  # lazy: with the page or the draw, not at start-up
    import pandas as pd  # lazy: with the page or the draw, not at start-up

    from grading import metrics  # lazy: the metric code loads on first use

    shares = (
        Judgment.objects.filter(judge__in=judges, valid=True, criterion__kind=Criterion.BINARY, verdict__isnull=False,
                                response__project=project, response__author_kind=Response.MODEL)
        .order_by().values("response_id", "criterion_id")
        .annotate(p=Avg(Case(When(verdict=MET, then=Value(1.0)), default=Value(0.0), output_field=FloatField())))
        .values_list("response_id", "p")
    )
    frame = pd.DataFrame.from_records(list(shares), columns=["response_id", "p"])
    if frame.empty:
        return pd.Series(dtype=float, name="uncertainty")
    groups = frame.groupby("response_id")["p"]
    ids = np.array(list(groups.groups), dtype=np.int64)
    counts = n_criteria.reindex(ids).fillna(0).to_numpy()
    values = metrics.response_uncertainty([np.asarray(g) for _, g in groups], counts)
    return pd.Series(values, index=pd.Index(ids, name="response_id"), name="uncertainty")


def routing_design_for(*, cohort: Cohort) -> RoutingDesign | None:
    return RoutingDesign.objects.filter(cohort=cohort).first()


def routing_draw_frame(*, design: RoutingDesign) -> pd.DataFrame:
    """One row per response of the design (index response_id): uncertainty, probability, draw,
    chosen_round (NaN: not drawn yet) and chosen."""
    import pandas as pd  # lazy: with the page, not at start-up

    rows = RoutingDraw.objects.filter(design=design).order_by("response_id").values_list(
        "response_id", "uncertainty", "probability", "draw", "chosen_round")
    frame = pd.DataFrame.from_records(list(rows), columns=["response_id", "uncertainty", "probability", "draw", "chosen_round"])
    frame = frame.set_index("response_id")
    frame["chosen"] = frame["chosen_round"].notna()
    return frame
