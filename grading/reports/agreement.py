"""Agreement of a compared source B with a reference source A (SPEC §3 "MF1",
"Chance-corrected agreement", "Alignment of two cohorts"; the ``agreement`` command of
SPEC §5).

Decisions are paired by (response, criterion) inside one project; a source of another
project (a separate import of the same study) is paired by ``metrics.align_rows`` on
model, normalized case text and normalized criterion text. Binary figures use the binary
criteria, with cannot_assess treated by the chosen strategy; an unresolved decision (a
cohort tie) counts as a disagreement: it is given the opposite of the other side's
decision (when both are unresolved, A = met and B = not met). Ordinal figures compare the
option order index of both sides (values between options snap to the nearest option).

Its page compares every pair of sources (cohort with cohort, each judge with each cohort and with
gold) and shows one comparison in depth: the case-level MF1 histogram and the low-agreement tail.
"""
import numpy as np
import pandas as pd

from annotation.models import Project
from grading import metrics, selectors
from grading.metrics.columns import mapped_column, object_column
from grading.sources import project_sources, source_parse

from . import charts
from .inputs import ReportInputs, as_number, interval_pair, interval_text, report_table
from .panels import panel_summary
from .registry import Flag, Page, Params, Report, SourceField, StrategyField, register

SUMMARY_KEYS = (
    "n_decisions", "matched_responses", "unmatched_responses", "mf1", "f1_met", "f1_not_met", "cohen_kappa",
    "krippendorff_alpha", "percent_agreement", "positive_rate_a", "positive_rate_b", "invalid_b", "by_model",
    "case_level", "ordinal",
)
PAIR_COLUMNS = ["verdict", "option", "value", "unresolved", "invalid"]


def _local_pairs(inputs: ReportInputs, a, b) -> tuple[pd.DataFrame, int, int]:
    fa, fb = inputs.decisions(a), inputs.decisions(b)
    merged = fa.merge(
        fb[["response_id", "criterion_id", *PAIR_COLUMNS]], on=["response_id", "criterion_id"], suffixes=("_a", "_b")
    )
    matched = merged["response_id"].nunique()
    every = len(np.union1d(fa["response_id"].unique(), fb["response_id"].unique()))
    return merged, matched, every - matched


def _text_rows(inputs: ReportInputs, source) -> pd.DataFrame:
    """A source's decisions with model, case text and criterion text, in source order."""
    own = inputs.for_source(source)
    frame = inputs.decisions(source)
    cases = selectors.case_frame(project=own.project, with_text=True)
    criteria = selectors.criterion_frame(project=own.project, with_text=True)
    rows = frame.copy()
    rows["model"] = rows["response_id"].map(own.responses["model"])
    rows["position"] = rows["response_id"].map(own.responses["position"])
    rows["case_text"] = rows["response_id"].map(own.responses["case_id"]).map(cases["case_text"])
    rows["criterion_text"] = rows["criterion_id"].map(criteria["criterion_text"])
    rows["criterion_position"] = rows["criterion_id"].map(criteria["criterion_position"])
    return rows.sort_values(["position", "response_id", "criterion_position", "criterion_id"], kind="stable").reset_index(
        drop=True
    )


def _aligned_pairs(inputs: ReportInputs, a, b) -> tuple[pd.DataFrame, int, int]:
    left, right = _text_rows(inputs, a), _text_rows(inputs, b)
    alignment = metrics.align_rows(left, right)
    la = left.iloc[alignment.pairs["left_row"].to_numpy()].reset_index(drop=True)
    rb = right.iloc[alignment.pairs["right_row"].to_numpy()].reset_index(drop=True)
    merged = la[["response_id", "criterion_id", *PAIR_COLUMNS, "n"]].add_suffix("_a")
    merged = merged.rename(columns={"response_id_a": "response_id", "criterion_id_a": "criterion_id", "n_a": "n"})
    for column in PAIR_COLUMNS:
        merged[f"{column}_b"] = rb[column].to_numpy()
    matched = merged["response_id"].nunique()
    unmatched_a = left["response_id"].nunique() - matched
    unmatched_b = right["response_id"].nunique() - rb["response_id"].nunique()
    return merged, matched, unmatched_a + unmatched_b


def aligned_decisions(*, inputs: ReportInputs, a, b) -> tuple[pd.DataFrame, int, int]:
    """Paired decisions of A and B (columns ``*_a`` / ``*_b``) joined with A's model, case,
    criterion kind and weight; plus matched and unmatched response counts."""
    if a.project.pk == b.project.pk:
        merged, matched, unmatched = _local_pairs(inputs, a, b)
    else:
        merged, matched, unmatched = _aligned_pairs(inputs, a, b)
    own = inputs.for_source(a)
    merged["model"] = mapped_column(merged["response_id"], own.responses["model"])
    merged["case_id"] = merged["response_id"].map(own.responses["case_id"])
    merged["kind"] = mapped_column(merged["criterion_id"], own.criteria["kind"])
    merged["weight"] = merged["criterion_id"].map(own.criteria["weight"]).astype(float)
    return merged, matched, unmatched


def binary_pairs(merged: pd.DataFrame, *, strategy) -> tuple[pd.DataFrame, dict]:
    """0/1 columns ``a`` and ``b`` for the binary pairs kept under ``strategy``, with
    unresolved decisions turned into disagreements; plus counts for the report."""
    rows = merged[merged["kind"] == "binary"]
    penalty = (rows["weight"] < 0).to_numpy()
    ra = metrics.apply_cannot_assess(rows["verdict_a"], strategy=strategy, penalty=penalty)
    rb = metrics.apply_cannot_assess(rows["verdict_b"], strategy=strategy, penalty=penalty)
    ua = rows["unresolved_a"].to_numpy(dtype=bool)
    ub = rows["unresolved_b"].to_numpy(dtype=bool)
    a, b = ra.values.astype(np.int8), rb.values.astype(np.int8)
    a_fixed = np.where(ua & ~ub, 1 - b, np.where(ua & ub, 1, a))
    b_fixed = np.where(ub & ~ua, 1 - a, np.where(ua & ub, 0, b))
    keep = ra.keep & rb.keep
    pairs = pd.DataFrame(
        {
            "response_id": rows["response_id"].to_numpy()[keep],
            "criterion_id": rows["criterion_id"].to_numpy()[keep],
            "model": object_column(rows["model"].to_numpy(dtype=object)[keep]),
            "case": rows["case_id"].to_numpy()[keep],
            "a": a_fixed[keep],
            "b": b_fixed[keep],
        }
    )
    counts = {
        "n_binary_aligned": int(len(rows)),
        "invalid_b": int(rows["invalid_b"].sum()),
        "unresolved_a": int(ua.sum()),
        "unresolved_b": int(ub.sum()),
        "cannot_assess_a": ra.n_cannot_assess,
        "cannot_assess_b": rb.n_cannot_assess,
        "skipped": int((~keep).sum()),
    }
    return pairs, counts


def agreement_pairs(*, inputs: ReportInputs, a, b, strategy) -> list[dict]:
    """The paired decisions behind an agreement figure, one dict per aligned (response, criterion):
    external ids (A's), each side's decision in bundle form with ``unresolved`` and ``invalid``,
    and for binary criteria the 0/1 each side counts as under ``strategy`` (None when skipped)."""
    strategy = metrics.parse_strategy(strategy)
    merged, _, _ = aligned_decisions(inputs=inputs, a=a, b=b)
    pairs, _ = binary_pairs(merged, strategy=strategy)
    counted = {(r, c): (int(x), int(y)) for r, c, x, y in zip(pairs["response_id"], pairs["criterion_id"], pairs["a"], pairs["b"])}
    own = inputs.for_source(a)
    response_ids, criterion_ids = own.responses["external_id"], own.criteria["criterion_external_id"]
    out = []
    for row in merged.sort_values(["response_id", "criterion_id"]).to_dict("records"):
        key = (row["response_id"], row["criterion_id"])
        sides = {}
        for side in ("a", "b"):
            decision = metrics.SourceDecision.from_row({k: row[f"{k}_{side}"] for k in PAIR_COLUMNS})
            sides[side] = {**decision.fields(), "unresolved": decision.unresolved, "invalid": decision.invalid}
        binary = counted.get(key)
        out.append({
            "response_id": str(response_ids[key[0]]), "criterion_id": str(criterion_ids[key[1]]), "kind": row["kind"],
            "a": sides["a"], "b": sides["b"],
            "a_binary": binary[0] if binary else None, "b_binary": binary[1] if binary else None,
        })
    return out


def _option_index(values: np.ndarray, grids: list) -> np.ndarray:
    out = np.full(len(values), -1, dtype=np.int64)
    for i, (value, grid) in enumerate(zip(values, grids)):
        if grid and not np.isnan(value):
            out[i] = int(np.argmin(np.abs(np.asarray(grid) - value)))
    return out


def ordinal_summary(merged: pd.DataFrame, *, criteria: pd.DataFrame) -> dict:
    rows = merged[(merged["kind"] == "ordinal") & merged["value_a"].notna() & merged["value_b"].notna()]
    na = criteria["na_labels"]
    if len(rows):
        keep = [
            (oa is None or oa not in na[c]) and (ob is None or ob not in na[c])
            for oa, ob, c in zip(rows["option_a"], rows["option_b"], rows["criterion_id"])
        ]
        rows = rows[keep]
    if not len(rows):
        return {"n": 0, "qwk": None, "exact": None, "adjacent": None}
    grids = rows["criterion_id"].map(criteria["option_values"]).tolist()
    ia = _option_index(rows["value_a"].to_numpy(dtype=float), grids)
    ib = _option_index(rows["value_b"].to_numpy(dtype=float), grids)
    levels = max(len(g) for g in grids)
    result = metrics.ordinal_agreement(ia, ib, option_values=np.arange(max(levels, 2)))
    return {"n": result.n, "qwk": as_number(result.qwk), "exact": as_number(result.exact), "adjacent": as_number(result.adjacent)}


def agreement_compute(*, inputs: ReportInputs, a, b, strategy: str = "zero", ci: bool = False) -> dict:
    """The ``agreement`` result: ``summary`` (the SPEC §5 keys and ``criteria_compared``) and, for the
    report page, ``detail`` (counts, strategy) and ``case_table`` (every (model, case))."""
    strategy = metrics.parse_strategy(strategy)
    merged, matched, unmatched = aligned_decisions(inputs=inputs, a=a, b=b)
    pairs, counts = binary_pairs(merged, strategy=strategy)
    pooled = metrics.binary_agreement(pairs["a"].to_numpy(), pairs["b"].to_numpy())
    alpha = metrics.krippendorff_alpha(np.vstack([pairs["a"].to_numpy(), pairs["b"].to_numpy()]).astype(float)) if len(pairs) else None
    threshold = float(inputs.for_source(a).project.low_agreement_threshold)
    cases = metrics.case_level_mf1(pairs, keys=("model", "case"), threshold=threshold)
    by_model = metrics.mf1_by_group(pairs, by="model") if len(pairs) else {}
    summary = {
        "n_decisions": pooled.n,
        "matched_responses": int(matched),
        "unmatched_responses": int(unmatched),
        "mf1": as_number(pooled.mf1),
        "f1_met": as_number(pooled.f1_met),
        "f1_not_met": as_number(pooled.f1_not_met),
        "cohen_kappa": as_number(pooled.cohen_kappa),
        "krippendorff_alpha": as_number(alpha),
        "percent_agreement": as_number(pooled.percent_agreement),
        "positive_rate_a": as_number(pooled.positive_rate_a),
        "positive_rate_b": as_number(pooled.positive_rate_b),
        "invalid_b": counts["invalid_b"],
        "by_model": {str(m): {"mf1": as_number(r.mf1), "n_decisions": r.n, **_rater_counts(inputs, a, "a", m),
                              **_rater_counts(inputs, b, "b", m)} for m, r in by_model.items()},
        "case_level": {
            "n": cases.n, "n_undefined": cases.n_undefined, "mean": as_number(cases.mean),
            "median": as_number(cases.median), "q25": as_number(cases.q25), "q75": as_number(cases.q75),
            "share_below_0_6": as_number(cases.share_below),
        },
        "ordinal": ordinal_summary(merged, criteria=inputs.for_source(a).criteria),
        # only the criteria both sources decide are compared; ``left_out.criteria_not_decided`` says how many
        # criteria each leaves undecided (a calibrated judge decides its one criterion, nothing else)
        "criteria_compared": int(merged["criterion_id"].nunique()),
    }
    panel = panel_summary(inputs=inputs, source=b, ci=ci)
    if panel is not None:  # B is a panel: its members' agreement and votes (issue 14)
        summary["panel"] = panel
    if ci:  # intervals on request (issue 14): the mean case-level MF1, resampling cases
        groups = cases.per_group
        interval = metrics.case_bootstrap_mean_ci(groups["mf1"].to_numpy(dtype=float), groups["case"].to_numpy()) if len(groups) else None
        summary["case_level"]["mean_ci"] = interval_pair(interval)
    by_model_detail = {
        str(m): {"n": r.n, "mf1": as_number(r.mf1), "cohen_kappa": as_number(r.cohen_kappa),
                 "positive_rate_a": as_number(r.positive_rate_a), "positive_rate_b": as_number(r.positive_rate_b)}
        for m, r in by_model.items()
    }
    return {
        "a": a.spec, "b": b.spec, "strategy": strategy.value, "threshold": threshold,
        "summary": summary,
        "detail": {**counts, "tp": pooled.tp, "fp": pooled.fp, "fn": pooled.fn, "tn": pooled.tn, "by_model": by_model_detail},
        "case_table": _case_table(cases.per_group, inputs.for_source(a)),
    }


def _rater_counts(inputs: ReportInputs, source, side: str, model) -> dict:
    """For a cohort: how many of its annotators and checkers labelled responses of ``model``
    (ClinConsensus Table 3), as ``annotators_<side>`` and ``checkers_<side>``; nothing otherwise."""
    if source.kind != "cohort":
        return {}
    own = inputs.for_source(source)
    key = ("rater_counts", source.spec)
    if key not in own.__dict__:
        counted = selectors.label_rater_counts(rows=own.cohort_rows(source.obj), responses=own.responses)
        own.__dict__[key] = {m: {role: int(n) for mm, role, n in counted.itertuples(index=False) if mm == m}
                             for m in counted["model"].unique()}
    counts = own.__dict__[key].get(model, {})
    return {f"annotators_{side}": counts.get("annotator", 0), f"checkers_{side}": counts.get("checker", 0)}


def _case_table(per_group: pd.DataFrame, inputs: ReportInputs) -> dict:
    """Case-level MF1 rows: the model, the case's public id, the public id of a response of that
    (model, case), n and MF1 (database ids never leave the site's own links)."""
    columns = ["model", "case_id", "response_id", "n", "mf1"]
    if per_group.empty:
        return {"columns": columns, "rows": []}
    responses = inputs.responses.reset_index()
    first = responses.drop_duplicates(["model", "case_id"])[["model", "case_id", "response_id", "external_id"]]
    table = per_group[["model", "case", "n", "mf1"]].merge(
        first.rename(columns={"case_id": "case"}), on=["model", "case"], how="left"
    )
    table["case_ext"] = table["case"].map(inputs.cases["case_external_id"])
    mf1 = table["mf1"].to_numpy(dtype=float)
    # Column by column (a full-scale study has 27,500 rows per comparison): the same values as
    # ``as_number`` row by row, None for an undefined MF1.
    columns_out = (list(map(str, table["model"])), list(map(str, table["case_ext"])),
                   list(map(str, table["external_id"].fillna(""))), table["n"].astype(np.int64).tolist(),
                   np.where(np.isnan(mf1), None, mf1).tolist())
    return {"columns": columns, "rows": [list(row) for row in zip(*columns_out)]}


# --- the page -------------------------------------------------------------------------------

HISTOGRAM_BINS = 10
COMPARISON_COLUMNS = ["a", "b", "kind", "n_decisions", "mf1", "f1_met", "f1_not_met", "cohen_kappa", "krippendorff_alpha",
                      "percent_agreement", "positive_rate_a", "positive_rate_b", "invalid_b", "matched_responses",
                      "unmatched_responses", "case_n", "share_below"]


def comparisons(project: Project, inputs: ReportInputs, strategy: str, ci: bool = False) -> list[dict]:
    """Cohort vs cohort, each judge vs each cohort, and each judge vs gold; with ``ci``, each one's
    mean case-level MF1 with its bootstrap 95% interval resampling cases (``case_mean``, ``case_mean_ci``)."""
    sources = project_sources(project=project)
    cohorts, judges = sources["cohorts"], sources["judges"]
    pairs = [(a, b, "human-human") for i, a in enumerate(cohorts) for b in cohorts[i + 1:]]
    pairs += [(c, j, "judge-cohort") for j in judges for c in cohorts]
    if cohorts:  # gold is derived from the cohorts (and adjudications)
        pairs += [(sources["gold"][0], j, "judge-gold") for j in judges]
    rows = []
    for a, b, kind in pairs:
        s = AGREEMENT.run(project=project, a=a, b=b, strategy=strategy, inputs=inputs, ci=ci)["summary"]
        row = {"a": a.spec, "b": b.spec, "kind": kind, **{k: s[k] for k in (
            "n_decisions", "mf1", "f1_met", "f1_not_met", "cohen_kappa", "krippendorff_alpha", "percent_agreement",
            "positive_rate_a", "positive_rate_b", "invalid_b", "matched_responses", "unmatched_responses")},
            "case_n": s["case_level"]["n"], "share_below": s["case_level"]["share_below_0_6"]}
        if ci:
            row.update(case_mean=s["case_level"]["mean"], case_mean_ci=s["case_level"].get("mean_ci"))
        rows.append(row)
    return rows


def comparison_table(rows: list[dict], ci: bool = False) -> dict:
    """The comparisons as a table; with ``ci``, the mean case-level MF1 and its 95% interval after them."""
    columns = COMPARISON_COLUMNS + (["case_mean", "case_mean 95% CI"] if ci else [])
    return report_table(columns, [[r[c] for c in COMPARISON_COLUMNS]
                                  + ([r["case_mean"], interval_text(r["case_mean_ci"])] if ci else []) for r in rows])


def _comparison_completed(compared: list[dict], *, a: str | None, b: str | None) -> tuple[str | None, str | None]:
    """The comparison shown in depth when one side or none is named: the first comparison with the
    named side in its place, else the named side against the first other source compared."""
    for row in compared:
        if a in (None, row["a"]) and b in (None, row["b"]):
            return row["a"], row["b"]
    named = a or b
    others = [s for row in compared for s in (row["a"], row["b"]) if s != named]
    if named is None or not others:
        return a, b
    return (named, others[0]) if a else (others[0], named)


def agreement_page(*, project: Project, a: str | None = None, b: str | None = None, strategy: str = "zero",
                   ci: bool = False) -> dict:
    """Every comparison and one in depth; with ``ci`` (the "95% intervals" toggle), each mean
    case-level MF1 with its bootstrap 95% interval resampling cases, and a panel's mean agreement with its own."""
    inputs = ReportInputs(project)
    compared = comparisons(project, inputs, strategy, ci=ci)
    human = [r for r in compared if r["kind"] == "human-human"]
    result = {"strategy": strategy, "ci": ci, "comparisons": compared, "reference_mf1": human[0]["mf1"] if human else None,
              "tables": {"comparisons": comparison_table(compared, ci=ci)}, "primary": None}
    if a is None or b is None:
        a, b = _comparison_completed(compared, a=a, b=b)
        if a is None or b is None:
            return result
    primary = AGREEMENT.run(project=project, a=source_parse(text=a, project=project),
                            b=source_parse(text=b, project=project), strategy=strategy, inputs=inputs, ci=ci)
    case_table = primary["case_table"]
    defined = [row for row in case_table["rows"] if row[-1] is not None]
    mf1 = np.array([row[-1] for row in defined], dtype=float)
    counts, edges = np.histogram(mf1, bins=HISTOGRAM_BINS, range=(0.0, 1.0))
    threshold = primary["threshold"]
    tail = sorted((row for row in case_table["rows"] if row[-1] is not None and row[-1] < threshold),
                  key=lambda r: (r[-1], r[0], r[1]))
    by_model = primary["detail"]["by_model"]
    result.update(
        primary={k: primary[k] for k in ("a", "b", "strategy", "threshold", "summary", "detail")},
        histogram={"counts": counts.tolist(), "edges": edges.tolist(), "n": int(mf1.size),
                   "n_undefined": primary["summary"]["case_level"]["n_undefined"],
                   "mean_ci95": primary["summary"]["case_level"].get("mean_ci")},
        tail=tail,
    )
    result["tables"].update(
        by_model=report_table(["model", "n", "mf1", "cohen_kappa", "positive_rate_a", "positive_rate_b"],
                              [[m, v["n"], v["mf1"], v["cohen_kappa"], v["positive_rate_a"], v["positive_rate_b"]]
                               for m, v in by_model.items()]),
        case_level=case_table,
        low_agreement=report_table(case_table["columns"], tail),
    )
    return result


TAIL_SHOWN = 200  # rows of the low-agreement tail on the page (the CSV has them all)


def agreement_links(result: dict, project: Project) -> dict:
    """The database ids of the responses in the shown tail, for the page's links only."""
    shown = [row[2] for row in (result.get("tail") or [])[:TAIL_SHOWN]]
    return selectors.response_links(project=project, external_ids=shown)


def agreement_charts(result: dict, project: Project) -> dict:
    compared = result["comparisons"]
    out = {}
    if compared:
        n = sum(c["n_decisions"] for c in compared)
        out["mf1"] = charts.bar_chart(
            title=f"MF1 per comparison (n = {n:,} paired decisions over {len(compared)} comparisons)",
            labels=[f"{c['b']} vs {c['a']}" for c in compared], series=[("MF1", [c["mf1"] for c in compared])],
            value_title="MF1 (macro F1 of met / not met)", label_title="comparison", n=[c["n_decisions"] for c in compared],
            reference=("human–human", result["reference_mf1"]) if result["reference_mf1"] is not None else None,
        )
    if result.get("histogram"):
        h = result["histogram"]
        out["histogram"] = charts.histogram(
            title=f"Case-level MF1 (n = {h['n']:,} (model, case) groups; {h['n_undefined']} undefined)",
            counts=h["counts"], edges=h["edges"], threshold=result["primary"]["threshold"],
            value_title="case-level MF1", count_title="(model, case) groups",
        )
        by_model = result["primary"]["detail"]["by_model"]
        out["by_model"] = charts.bar_chart(
            title=f"MF1 per model, {result['primary']['b']} vs {result['primary']['a']} "
                  f"(n = {sum(v['n'] for v in by_model.values()):,})",
            labels=list(by_model), series=[("MF1", [v["mf1"] for v in by_model.values()])],
            value_title="MF1", label_title="model", n=[v["n"] for v in by_model.values()],
        )
    return out


# --- the declaration ------------------------------------------------------------------------

class AgreementParams(Params):
    a = SourceField(help_text="reference source: cohort:NAME, judge:NAME or gold")
    b = SourceField(help_text="compared source; [OTHER-PROJECT:]cohort:NAME, judge:NAME or gold")
    cannot_assess = StrategyField(source="strategy", default="zero", help_text="skip | zero | partial | fail (default zero)")


class AgreementPageParams(Params):
    a = SourceField(spec=True, required=False, allow_null=True, default=None)
    b = SourceField(spec=True, required=False, allow_null=True, default=None)
    strategy = StrategyField(default="zero")
    ci = Flag()

    def validate(self, attrs):  # a side left empty is chosen by the page (``agreement_page``)
        return {k: v for k, v in attrs.items() if k not in ("a", "b") or v}


def agreement_output(result: dict, params: dict) -> dict:
    return result["summary"]  # with what every report states (``Report.printed``): the strategy, what was left out


AGREEMENT = register(Report(
    key="agreement", title="Agreement",
    help="MF1, kappa, alpha and the case-level MF1 distribution of source B against reference A.",
    params=AgreementParams, compute=agreement_compute, output=agreement_output,
    page=Page(params=AgreementPageParams, build=agreement_page, template="grading/reports/agreement.html",
              charts=agreement_charts, links=agreement_links, position=10),
))
