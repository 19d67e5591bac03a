"""Calibration that lasts (RULERS phase III, SPEC §3 "Score calibration"; the ``calibrate``
command; issue 13, point 4).

The items are (response, trait) pairs, scored by the judge's trait score (``traits``), or, with
a criterion, (response, criterion) pairs of one ordinal criterion scored by the judge's decision.
On a seeded calibration split (``calibration_size`` items, default 200, or half the items when
there are fewer than 400) a ridge regression maps the judge's features (its score and its count
of invalid citations: quotes not verbatim in the response, and quotes a compiled judge named
with the wrong sentence) to the human score; the latent score is quantile-mapped onto the human
calibration scores and snapped to the nearest option (``metrics.fit_ridge_calibration``). The
calibrated scores of every other item are stored (by ``grading.calibration_write``, the write
path; this module only reads and fits) as the judgments of a derived judge ``NAME@calibrated``
(backend ``calibrated``), so ``judge:NAME@calibrated`` is a source wherever a source is: reports,
exports, the API. QWK before and after is measured on those held-out items.
"""
from collections import Counter

import numpy as np
import pandas as pd

from annotation.models import Criterion, Response
from grading import metrics
from grading.judges.compiled import rejected_quotes
from grading.judges.parsing import evidence_valid_quotes

from ..models import Judge, Judgment
from .inputs import ReportInputs, as_number, interval_pair
from .registry import ReportUnavailable
from .scores import decision_values
from .traits import Traits, source_trait_scores

DEFAULT_SIZE = 200
METHOD = ("ridge regression of (judge score, invalid citations) on the human score, quantile-mapped onto the human "
          "calibration scores, snapped to the nearest option")


def _invalid_citations(judge: Judge, criterion_ids, trait_of: dict) -> Counter:
    """(response, trait or criterion) → the judge's invalid citations over its samples."""
    rows = list(Judgment.objects.filter(judge=judge, criterion_id__in=list(criterion_ids)).order_by()
                .values_list("response_id", "criterion_id", "evidence", "explanation"))
    texts = dict(Response.objects.filter(pk__in={r for r, *_ in rows}).values_list("pk", "text"))
    counts: Counter = Counter()
    for r, c, evidence, explanation in rows:
        quotes = [q for q in (evidence or []) if isinstance(q, str)]
        bad = len(quotes) - len(evidence_valid_quotes(quotes=quotes, response_text=texts.get(r, "")))
        counts[(r, trait_of.get(c, c))] += bad + rejected_quotes(explanation)
    return counts


def _trait_items(inputs: ReportInputs, judge_source, reference, *, only: int | None = None) -> tuple[pd.DataFrame, dict]:
    traits = Traits(inputs, only=only)
    if not traits.items:
        raise ReportUnavailable(f"project {inputs.project.slug!r} has no traits; name an ordinal criterion with --criterion")
    scales = {(info["lo"], info["hi"]) for info in traits.info.values()}
    if len(scales) > 1:
        raise ValueError("the traits have different scales; calibrate one at a time with --criterion TRAIT_ID")
    lo, hi = scales.pop()
    mine = source_trait_scores(inputs=inputs, source=judge_source, traits=traits)
    theirs = source_trait_scores(inputs=inputs, source=reference, traits=traits)
    invalid = _invalid_citations(judge_source.obj, traits.criterion_ids(), traits.item_trait)
    rows = [(r, t, float(s), float(invalid.get((r, t), 0)), float(theirs[(r, t)])) for (r, t), s in mine.items() if (r, t) in theirs]
    levels = [float(v) for v in range(int(np.ceil(lo)), int(np.floor(hi)) + 1)]
    return pd.DataFrame(rows, columns=["response", "criterion", "score", "invalid", "human"]), {"levels": levels,
                                                                                                "ids": sorted(traits.info)}


def _criterion_items(inputs: ReportInputs, judge_source, reference, criterion: str) -> tuple[pd.DataFrame, dict]:
    criteria = inputs.criteria
    match = criteria[criteria["criterion_external_id"] == criterion]
    if match.empty:
        raise LookupError(f"project {inputs.project.slug!r} has no criterion {criterion!r}")
    pk = int(match.index[0])
    if criteria.at[pk, "kind"] != Criterion.ORDINAL:
        raise ReportUnavailable(f"criterion {criterion!r} is {criteria.at[pk, 'kind']}: calibration maps ordinal scores")
    if pk in Traits(inputs).items:  # a trait: its trait scores
        return _trait_items(inputs, judge_source, reference, only=pk)

    def values(source):
        frame = inputs.decisions(source)
        rows = decision_values(frame[frame["criterion_id"] == pk], criteria)
        return dict(zip(rows["response"], rows["value"]))

    mine, theirs = values(judge_source), values(reference)
    invalid = _invalid_citations(judge_source.obj, [pk], {})
    rows = [(r, pk, float(s), float(invalid.get((r, pk), 0)), float(theirs[r])) for r, s in mine.items()
            if s == s and theirs.get(r) == theirs.get(r) and r in theirs]
    return pd.DataFrame(rows, columns=["response", "criterion", "score", "invalid", "human"]), {
        "levels": list(criteria.at[pk, "option_values"]), "ids": [pk]}


def _qwk_intervals(hold: pd.DataFrame, inputs: ReportInputs, human, raw, calibrated, levels) -> dict:
    """Bootstrap 95% intervals of the held-out QWK before and after, resampling the held-out items'
    cases; the fitted map and the split stay fixed, so the uncertainty of the fit is not in them."""
    human, raw, calibrated = (np.asarray(v, dtype=float) for v in (human, raw, calibrated))

    def both(rows):
        return (metrics.ordinal_agreement(human[rows], raw[rows], option_values=levels).qwk,
                metrics.ordinal_agreement(human[rows], calibrated[rows], option_values=levels).qwk)

    cases = hold["response"].map(inputs.responses["case_id"]).to_numpy()
    intervals = metrics.case_bootstrap_ci(cases, both) or [None, None]
    return {f"qwk_{name}_ci": interval_pair(ci)
            for name, ci in zip(("before", "after"), intervals)}


def calibration_fit(*, inputs: ReportInputs, source, reference, criterion: str | None = None,
                    calibration_size: int | None = None, seed: int = 0, ci: bool = False) -> tuple[dict, dict, pd.DataFrame]:
    """The calibration's summary (what is stored with the derived judge), with ``ci`` the bootstrap
    95% intervals of the held-out QWK before and after resampling cases (``qwk_before_ci``,
    ``qwk_after_ci``; returned, not stored), and the held-out items with their ``calibrated`` score."""
    judge = source.obj
    if source.kind != "judge" or judge is None or judge.kind.derived:
        raise ValueError(f"{source.spec} is not a judge of its own: calibrate a judge (not a panel or a calibrated one)")
    frame, info = (_criterion_items(inputs, source, reference, criterion) if criterion
                   else _trait_items(inputs, source, reference))
    frame = frame.dropna().reset_index(drop=True)
    if len(frame) < 4:
        raise ReportUnavailable(f"{len(frame)} items scored by both {source.spec} and {reference.spec}: too few to calibrate (4 or more)")
    size = calibration_size or (DEFAULT_SIZE if len(frame) >= 2 * DEFAULT_SIZE else len(frame) // 2)
    calibration, holdout = metrics.split_by_size(frame.index.to_numpy(), size=size, seed=seed)
    cal, hold = frame.loc[calibration], frame.loc[holdout]
    levels = info["levels"]
    model = metrics.fit_ridge_calibration(cal[["score", "invalid"]], cal["human"], levels=levels)
    calibrated = model(hold[["score", "invalid"]])
    human = metrics.snap_to_levels(hold["human"], levels)
    raw = metrics.snap_to_levels(hold["score"], levels)
    before = metrics.ordinal_agreement(human, raw, option_values=levels).qwk
    after = metrics.ordinal_agreement(human, calibrated, option_values=levels).qwk
    summary = {
        "judge": judge.name, "reference": reference.spec, "criterion": criterion, "seed": seed,
        "n_calibration": len(cal), "n_holdout": len(hold), "qwk_before": as_number(before), "qwk_after": as_number(after),
        "method": METHOD, "levels": levels,
        "distributions": {name: list(metrics.level_counts(values, levels))
                          for name, values in (("human", human), ("raw", raw), ("calibrated", calibrated))},
        "coefficients": [as_number(c) for c in model.model.coef_],
    }
    intervals = _qwk_intervals(hold, inputs, human, raw, calibrated, levels) if ci else {}
    return summary, intervals, hold.assign(calibrated=calibrated)
