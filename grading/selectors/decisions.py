"""One decision per (response, criterion) for any decision source (SPEC §2), as a
"decision frame" every report reads:

``response_id``, ``criterion_id``, ``verdict`` (met / not_met / cannot_assess / None),
``option`` (option label or None), ``value`` (the option's value, an ordinal value, or
NaN), ``unresolved`` (a tie: no decision, counts as a disagreement), ``invalid`` (how many
judge outputs behind the decision were missing or malformed) and ``n`` (labels or samples
behind it).

Cohorts follow the cohort rule (checker, else single annotator, else majority, tie
unresolved); a judge's samples are combined by majority for binary and nominal criteria
(tie unresolved) and by the mean value for ordinal ones; an invalid judge output is a
not-met vote and is counted. Inside a response a judge judged, a criterion it gave no
output for is such an invalid not-met decision too, so missing output is never dropped
(SPEC §3). A "panel" judge votes over its member judges' decisions with the ensemble
rules of ``grading.metrics``.
"""
import numpy as np
import pandas as pd
from django.db.models import Case, IntegerField, Sum, Value, When

from annotation.models import Cohort, Criterion, Label, Project
from ..models import Judge, Judgment
from .cohorts import cohort_decisions, fetch_frame, gold_frame
from .frames import applicable_pairs

COLUMNS = ["response_id", "criterion_id", "verdict", "option", "value", "unresolved", "invalid", "n"]
PANEL = "panel"


def _none_for_nan(series: pd.Series) -> pd.Series:
    return series.astype(object).where(series.notna(), None)


def _option_values(frame: pd.DataFrame, criteria: pd.DataFrame) -> pd.Series:
    """The value of each row's option label (NaN where there is no option)."""
    has = frame["option"].notna()
    if not has.any():
        return pd.Series(np.nan, index=frame.index)
    lookup = {}
    for criterion_id, options in criteria.loc[criteria["options"].map(bool), "options"].items():
        for option in options:
            lookup[(criterion_id, option["label"])] = float(option["value"])
    keys = list(zip(frame.loc[has, "criterion_id"], frame.loc[has, "option"]))
    values = pd.Series(np.nan, index=frame.index)
    values[has] = [lookup.get(k, np.nan) for k in keys]
    return values


def frame_from_keys(keys: pd.DataFrame, *, criteria: pd.DataFrame) -> pd.DataFrame:
    """Decision frame from rows with response_id, criterion_id, ``decision`` key and n."""
    verdicts, options, values = {}, {}, {}
    for key in pd.unique(keys["decision"]):
        if not isinstance(key, str):
            continue
        kind, _, rest = key.partition(":")
        if kind == "v":
            verdicts[key] = rest
        elif kind == "o":
            options[key] = rest
        else:
            values[key] = float(rest)
    frame = keys[["response_id", "criterion_id"]].copy()
    frame["verdict"] = _none_for_nan(keys["decision"].map(verdicts))
    frame["option"] = _none_for_nan(keys["decision"].map(options))
    frame["value"] = keys["decision"].map(values).astype(float)
    frame["value"] = frame["value"].fillna(_option_values(frame, criteria))
    frame["unresolved"] = keys["decision"].isna().to_numpy()
    frame["invalid"] = 0
    frame["n"] = keys["n"].to_numpy() if "n" in keys.columns else 1
    return frame.reset_index(drop=True)


def cohort_frame(*, cohort: Cohort, criteria: pd.DataFrame) -> pd.DataFrame:
    decisions = cohort_decisions(project=cohort.project, cohort=cohort).rename(columns={"n_labels": "n"})
    if decisions.empty:
        return pd.DataFrame(columns=COLUMNS)
    return frame_from_keys(decisions, criteria=criteria)


def gold_decision_frame(*, project: Project, criteria: pd.DataFrame) -> pd.DataFrame:
    gold = gold_frame(project=project)
    # An unresolved gold item is one nobody has decided yet, not a decision: leave it out.
    gold = gold[gold["provenance"] != "unresolved"]
    if gold.empty:
        return pd.DataFrame(columns=COLUMNS)
    return frame_from_keys(gold.assign(n=1), criteria=criteria)


VERDICT_CODES = Case(
    When(verdict="not_met", then=Value(0)), When(verdict="met", then=Value(1)), When(verdict="cannot_assess", then=Value(2)),
    default=Value(-1), output_field=IntegerField(),
)
VERDICT_BY_CODE = np.array([None, "not_met", "met", "cannot_assess"], dtype=object)  # indexed by code + 1


def judgment_rows(*, judge: Judge, criteria: pd.DataFrame) -> pd.DataFrame:
    """Raw judgments of one judge with ``kind`` and ``invalid``; invalid binary outputs
    already turned into not-met votes. Verdicts travel as small integers, and option and
    value columns are read only when the project has non-binary criteria: at a million
    judgments the string and NULL columns are most of the cost."""
    with_options = bool((criteria["kind"] != "binary").any())
    fields = ["response_id", "criterion_id", "sample", "vcode", "valid"] + (["option_label", "value"] if with_options else [])
    qs = Judgment.objects.filter(judge=judge).annotate(vcode=VERDICT_CODES).values_list(*fields)
    rows = fetch_frame(qs, ["response_id", "criterion_id", "sample", "vcode", "valid"] + (["option", "value"] if with_options else []))
    codes = rows["vcode"].to_numpy(dtype=np.int64)
    rows["verdict"] = VERDICT_BY_CODE[codes + 1]
    if not with_options:
        rows["option"] = None
        rows["value"] = np.nan
    rows["value"] = rows["value"].astype(float)
    rows["kind"] = rows["criterion_id"].map(criteria["kind"])
    empty = (codes < 0) & rows["option"].isna().to_numpy() & rows["value"].isna().to_numpy()
    invalid = ~rows["valid"].astype(bool).to_numpy() | empty
    rows["invalid"] = invalid.astype(np.int64)
    binary = (rows["kind"] == "binary").to_numpy()
    if invalid.any():
        rows.loc[binary & invalid, "verdict"] = "not_met"
        rows.loc[~binary & invalid, ["verdict", "option"]] = None
        rows.loc[~binary & invalid, "value"] = np.nan
    if with_options:
        rows["value"] = rows["value"].fillna(_option_values(rows, criteria))
    return rows.drop(columns="vcode")


def judge_hits(*, judge: Judge) -> pd.DataFrame | None:
    """Coverage hits of a judge counted in the database: per judged response, the binary
    criteria it marked met with a valid output. Only for a judge with one sample per item
    (its decisions are then its outputs, so no vote is needed); None otherwise, and the
    caller falls back to the decision frame. At 825,000 judgments this is one grouped
    query instead of a million rows through Python."""
    if judge.backend == PANEL or Judgment.objects.filter(judge=judge, sample__gt=0).exists():
        return None
    mixed = Criterion.objects.filter(project=judge.project_id).exclude(kind="binary").exists()
    binary_met = {"criterion__kind": "binary"} if mixed else {}  # join the criteria only when it matters
    met = Case(When(valid=True, verdict="met", then=Value(1), **binary_met), default=Value(0), output_field=IntegerField())
    qs = Judgment.objects.filter(judge=judge).values("response_id").annotate(hits=Sum(met)).values_list("response_id", "hits")
    return fetch_frame(qs.order_by(), ["response_id", "hits"])


def _vote_key(rows: pd.DataFrame) -> pd.Series:
    """One string per decision for voting: the option label, else the verdict."""
    return rows["option"].where(rows["option"].notna(), rows["verdict"])


def _combine_votes(rows: pd.DataFrame, *, voter: str, rule: str, weights: dict | None, criteria) -> pd.DataFrame:
    """Combine several decisions per (response, criterion): votes for binary and nominal
    criteria, the (weighted) mean value for ordinal ones."""
    from grading.metrics import ensemble_vote  # scikit-learn & co. load only when a vote is needed

    item_cols = ["response_id", "criterion_id"]
    rows = rows.assign(_vote=_vote_key(rows))
    counts = rows.groupby(item_cols, sort=False).agg(n=(voter, "size"), invalid=("invalid", "sum")).reset_index()
    ordinal = rows["kind"] == "ordinal"
    parts = []
    voting = rows[~ordinal & rows["_vote"].notna()]
    if len(voting):
        items = voting[item_cols].drop_duplicates().reset_index(drop=True)
        items["item"] = np.arange(len(items))
        voting = voting.merge(items, on=item_cols)
        result = ensemble_vote(
            voting, rule=rule, item="item", voter=voter, vote="_vote", weights=weights, positive="met", negative="not_met"
        )
        items["_vote"] = items["item"].map(result.decisions)
        parts.append(items.drop(columns="item"))
    ordinal_rows = rows[ordinal]
    if len(ordinal_rows):
        valued = ordinal_rows[ordinal_rows["value"].notna()]
        if weights:
            w = valued[voter].map(weights).astype(float)
            mean = (valued["value"] * w).groupby([valued["response_id"], valued["criterion_id"]]).sum() / w.groupby(
                [valued["response_id"], valued["criterion_id"]]
            ).sum()
        else:
            mean = valued.groupby(item_cols)["value"].mean()
        cannot = ordinal_rows.assign(_ca=ordinal_rows["verdict"].eq("cannot_assess")).groupby(item_cols)["_ca"].any()
        items = ordinal_rows[item_cols].drop_duplicates()
        items = items.merge(mean.rename("_mean").reset_index(), on=item_cols, how="left")
        items = items.merge(cannot.reset_index(), on=item_cols, how="left")
        items["_vote"] = np.where(items["_mean"].isna() & items["_ca"], "cannot_assess", None)
        items = items.drop(columns="_ca")
        parts.append(items)
    combined = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[*item_cols, "_vote", "_mean"])
    if "_mean" not in combined.columns:
        combined["_mean"] = np.nan
    combined = combined.merge(counts, on=item_cols, how="left")
    return _frame_from_votes(combined, criteria)


def _frame_from_votes(combined: pd.DataFrame, criteria: pd.DataFrame) -> pd.DataFrame:
    """Decision frame from item rows with ``_vote`` (label or verdict), ``_mean``, n, invalid."""
    kind = combined["criterion_id"].map(criteria["kind"])
    vote = combined["_vote"]
    is_verdict = vote.isin(["met", "not_met", "cannot_assess"])
    frame = combined[["response_id", "criterion_id"]].copy()
    frame["verdict"] = _none_for_nan(vote.where(is_verdict))
    frame["option"] = _none_for_nan(vote.where(vote.notna() & ~is_verdict & (kind != "binary")))
    frame["value"] = combined["_mean"].astype(float).fillna(_option_values(frame, criteria))
    has_decision = vote.notna() | combined["_mean"].notna()
    frame["unresolved"] = (~has_decision & (combined["invalid"] < combined["n"])).to_numpy()
    frame["invalid"] = combined["invalid"].astype(np.int64).to_numpy()
    frame["n"] = combined["n"].astype(np.int64).to_numpy()
    return frame.reset_index(drop=True)


def _with_missing(frame: pd.DataFrame, *, responses, criteria) -> pd.DataFrame:
    """Add every rubric criterion the judge left out, inside the responses it judged, as
    an invalid output (not met for binary criteria)."""
    judged = responses.loc[responses.index.isin(frame["response_id"].unique())]
    expected = applicable_pairs(responses=judged, criteria=criteria)
    missing = expected.merge(frame[["response_id", "criterion_id"]], how="left", indicator=True)
    missing = missing[missing["_merge"] == "left_only"].drop(columns="_merge")
    if missing.empty:
        return frame
    binary = missing["criterion_id"].map(criteria["kind"]).eq("binary")
    extra = missing.assign(
        verdict=np.where(binary, "not_met", None), option=None, value=np.nan, unresolved=False, invalid=1, n=0
    )
    extra["verdict"] = _none_for_nan(extra["verdict"])
    return pd.concat([frame, extra[COLUMNS]], ignore_index=True)


def judge_frame(*, judge: Judge, responses: pd.DataFrame, criteria: pd.DataFrame, _seen=()) -> pd.DataFrame:
    """Decisions of a judge (aggregated over its samples), or of a panel over its members."""
    if judge.backend == PANEL:
        return panel_frame(judge=judge, responses=responses, criteria=criteria, _seen=_seen)
    rows = judgment_rows(judge=judge, criteria=criteria)
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    if rows.groupby(["response_id", "criterion_id"], sort=False).size().max() == 1:
        frame = rows[["response_id", "criterion_id", "verdict", "option", "value", "invalid"]].copy()
        frame["unresolved"] = False
        frame["n"] = 1
        frame = frame[COLUMNS]
    else:
        frame = _combine_votes(rows, voter="sample", rule="majority", weights=None, criteria=criteria)
    return _with_missing(frame, responses=responses, criteria=criteria)


def panel_frame(*, judge: Judge, responses: pd.DataFrame, criteria: pd.DataFrame, _seen=()) -> pd.DataFrame:
    """Ensemble decision of a panel judge: ``settings = {"members": [names], "vote":
    "majority" | "weighted" | "unanimous" | "any", "weights": {name: w}}``."""
    settings = judge.settings or {}
    names = list(settings.get("members") or [])
    if not names:
        raise ValueError(f"panel judge {judge.name!r} has no members (settings.members)")
    if judge.name in _seen:
        raise ValueError(f"panel judge {judge.name!r} contains itself")
    members = {j.name: j for j in Judge.objects.filter(project=judge.project_id, name__in=names)}
    unknown = [n for n in names if n not in members]
    if unknown:
        raise LookupError(f"panel judge {judge.name!r} names unknown member judge(s): {', '.join(unknown)}")
    parts = []
    for name in names:
        member = judge_frame(judge=members[name], responses=responses, criteria=criteria, _seen=(*_seen, judge.name))
        parts.append(member.assign(voter=name, kind=member["criterion_id"].map(criteria["kind"])))
    rows = pd.concat(parts, ignore_index=True)
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    rule = settings.get("vote", "majority")
    weights = settings.get("weights") if rule == "weighted" else None
    if rule == "weighted" and not weights:
        raise ValueError(f"panel judge {judge.name!r} votes 'weighted' but has no settings.weights")
    return _combine_votes(rows[~rows["unresolved"].astype(bool)], voter="voter", rule=rule, weights=weights, criteria=criteria)


def label_rows(*, cohort: Cohort) -> pd.DataFrame:
    """Every label of a cohort: rater (annotator id), role, response_id, criterion_id,
    verdict, option, value — the raters × units input of reliability."""
    qs = Label.objects.filter(cohort=cohort).values_list(
        "annotator_id", "role", "response_id", "criterion_id", "verdict", "option_label", "value"
    )
    rows = fetch_frame(qs, ["rater", "role", "response_id", "criterion_id", "verdict", "option", "value"])
    rows["value"] = rows["value"].astype(float)
    return rows


def source_decisions(*, source, responses: pd.DataFrame, criteria: pd.DataFrame) -> pd.DataFrame:
    """The decision frame of a ``grading.sources.Source`` (frames of its own project)."""
    if source.kind == "cohort":
        return cohort_frame(cohort=source.obj, criteria=criteria)
    if source.kind == "judge":
        return judge_frame(judge=source.obj, responses=responses, criteria=criteria)
    return gold_decision_frame(project=source.project, criteria=criteria)


def source_raters(*, source, responses: pd.DataFrame, criteria: pd.DataFrame) -> pd.DataFrame:
    """The individual ratings inside a source, one row per (rater, response, criterion):
    a cohort's annotators and checkers, a judge's Monte Carlo samples, a panel's members.
    Columns rater, response_id, criterion_id, verdict, option, value."""
    columns = ["rater", "response_id", "criterion_id", "verdict", "option", "value"]
    if source.kind == "cohort":
        return label_rows(cohort=source.obj)[columns]
    if source.kind == "judge" and source.obj.backend == PANEL:
        names = list((source.obj.settings or {}).get("members") or [])
        members = Judge.objects.filter(project=source.project, name__in=names)
        parts = [
            judge_frame(judge=m, responses=responses, criteria=criteria).assign(rater=m.name) for m in members
        ]
        rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
        return rows[~rows["unresolved"].astype(bool)][columns]
    if source.kind == "judge":
        rows = judgment_rows(judge=source.obj, criteria=criteria)
        return rows.rename(columns={"sample": "rater"})[columns]
    raise ValueError("gold holds one decision per item; reliability needs a cohort or a judge source")
