"""HealthBench's pairwise physician protocol on a cohort (SPEC §3 "Pairwise rater agreement";
the ``pairwise_agreement`` command; issue 14, point 2): the cohort's annotators' own binary labels
(cannot assess left out; checkers are reviewers, not raters here), each annotator against every
other annotator of the same items, and a grader (any source: its decision per item) against every
individual label; pooled, per tag (criterion category) and per theme (the part of a tag before
its first ``:``, the n-weighted mean of its tags' figures).
"""
import pandas as pd
from rest_framework import serializers

from annotation.vocabulary import MET, NOT_MET
from grading import metrics
from grading.sources import project_sources, source_parse

from . import charts
from .glossary import worded_table
from .inputs import ReportInputs, as_number, interval_pair, interval_text
from .registry import Flag, Page, Params, Report, SourceField, choice, register


def _labels(inputs: ReportInputs, cohort) -> pd.DataFrame:
    criteria = inputs.criteria
    rows = inputs.expert_rows(cohort.obj)
    rows = rows[(rows["criterion_id"].map(criteria["kind"]) == "binary") & rows["verdict"].isin([MET, NOT_MET])]
    users = dict(cohort.obj.memberships.values_list("user_id", "user__username"))
    return pd.DataFrame({"item": list(zip(rows["response_id"], rows["criterion_id"])),
                         "rater": rows["rater"].map(lambda u: users.get(u, str(u))).to_numpy(),
                         "value": (rows["verdict"] == MET).astype(int).to_numpy(),
                         "criterion_id": rows["criterion_id"].to_numpy(),
                         "case": rows["response_id"].map(inputs.responses["case_id"]).to_numpy()})


def _grader(inputs: ReportInputs, source) -> pd.Series:
    frame = inputs.decisions(source)
    frame = frame[(frame["criterion_id"].map(inputs.criteria["kind"]) == "binary") & frame["verdict"].isin([MET, NOT_MET])]
    return pd.Series((frame["verdict"] == MET).astype(int).to_numpy(),
                     index=pd.Index(list(zip(frame["response_id"], frame["criterion_id"]))))


def _clean(figures: dict, intervals: dict | None = None) -> dict:
    out = {"annotators": {r: {"mf1": as_number(f["mf1"]), "n": f["n"]} for r, f in figures["annotators"].items()},
           "weighted_mean_mf1": as_number(figures["weighted_mean_mf1"])}
    if intervals is not None:
        out["weighted_mean_mf1_ci"] = interval_pair(intervals["weighted_mean_mf1"])
    if figures["grader"] is not None:
        g = figures["grader"]
        out["grader"] = {"mf1": as_number(g["mf1"]), "n": g["n"], "percentile": as_number(g["percentile"]),
                         **({"mf1_ci": interval_pair(intervals["grader_mf1"])} if intervals is not None else {})}
    return out


def pairwise_compute(*, inputs: ReportInputs, source, grader=None, by: str | None = None, min_n: int = 50,
                     ci: bool = False) -> dict:
    """With ``ci``, bootstrap 95% intervals resampling cases (``metrics.pairwise_intervals``) of the
    n-weighted mean annotator MF1 and the grader's MF1, pooled and per tag."""
    if source.kind != "cohort":
        raise ValueError(f"{source.spec} is not a cohort: the pairwise protocol compares a cohort's annotators")
    if by not in (None, "tag"):
        raise ValueError(f"unknown grouping {by!r}; use tag")
    labels = _labels(inputs, source)
    decided = _grader(inputs, grader) if grader is not None else None
    pooled = metrics.pairwise_agreement(labels, decided, min_n=min_n)

    def intervals(part):
        return metrics.pairwise_intervals(part, decided, min_n=min_n) if ci else None

    out = {"source": source.spec, "grader_source": grader.spec if grader is not None else None, "min_n": min_n,
           **_clean(pooled, intervals(labels))}
    if by == "tag":
        tags = inputs.criteria["tags"]
        by_tag, themes = {}, {}
        for tag in sorted({t for c in labels["criterion_id"].unique() for t in tags[c]}):
            part = labels[labels["criterion_id"].map(lambda c, tag=tag: tag in tags[c])]
            figures = metrics.pairwise_agreement(part, decided, min_n=min_n)
            by_tag[tag] = _clean(figures, intervals(part))
            theme = themes.setdefault(tag.split(":", 1)[0], {"mf1": [], "grader": []})
            if figures["weighted_mean_mf1"] is not None:
                theme["mf1"].append((figures["weighted_mean_mf1"], figures["n_included"]))
            if figures["grader"] and figures["grader"]["mf1"] is not None:
                theme["grader"].append((figures["grader"]["mf1"], figures["grader"]["n"]))

        def weighted(values):
            total = sum(n for _, n in values)
            return as_number(sum(v * n for v, n in values) / total) if total else None

        out["by_tag"] = by_tag
        out["by_theme"] = {name: {"weighted_mean_mf1": weighted(t["mf1"]), "grader_mf1": weighted(t["grader"])}
                           for name, t in sorted(themes.items())}
    return out


class PairwiseParams(Params):
    source = SourceField(kinds=("cohort",), help_text="cohort:NAME",
                         wrong_kind="{spec} is not a cohort: the pairwise protocol compares a cohort's annotators")
    grader = SourceField(required=False, allow_null=True, default=None,
                         help_text="a source placed among the annotators, e.g. judge:NAME")
    by = choice(["tag"], what="grouping", required=False, allow_null=True, default=None)
    min_n = serializers.IntegerField(default=50, min_value=0, error_messages={"min_value": "--min-n must be 0 or more"},
                                     help_text="annotators with this many pairs or fewer are left out")


def pairwise_output(result: dict, params: dict) -> dict:
    keys = ["min_n", "annotators", "weighted_mean_mf1", "source", "n_excluded_cases", "n_draft_labels"]
    keys += ["weighted_mean_mf1_ci"] if params.get("ci") else []
    keys += ["grader"] if params.get("grader") else []
    keys += ["by_tag", "by_theme"] if params.get("by") else []
    return {key: result[key] for key in keys}


# --- the page -------------------------------------------------------------------------------

def _included(figures: dict, min_n: int) -> bool:
    return metrics.annotator_included(figures, min_n=min_n)


def pairwise_page(*, project, source: str | None = None, grader: str | None = None, min_n: int = 50,
                  ci: bool = False) -> dict:
    """The page: each annotator's MF1 against the others, their n-weighted mean and a grader's MF1
    and percentile among them, pooled and per theme and tag. Defaults: the first cohort, graded by
    the first judge (``grader="none"``: no grader)."""
    sources = project_sources(project=project)
    cohorts = [c.spec for c in sources["cohorts"]]
    if not cohorts:
        return {"empty": "no_cohort", "cohorts": [], "tables": {}}
    source = source or cohorts[0]
    if grader == "none":
        grader = None
    else:
        grader = grader or next((j.spec for j in sources["judges"]), None)
    result = PAIRWISE_AGREEMENT.run(
        project=project, source=source_parse(text=source, project=project),
        grader=source_parse(text=grader, project=project) if grader else None, by="tag", min_n=min_n, ci=ci)
    annotators = result["annotators"]
    g = result.get("grader")
    summary = [["annotators", result["weighted_mean_mf1"], sum(f["n"] for f in annotators.values() if _included(f, min_n)),
                *([interval_text(result.get("weighted_mean_mf1_ci"))] if ci else []), None]]
    if g is not None:
        summary.append([f"grader {grader}", g["mf1"], g["n"], *([interval_text(g.get("mf1_ci"))] if ci else []),
                        g["percentile"]])
    tags = []
    for tag, figures in result["by_tag"].items():
        tg = figures.get("grader") or {}
        tags.append([tag, figures["weighted_mean_mf1"], sum(1 for f in figures["annotators"].values() if _included(f, min_n)),
                     *([interval_text(figures.get("weighted_mean_mf1_ci"))] if ci else []),
                     tg.get("mf1"), tg.get("n"), tg.get("percentile")])
    return {
        "source": source, "grader": grader, "cohorts": cohorts, "min_n": min_n, "ci": ci,
        "annotators": annotators, "weighted_mean_mf1": result["weighted_mean_mf1"], "grader_figures": g,
        "by_theme": result["by_theme"],
        "n_included": sum(1 for f in annotators.values() if _included(f, min_n)),
        "tables": {
            "annotators": worded_table(
                ["annotator", "n_pairs", "annotator_mf1", "included"],
                [[name, f["n"], f["mf1"], "yes" if _included(f, min_n) else "no"] for name, f in annotators.items()]),
            "summary": worded_table(
                ["who", "mf1", "n_pairs", *(["mf1 95% CI"] if ci else []), "percentile"], summary),
            "by_theme": worded_table(
                ["theme", "weighted_mean_mf1", "grader_mf1"],
                [[name, t["weighted_mean_mf1"], t["grader_mf1"]] for name, t in result["by_theme"].items()]),
            "by_tag": worded_table(
                ["tag", "weighted_mean_mf1", "included", *(["weighted_mean_mf1 95% CI"] if ci else []),
                 "grader_mf1", "grader_n", "percentile"], tags, words={"included": "Annotators in the mean"}),
        },
    }


def pairwise_charts(result: dict, project) -> dict:
    """Each annotator's MF1 with the grader's as the line, and per theme the annotators' mean MF1
    beside the grader's."""
    annotators = result.get("annotators") or {}
    if not annotators:
        return {}
    g = result.get("grader_figures")
    names = list(annotators)
    labels = [name if _included(annotators[name], result["min_n"]) else f"{name} (left out: {annotators[name]['n']} pairs)"
              for name in names]
    n = sum(f["n"] for f in annotators.values())
    out = {"annotators": charts.bar_chart(
        title=f"Each annotator's MF1 against the other annotators of {result['source']} (n = {n:,} pairs)"
              + (f", with the grader {result['grader']}" if g else ""),
        labels=labels, series=[("annotator's MF1", [annotators[a]["mf1"] for a in names])],
        n=[annotators[a]["n"] for a in names],
        reference=(f"grader {result['grader']}", g["mf1"]) if g and g["mf1"] is not None else None,
        value_title="MF1 (macro F1 of met / not met)", label_title="annotator")}
    themes = result.get("by_theme") or {}
    if themes:
        series = [("annotators' mean MF1", [t["weighted_mean_mf1"] for t in themes.values()])]
        if g:
            series.append((f"grader {result['grader']}", [t["grader_mf1"] for t in themes.values()]))
        out["themes"] = charts.bar_chart(
            title=f"MF1 per theme of the criteria's tags, {result['source']}", labels=list(themes), series=series,
            value_title="MF1 (macro F1 of met / not met)", label_title="theme")
    return out


class GraderField(SourceField):
    """A grader's source, or "none" for no grader (the page's default is the first judge)."""

    def to_internal_value(self, data):
        return "none" if str(data).strip().lower() == "none" else super().to_internal_value(data)


class PairwisePageParams(Params):
    source = SourceField(spec=True, required=False, allow_null=True, default=None, help_text="cohort:NAME")
    grader = GraderField(spec=True, required=False, allow_null=True, default=None,
                         help_text="a source placed among the annotators, or none (default: the first judge)")
    min_n = serializers.IntegerField(default=50, min_value=0, error_messages={
        "min_value": "the minimum of pairs must be 0 or more", "invalid": "the minimum of pairs must be a whole number"})
    ci = Flag()


PAIRWISE_AGREEMENT = register(Report(
    key="pairwise_agreement", title="Pairwise rater agreement",
    help="Each annotator against every other (pairs pooled), and a grader's percentile among them.",
    params=PairwiseParams, compute=pairwise_compute, output=pairwise_output, cannot_assess="skip",
    page=Page(key="pairwise", params=PairwisePageParams, build=pairwise_page, template="grading/reports/pairwise.html",
              charts=pairwise_charts, title="Pairwise agreement", position=91),
))
