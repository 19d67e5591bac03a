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
from grading.selectors import expert_label_rows

from .inputs import ReportInputs, as_number, interval_pair
from .registry import Params, Report, SourceField, choice, register


def _labels(inputs: ReportInputs, cohort) -> pd.DataFrame:
    criteria = inputs.criteria
    rows = expert_label_rows(cohort=cohort.obj, criteria=criteria, response_ids=inputs.responses.index)
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
    source = SourceField(help_text="cohort:NAME")
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


PAIRWISE_AGREEMENT = register(Report(
    key="pairwise_agreement", title="Pairwise rater agreement",
    help="Each annotator against every other (pairs pooled), and a grader's percentile among them.",
    params=PairwiseParams, compute=pairwise_compute, output=pairwise_output,
))
