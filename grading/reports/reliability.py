"""Krippendorff's alpha among the individual raters inside one source (SPEC §3
"Chance-corrected agreement"; the ``reliability`` command of SPEC §5): a cohort's
annotators and checkers, a judge's Monte Carlo samples, or a panel's member judges.

Units are (response, criterion) items. At the nominal level every distinct decision is
its own category (verdicts and option labels); at the ordinal and interval levels the
values are numeric (met = 1, not met = 0, option values) and nominal criteria are left
out. cannot_assess and not-applicable options are missing ratings. Only units rated by
at least two raters can be paired, so only they are counted in ``n_units``.
"""
import numpy as np
import pandas as pd

from annotation.vocabulary import CANNOT_ASSESS
from grading import metrics, selectors

from .inputs import ReportInputs, as_number, interval_pair
from .registry import Params, Report, SourceField, choice, register

LEVELS = ("nominal", "ordinal", "interval")


def reliability_compute(*, inputs: ReportInputs, source, level: str = "nominal", ci: bool = False) -> dict:
    """With ``ci``, a bootstrap 95% interval of alpha resampling cases (``alpha_ci``)."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; use one of {', '.join(LEVELS)}")
    own = inputs.for_source(source)
    rows = selectors.source_raters(source=source, responses=own.responses, criteria=own.criteria)
    kind = rows["criterion_id"].map(own.criteria["kind"])
    na = rows["criterion_id"].map(own.criteria["na_labels"])
    usable = (rows["verdict"] != CANNOT_ASSESS) & ~pd.Series(
        [o is not None and o in labels for o, labels in zip(rows["option"], na)], index=rows.index, dtype=bool
    )
    if level == "nominal":
        code = rows["option"].where(rows["option"].notna(), rows["verdict"])
        usable &= code.notna()
        values = pd.Series(pd.factorize(code.where(usable))[0], index=rows.index).astype(float).where(usable)
    else:
        usable &= kind != "nominal"
        numeric = metrics.numeric_values(kind=kind, verdict=rows["verdict"], value=rows["value"])
        values = pd.Series(numeric, index=rows.index, dtype=float).where(usable)
    rated = rows.assign(_v=values).dropna(subset=["_v"])
    unit = rated.groupby(["response_id", "criterion_id"], sort=False).ngroup()
    per_unit = unit.map(unit.value_counts())
    rated = rated[(per_unit >= 2).to_numpy()]
    unit = rated.groupby(["response_id", "criterion_id"], sort=False).ngroup().to_numpy()
    rater, raters = pd.factorize(rated["rater"])
    if len(rated) == 0:
        return {"krippendorff_alpha": None, "n_units": 0, "n_raters": int(rows["rater"].nunique()), "level": level,
                **({"alpha_ci": None} if ci else {})}
    matrix = np.full((len(raters), unit.max() + 1), np.nan)
    matrix[rater, unit] = rated["_v"].to_numpy()
    alpha = metrics.krippendorff_alpha(matrix, level=level)
    out = {"krippendorff_alpha": as_number(alpha), "n_units": int(matrix.shape[1]), "n_raters": int(len(raters)), "level": level}
    if ci:
        # Each unit's case by its external id, not its primary key: the resampling draws cases in the
        # order of these names, so the interval is the same whatever keys the database gave the cases
        # (as text, keys 99 and 100 swap places: an export imported again moved the interval).
        unit_cases = np.empty(matrix.shape[1], dtype=object)
        unit_cases[unit] = rated["response_id"].map(own.responses["case_id"]).map(own.cases["case_external_id"]).to_numpy()
        interval = metrics.krippendorff_alpha_ci(matrix, unit_cases.astype(str), level=level)
        out["alpha_ci"] = interval_pair(interval)
    return out


class ReliabilityParams(Params):
    source = SourceField(kinds=("cohort", "judge"), help_text="cohort:NAME or judge:NAME (gold has one decision per item)",
                         wrong_kind="gold holds one decision per item; reliability needs a cohort or a judge source")
    level = choice(LEVELS, what="level", default="nominal")


RELIABILITY = register(Report(
    key="reliability", title="Reliability within a source",
    help="Krippendorff's alpha among the raters of a cohort, the samples of a judge or the members of a panel.",
    params=ReliabilityParams, compute=reliability_compute, cannot_assess="skip",
))
