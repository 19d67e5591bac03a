"""Monte Carlo stability of one judge (SPEC §3 "Monte Carlo stability"; the ``stability``
command; issue 13, point 2), in the rubric's own scale.

Each sample of the judge is one Monte Carlo run; a sample's missing outputs count as its
decisions do (``selectors.judge_sample_outputs``). Per (target model, criterion): x_r = the
judge's mean value over the cell's responses in sample r, μ = mean_r x_r, σ = sd_r x_r
(``metrics.monte_carlo_groups``). Per criterion kind: the mean over items (response, criterion)
of each item's sd over the samples (``metrics.monte_carlo_stability``), so binary 0/1 spreads are
never averaged with points on an ordinal scale.
"""
import pandas as pd

from grading import metrics
from grading.selectors import judge_sample_outputs
from grading.sources import project_sources, source_parse

from ..models import Judge
from . import charts
from .glossary import worded_table
from .inputs import ReportInputs, as_number, interval_pair, interval_text
from .registry import Flag, Page, Params, Report, ReportUnavailable, SourceField, register
from .scores import decision_values

KINDS = ("binary", "ordinal", "nominal")


def sample_values(*, inputs: ReportInputs, judge: Judge) -> pd.DataFrame:
    """One row per sample output with a value: response, criterion_id, kind, target, sample, score."""
    outputs = judge_sample_outputs(judge=judge, responses=inputs.responses, criteria=inputs.criteria)
    rows = decision_values(outputs, inputs.criteria)
    rows["sample"] = outputs["sample"].to_numpy()
    rows["kind"] = rows["criterion_id"].map(inputs.criteria["kind"])
    rows["target"] = rows["response"].map(inputs.responses["model"])
    rows["score"] = rows["value"]
    return rows[rows["score"].notna()]


def by_kind(rows: pd.DataFrame, name: str, *, cases: pd.Series | None = None) -> dict:
    """Per criterion kind: items, items with an sd (two samples or more) and their mean sd; given
    the case of each response (``cases``), also that mean's bootstrap 95% interval resampling
    cases (``mean_sd_ci``)."""
    out = {}
    for kind in KINDS:
        part = rows[rows["kind"] == kind]
        if part.empty:
            continue
        mc = metrics.monte_carlo_stability(part.assign(judge=name, criterion=part["criterion_id"], value=part["score"]),
                                           keys=("judge", "response", "criterion"))
        js = mc.per_judge.get(name)
        out[kind] = {"n_items": js.n_items if js else 0, "n_items_with_sd": js.n_items_with_sd if js else 0,
                     "mean_sd": as_number(js.mean_sd) if js else None}
        if cases is not None:
            items = mc.per_item.dropna(subset=["sd"])
            out[kind]["mean_sd_ci"] = interval_pair(metrics.case_bootstrap_mean_ci(
                items["sd"].to_numpy(dtype=float), items["response"].map(cases).to_numpy()) if len(items) else None)
    return out


def _mu_intervals(rows: pd.DataFrame, inputs: ReportInputs) -> dict:
    """Per (target, criterion) the bootstrap 95% interval of μ, resampling cases."""
    cases = rows["response"].map(inputs.responses["case_id"]).to_numpy()
    out = {}
    for key, part in rows.groupby(["target", "criterion_id"], sort=True).indices.items():
        ci = metrics.monte_carlo_mu_ci(rows["sample"].to_numpy()[part], rows["score"].to_numpy()[part], cases[part])
        out[key] = interval_pair(ci)
    return out


def stability_compute(*, inputs: ReportInputs, judge: Judge, ci: bool = False) -> dict:
    """With ``ci``, each cell's μ and each kind's mean sd carry a bootstrap 95% interval resampling
    cases (``mu_ci``, ``mean_sd_ci``)."""
    if judge.kind.votes_over_members:
        raise ReportUnavailable(f"judge {judge.name!r} is a panel: its members' samples are the Monte Carlo runs; ask for one of them")
    rows = sample_values(inputs=inputs, judge=judge)
    cells = metrics.monte_carlo_groups(rows, keys=["target", "criterion_id"]) if len(rows) else pd.DataFrame(
        columns=["target", "criterion_id", "mu", "sd", "n_samples"])
    items = rows.groupby(["target", "criterion_id"], sort=True)["response"].nunique() if len(rows) else pd.Series(dtype=int)
    criteria = inputs.criteria
    kinds = by_kind(rows, judge.name, cases=inputs.responses["case_id"] if ci else None)
    intervals = _mu_intervals(rows, inputs) if ci and len(rows) else {}
    # Columns looked up once per column, not once per cell (a full-scale study has hundreds of thousands of cells).
    keys = pd.MultiIndex.from_frame(cells[["target", "criterion_id"]]) if len(cells) else None
    n_items = items.reindex(keys).fillna(0).astype(int).to_numpy() if keys is not None else []
    external = cells["criterion_id"].map(criteria["criterion_external_id"]).astype(str).to_numpy()
    kind = cells["criterion_id"].map(criteria["kind"]).astype(str).to_numpy()
    return {
        "judge": judge.name,
        "samples": judge.samples,
        "samples_seen": int(rows["sample"].nunique()) if len(rows) else 0,
        "scale": "native",
        "cells": [
            {"target": str(t), "criterion": name, "kind": k, "mu": as_number(mu), "sigma": as_number(sd),
             "n_samples": int(n), "n_items": int(count), **({"mu_ci": intervals.get((t, c))} if ci else {})}
            for (t, c, mu, sd, n), name, k, count in zip(
                cells[["target", "criterion_id", "mu", "sd", "n_samples"]].itertuples(index=False), external, kind, n_items,
                strict=True)
        ],
        "by_kind": kinds,
        "mean_sd_by_kind": {kind: figures["mean_sd"] for kind, figures in kinds.items()},
    }


class JudgeNameField(SourceField):
    """A judge by its name (``--judge NAME``), parsed into its source."""

    def to_internal_value(self, data):
        return super().to_internal_value(f"judge:{data}")


class StabilityParams(Params):
    judge = JudgeNameField(help_text="the judge's name (not a panel)")


# --- the page -------------------------------------------------------------------------------

def stability_judges(*, project) -> list[Judge]:
    """The judges whose samples can be compared (panels vote over members and have none), most
    samples first, then by name."""
    judges = [s.obj for s in project_sources(project=project)["judges"] if not s.obj.kind.votes_over_members]
    return sorted(judges, key=lambda j: (-j.samples, j.name))


def stability_page(*, project, judge: str | None = None, ci: bool = False) -> dict:
    """The page: μ ± σ per (target, criterion) and the mean spread per criterion kind of one judge
    (by default the one with the most samples); an empty state when the project has no judge."""
    names = [j.name for j in stability_judges(project=project)]
    if not names:
        return {"empty": "no_judge", "judges": [], "tables": {}}
    spec = judge or f"judge:{names[0]}"
    result = STABILITY.run(project=project, judge=source_parse(text=spec, project=project), ci=ci)
    kinds = result["by_kind"]
    cells = result["cells"]
    return {
        "judge": result["judge"], "judges": names, "samples": result["samples"], "samples_seen": result["samples_seen"],
        "ci": ci, "by_kind": kinds,  # the cells only once, as the table's rows (``page_cells``): a large page reads fast
        "tables": {
            "by_kind": worded_table(
                ["kind", "n_items", "n_items_with_sd", "mean_sd", *(["mean_sd 95% CI"] if ci else [])],
                [[kind, f["n_items"], f["n_items_with_sd"], f["mean_sd"], *([interval_text(f.get("mean_sd_ci"))] if ci else [])]
                 for kind, f in kinds.items()]),
            "cells": worded_table(
                ["target", "criterion", "kind", "mu", "sigma", "n_samples", "n_items", *(["mu 95% CI"] if ci else [])],
                [[c["target"], c["criterion"], c["kind"], c["mu"], c["sigma"], c["n_samples"], c["n_items"],
                  *([interval_text(c.get("mu_ci"))] if ci else [])] for c in cells]),
        },
    }


def page_cells(result: dict) -> list[dict]:
    """The page's (target, criterion) cells as dicts, read from its cells table."""
    table = (result.get("tables") or {}).get("cells") or {"columns": [], "rows": []}
    columns = table["columns"]
    return [dict(zip(columns, row)) for row in table["rows"]]


HEATMAP_MAX_CRITERIA = 60  # more criteria than this: the spread per target model instead of a row per criterion


def _spread_by_target(rows: list[list], col: dict[str, int], targets: list[str], kind: str, n_criteria: int):
    """Per target model the mean of its cells' σ over the criteria (the heatmap's rows averaged);
    ``rows`` are the cells table's rows, ``col`` its column positions."""
    sigmas: dict[str, list[float]] = {t: [] for t in targets}
    target, sigma = col["target"], col["sigma"]
    for row in rows:  # one pass over lists: the full-scale study has hundreds of thousands of cells
        if row[sigma] is not None:
            sigmas[row[target]].append(row[sigma])
    means = [sum(v) / len(v) if v else None for v in (sigmas[t] for t in targets)]
    return charts.bar_chart(
        title=f"Mean σ per target model over its {n_criteria:,} {kind} criteria (each criterion's μ ± σ is in the table "
              f"and its CSV)",
        labels=targets, series=[("mean σ over criteria", means)], n=[len(sigmas[t]) for t in targets],
        max_value=max([1.0, *[m for m in means if m is not None]]), value_title="standard deviation over samples",
        label_title="target model")


def stability_charts(result: dict, project) -> dict:
    """The mean spread per criterion kind, and per kind a heatmap of μ ± σ (criteria × target models,
    n items in each cell's tooltip): binary 0/1 and ordinal points each on their own colour scale;
    for a rubric of more than ``HEATMAP_MAX_CRITERIA`` criteria the mean σ per target model instead."""
    kinds = result.get("by_kind") or {}
    if not kinds:
        return {}
    names = list(kinds)
    spreads = [kinds[k]["mean_sd"] for k in names]
    out = {"spread": charts.bar_chart(
        title=f"Mean spread per item over {result['samples_seen']} samples of judge {result['judge']}, by criterion kind",
        labels=names, series=[("mean spread per item", spreads)], n=[kinds[k]["n_items_with_sd"] for k in names],
        max_value=max([1.0, *[v for v in spreads if v is not None]]), value_title="standard deviation over samples",
        label_title="criterion kind")}
    table = (result.get("tables") or {}).get("cells") or {"columns": [], "rows": []}
    col = {name: i for i, name in enumerate(table["columns"])}
    rows_of: dict[str, list[list]] = {kind: [] for kind in names}
    for row in table["rows"]:
        rows_of.setdefault(row[col["kind"]], []).append(row)
    for kind in names:
        rows = rows_of[kind]
        criteria = list(dict.fromkeys(row[col["criterion"]] for row in rows))
        targets = sorted({row[col["target"]] for row in rows})
        if len(criteria) > HEATMAP_MAX_CRITERIA:  # case-specific rubrics: a row per criterion would be unreadable
            out[f"cells_{kind}"] = _spread_by_target(rows, col, targets, kind, len(criteria))
            continue
        cells = [dict(zip(table["columns"], row)) for row in rows]
        at = {(c["criterion"], c["target"]): c for c in cells}

        def grid(field, at=at, criteria=criteria, targets=targets):
            return [[(at.get((r, t)) or {}).get(field) for t in targets] for r in criteria]

        n = sum(c["n_items"] for c in cells)
        out[f"cells_{kind}"] = charts.heatmap(
            title=f"μ ± σ per criterion and target model, {kind} criteria (n = {n:,} items)",
            rows=criteria, columns=targets, matrix=grid("mu"), spread=grid("sigma"), counts=grid("n_items"),
            diverging=False, value_title="μ (mean over samples)", row_title="criterion", column_title="target model")
    return out


class StabilityPageParams(Params):
    judge = JudgeNameField(spec=True, required=False, allow_null=True, default=None,
                           help_text="the judge's name (default: the judge with the most samples)")
    ci = Flag()


STABILITY = register(Report(
    key="stability", title="Monte Carlo stability",
    help="Monte Carlo stability of one judge: μ ± σ per (target, criterion), mean σ per criterion kind.",
    params=StabilityParams, cannot_assess="skip",
    compute=lambda *, inputs, judge, ci=False: stability_compute(inputs=inputs, judge=judge.obj, ci=ci),
    page=Page(params=StabilityPageParams, build=stability_page, template="grading/reports/stability.html",
              charts=stability_charts, title="Stability", position=94),
))
