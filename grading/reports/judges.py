"""The judges page (issue 3, point 5): each judge's fidelity (MF1 against each cohort and gold, with
the human–human MF1 as the reference line), positive rates, Monte Carlo stability, cross-grader
robustness against each cohort, rubric-variant robustness and each panel's votes. A page of its
own: it composes the agreement report (``agreement.AGREEMENT``) with the judge analytics it adds,
and has no command.
"""
from annotation.models import Project
from annotation.vocabulary import MET
from grading import metrics
from grading.sources import project_sources

from . import charts
from .agreement import aligned_decisions, binary_pairs, comparison_table, comparisons, ordinal_summary
from .inputs import ReportInputs, as_number, ci_columns, interval_pair, interval_text, report_table
from .panels import panel_summary
from .registry import Flag, Page, Params, Report, StrategyField, register
from .stability import KINDS as STABILITY_KINDS
from .stability import by_kind as stability_by_kind
from .stability import sample_values as stability_values


def _variant_rows(judges: list, cohorts: list, compared: list[dict], inputs: ReportInputs) -> list[list]:
    """Rubric-perturbation robustness: each judge run on a rubric variant beside its original,
    MF1 (binary) and QWK (ordinal) against each cohort."""
    by_name = {j.name: j for j in judges}
    mf1 = {(r["a"], r["b"]): (r["mf1"], r["n_decisions"]) for r in compared}
    variants = [j for j in judges if j.obj.typed_settings.variant_of in by_name]
    rows = []
    for base in sorted({j.obj.typed_settings.variant_of for j in variants}):
        family = [by_name[base]] + sorted((j for j in variants if j.obj.typed_settings.variant_of == base), key=lambda j: j.name)
        for judge in family:
            for cohort in cohorts:
                merged, _, _ = aligned_decisions(inputs=inputs, a=cohort, b=judge)
                ordinal = ordinal_summary(merged, criteria=inputs.criteria)
                qwk, n_ordinal = ordinal["qwk"], ordinal["n"]
                value, n_binary = mf1.get((cohort.spec, judge.spec), (None, 0))
                rows.append([base, judge.obj.typed_settings.variant or "as written", judge.spec, cohort.spec,
                             value, n_binary, qwk, n_ordinal])
    return rows


def _fidelity_by_cohort(fidelity: list[dict], cohorts: list, judges: list) -> dict:
    """Judge fidelity as ClinConsensus reports it: each judge's MF1 against each cohort and their average."""
    mf1 = {(r["a"], r["b"]): r["mf1"] for r in fidelity if r["kind"] == "judge-cohort"}
    rows = []
    for judge in judges:
        values = [mf1.get((c.spec, judge.spec)) for c in cohorts]
        defined = [v for v in values if v is not None]
        rows.append([judge.spec, *values, sum(defined) / len(defined) if defined else None])
    return report_table(["judge", *[f"mf1 vs {c.spec}" for c in cohorts], "mean over cohorts"], rows)


def _panel_rows(judges: list, inputs: ReportInputs, ci: bool) -> list[list]:
    """Each panel's mean member agreement (with ``ci``, its interval) and, per criterion, how its
    members voted."""
    rows = []
    for judge in judges:
        summary = panel_summary(inputs=inputs, source=judge, ci=ci)
        if summary is None:
            continue
        for criterion, votes in summary["votes_by_criterion"].items() or [("", {})]:
            rows.append([judge.spec, summary["vote"], ", ".join(summary["members"]), summary["mean_agreement"],
                         *([interval_text(summary["mean_agreement_ci"])] if ci else []),
                         summary["n_items"], criterion, "; ".join(f"{label} {n}" for label, n in votes.items())])
    return rows


def judges_page(*, project: Project, strategy: str = "zero", ci: bool = False) -> dict:
    """With ``ci``, the means of the page carry bootstrap 95% intervals resampling cases: each
    source's positive rate, each judge's mean sd per criterion kind, each cross-grader comparison's
    mean absolute difference and each panel's mean agreement."""
    inputs = ReportInputs(project)
    sources = project_sources(project=project)
    cohorts, judges = sources["cohorts"], sources["judges"]
    compared = comparisons(project, inputs, strategy)
    human = [r for r in compared if r["kind"] == "human-human"]
    fidelity = [r for r in compared if r["kind"] != "human-human"]
    positive = []
    for source in cohorts + judges:
        frame = inputs.annotated(source)
        binary = frame[frame["kind"] == "binary"]
        rate = (binary["verdict"] == MET).mean() if len(binary) else None
        interval = []
        if ci:
            met = (binary["verdict"] == MET).to_numpy(dtype=float)
            cases = binary["response_id"].map(inputs.responses["case_id"]).to_numpy()
            interval = [interval_text(interval_pair(metrics.case_bootstrap_mean_ci(met, cases) if len(binary) else None))]
        positive.append([source.spec, int(len(binary)), as_number(rate), *interval, int(frame["invalid"].sum())])
    stability, robustness = [], []
    for judge in judges:
        if not judge.obj.kind.votes_over_members:
            rows = stability_values(inputs=inputs, judge=judge.obj)
            if len(rows):
                kinds = stability_by_kind(rows, judge.name, cases=inputs.responses["case_id"] if ci else None)
                stability.append([judge.spec, judge.obj.samples, int(rows["sample"].nunique()),
                                  sum(k["n_items"] for k in kinds.values()), sum(k["n_items_with_sd"] for k in kinds.values()),
                                  *[v for kind in STABILITY_KINDS for v in (
                                      [kinds.get(kind, {}).get("mean_sd"), interval_text(kinds.get(kind, {}).get("mean_sd_ci"))]
                                      if ci else [kinds.get(kind, {}).get("mean_sd")])]])
        for cohort in cohorts:
            merged, _, _ = aligned_decisions(inputs=inputs, a=cohort, b=judge)
            pairs, _ = binary_pairs(merged, strategy=strategy)
            if pairs.empty:
                continue
            cg = metrics.cross_grader_robustness(pairs, model="model", a="a", b="b")
            interval = [interval_text(interval_pair(metrics.cross_grader_intervals(pairs)["mean_abs_diff_pp"]))] if ci else []
            robustness.append([cohort.spec, judge.spec, cg.n_models, as_number(cg.spearman_rho), as_number(cg.kendall_tau),
                               as_number(cg.mean_abs_diff_pp), *interval, as_number(cg.top3_overlap), as_number(cg.top5_overlap)])
    return {
        "strategy": strategy, "ci": ci,
        "reference_mf1": human[0]["mf1"] if human else None,
        "reference_label": f"{human[0]['a']} vs {human[0]['b']}" if human else None,
        "fidelity": fidelity,
        "tables": {
            "fidelity": comparison_table(fidelity),
            "fidelity_by_cohort": _fidelity_by_cohort(fidelity, cohorts, judges),
            "positive_rates": report_table(ci_columns(["source", "n_binary", "positive_rate", "invalid"], {"positive_rate"}, ci),
                                     positive),
            "stability": report_table(ci_columns(["judge", "samples_configured", "samples_seen", "n_items", "n_items_with_sd",
                                             *[f"mean_sd_{kind}" for kind in STABILITY_KINDS]],
                                            {f"mean_sd_{kind}" for kind in STABILITY_KINDS}, ci), stability),
            "robustness": report_table(ci_columns(["cohort", "judge", "n_models", "spearman_rho", "kendall_tau", "mean_abs_diff_pp",
                                              "top3_overlap", "top5_overlap"], {"mean_abs_diff_pp"}, ci), robustness),
            "variants": report_table(["judge", "rubric", "source", "cohort", "mf1", "n_binary", "qwk", "n_ordinal"],
                               _variant_rows(judges, cohorts, fidelity, inputs)),
            "panels": report_table(ci_columns(["panel", "vote", "members", "mean_agreement", "n_items", "criterion", "votes"],
                                         {"mean_agreement"}, ci), _panel_rows(judges, inputs, ci)),
        },
    }


def judges_charts(result: dict, project: Project) -> dict:
    """MF1 and Cohen's κ of each judge against each reference, as two charts: the human–human MF1 is
    a line on the MF1 chart only (κ is another scale); κ's axis starts at −1 when a κ is below 0."""
    fidelity = result["fidelity"]
    if not fidelity:
        return {}
    labels, n = [f"{r['b']} vs {r['a']}" for r in fidelity], [r["n_decisions"] for r in fidelity]
    total = f"n = {sum(n):,} paired decisions"
    below_zero = any(r["cohen_kappa"] is not None and r["cohen_kappa"] < 0 for r in fidelity)
    return {
        "fidelity": charts.bar_chart(
            title=f"Judge fidelity: MF1 against each reference, with the human–human MF1 ({total})",
            labels=labels, series=[("MF1", [r["mf1"] for r in fidelity])], n=n,
            reference=("human–human", result["reference_mf1"]) if result["reference_mf1"] is not None else None,
            value_title="MF1 (macro F1 of met / not met)", label_title="judge vs reference",
        ),
        "kappa": charts.bar_chart(
            title=f"Judge fidelity: Cohen's kappa against each reference ({total})",
            labels=labels, series=[("Cohen's kappa", [r["cohen_kappa"] for r in fidelity])], n=n,
            value_title="Cohen's kappa", label_title="judge vs reference", min_value=-1.0 if below_zero else 0.0,
        ),
    }


class JudgesPageParams(Params):
    strategy = StrategyField(default="zero")
    ci = Flag()


JUDGES = register(Report(
    key="judges", title="Judges",
    page=Page(params=JudgesPageParams, build=judges_page, template="grading/reports/judges.html", charts=judges_charts,
              position=30),
))
