"""The calibration page (RULERS, SPEC §3 "Score calibration"): the calibrations stored by the
``calibrate`` command (``judge:NAME@calibrated``, with their held-out score distributions), a
quick held-out QWK before and after quantile mapping of each judge's weighted scores against a
cohort, and the verbosity check of every source. A page of its own, with no command.
"""
import numpy as np
import pandas as pd

from annotation.models import Project
from grading import metrics
from grading.sources import project_sources

from . import charts
from .glossary import worded_table
from .inputs import ReportInputs, as_number, report_table
from .registry import Page, Params, Report, SourceField, StrategyField, register
from .scores import response_scores


def calibration_page(*, project: Project, reference: str | None = None, strategy: str = "skip") -> dict:
    inputs = ReportInputs(project)
    sources = project_sources(project=project)
    cohorts, judges = sources["cohorts"], sources["judges"]
    if not cohorts:
        return {"reference": None, "tables": {}, "calibration": []}
    ref = next((c for c in cohorts if c.spec == reference), cohorts[0])
    human = response_scores(inputs=inputs, source=ref, strategy=strategy)
    levels = np.round(np.linspace(0.0, 1.0, 11), 10)
    calibration, verbosity, holdout = [], [], []
    for judge in judges:
        scores = response_scores(inputs=inputs, source=judge, strategy=strategy)
        both = pd.DataFrame({"judge_score": scores["score"], "human_score": human["score"]}).dropna()
        both["item"] = both.index
        row = [judge.spec, ref.spec, len(both), None, None, None, None]
        if len(both) >= 4:
            try:
                rep = metrics.evaluate_calibration(both, levels=levels)
                row = [judge.spec, ref.spec, len(both), rep.n_calibration, rep.n_holdout, as_number(rep.qwk_before),
                       as_number(rep.qwk_after)]
                holdout.append({"source": judge.spec, "levels": list(rep.levels), "n_holdout": rep.n_holdout,
                                "distributions": {name: list(counts) for name, counts in rep.holdout_counts.items()}})
            except metrics.MetricError:
                pass
        calibration.append(row)
    for source in cohorts + judges:
        scores = response_scores(inputs=inputs, source=source, strategy=strategy)
        if scores.empty:
            continue
        check = metrics.verbosity_check(scores, length="length_chars", score="score", model="model")
        for model, p in [("(pooled)", check.pooled), *sorted(check.per_model.items())]:
            verbosity.append([source.spec, str(model), p.n, as_number(p.pearson_r), as_number(p.pearson_p),
                              as_number(p.spearman_rho), as_number(p.spearman_p)])
    typed = [(j, j.obj.typed_settings) for j in judges]
    stored = [dict(settings.calibration, source=j.spec) for j, settings in typed if hasattr(settings, "calibration")]
    return {
        "reference": ref.spec, "strategy": strategy, "calibration": calibration, "stored": stored, "holdout": holdout,
        "tables": {
            "holdout_distributions": _distribution_table(holdout, ref.spec),
            "stored_distributions": _distribution_table(stored, "the reference"),
            "stored": report_table(["source", "from", "reference", "criterion", "n_calibration", "n_holdout", "qwk_before",
                              "qwk_after"],
                             [[c["source"], c.get("judge"), c.get("reference"), c.get("criterion") or "(traits)",
                               c.get("n_calibration"), c.get("n_holdout"), c.get("qwk_before"), c.get("qwk_after")]
                              for c in stored]),
            "calibration": report_table(["judge", "reference", "n_items", "n_calibration", "n_holdout", "qwk_before",
                                         "qwk_after"], calibration),
            "verbosity": report_table(["source", "model", "n", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"], verbosity),
        },
    }


SERIES = ("human", "raw", "calibrated")


def _distribution_table(calibrations: list[dict], reference: str) -> dict:
    """Per calibration and score level, how many held-out items the humans, the raw judge and the
    calibrated judge put there."""
    rows = [[c["source"], level, *[(c.get("distributions") or {}).get(name, [None] * len(c["levels"]))[i] for name in SERIES]]
            for c in calibrations if c.get("distributions") for i, level in enumerate(c.get("levels") or [])]
    return worded_table(["source", "score", "human_items", "raw_items", "calibrated_items"], rows,
                        words={"human_items": f"Human ({reference}) items"})


def _distribution_chart(calibration: dict, *, reference: str, how: str):
    dist = calibration.get("distributions") or {}
    if not dist:
        return None
    names = {"human": f"human ({reference})", "raw": "raw judge", "calibrated": f"calibrated judge ({how})"}
    return charts.level_distributions(
        title=f"{calibration['source']}: human, raw and calibrated scores on the held-out items "
              f"(n = {calibration.get('n_holdout')} items)",
        levels=calibration.get("levels") or [], series=[(names[name], dist.get(name, [])) for name in SERIES],
        value_title="share of held-out items", level_title="score (snapped to the scale)")


def calibration_charts(result: dict, project: Project) -> dict:
    """The held-out score distributions of every calibration (human, raw judge, calibrated judge; the
    quick quantile mapping of each judge, and each stored calibration) and the QWK before and after."""
    out = {}
    for quick in result.get("holdout", []):
        chart = _distribution_chart(quick, reference=result["reference"], how="quantile-mapped")
        if chart is not None:
            out[f"holdout:{quick['source']}"] = chart
    for stored in result.get("stored", []):
        chart = _distribution_chart(stored, reference=stored.get("reference"), how="stored")
        if chart is not None:
            out[f"stored:{stored['source']}"] = chart
    rows = [r for r in result.get("calibration", []) if r[5] is not None or r[6] is not None]
    if not rows:
        return out
    return {**out, "qwk": charts.bar_chart(
        title=f"QWK against {result['reference']} on each judge's held-out responses, before and after quantile mapping "
              f"(n per judge in its label)",
        labels=[f"{r[0]} (n = {r[4] or 0:,})" for r in rows],
        series=[("raw", [r[5] for r in rows]), ("calibrated", [r[6] for r in rows])],
        value_title="quadratic weighted kappa", label_title="judge", n=[r[4] or 0 for r in rows],
    )}


class CalibrationPageParams(Params):
    reference = SourceField(spec=True, required=False, allow_null=True, default=None)
    strategy = StrategyField(default="skip")


CALIBRATION = register(Report(
    key="calibration", title="Calibration",
    page=Page(params=CalibrationPageParams, build=calibration_page, template="grading/reports/calibration.html",
              charts=calibration_charts, position=50),
))
