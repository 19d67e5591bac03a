"""One decision per (response, criterion) for any decision source (SPEC §2), as a "decision
frame" that every report, page, API view, prompt builder and exporter reads.

Columns: ``response_id``, ``criterion_id`` and the typed decision columns of
``grading.metrics.decisions`` (``verdict``, ``option``, ``value``, ``unresolved``, ``invalid``,
``n``). These functions only load rows (one or two queries each) and hand them to the rules
module — the cohort rule, a judge's samples, a panel's vote, gold's provenance — so a source
decides the same way on every page. ``response_ids`` restricts a source to some responses
(one response on the side-by-side and adjudication pages) without changing how it decides.
"""
import json
from collections.abc import Iterable

import numpy as np
import pandas as pd
from django.db import connections
from django.db.models import Case, IntegerField, Sum, Value, When

from annotation.models import Cohort, CohortMembership, Criterion, Label, Project
from annotation.selectors import labels_final
from annotation.vocabulary import CANNOT_ASSESS, MET, NOT_MET, UNRESOLVED

from ..metrics.columns import mapped_column, object_column
from ..metrics.decisions import (
    DECISION_COLUMNS,
    SourceDecision,
    cohort_decide,
    gold_decide,
    judge_outputs,
    missing_outputs,
    panel_decide,
    samples_decide,
)
from ..models import Adjudication, Judge, Judgment
from .frames import applicable_pairs, criterion_frame, fetch_frame, response_frame

ITEM = ["response_id", "criterion_id"]
COLUMNS = [*ITEM, *DECISION_COLUMNS]


def _empty() -> pd.DataFrame:
    return pd.DataFrame(columns=COLUMNS)


def _restricted(queryset, response_ids: Iterable[int] | None):
    return queryset if response_ids is None else queryset.filter(response_id__in=list(response_ids))


# -- cohorts and gold ---------------------------------------------------------------------------


NUMERIC_READ_MIN_RESPONSES = 100  # from this many responses on, rows are read as numbers (PostgreSQL)
LABEL_COLUMNS = ["response_id", "criterion_id", "cohort", "rater", "role", "verdict", "option", "value"]


def label_rows(*, project: Project, cohort: Cohort | None = None, response_ids=None) -> pd.DataFrame:
    """Every final label of a project (or one cohort; drafts never count, ``labels_final``):
    response_id, criterion_id, cohort (id), rater (user id), role, verdict, option, value.

    A whole project's or cohort's labels on PostgreSQL (millions of rows at full scale), or those
    of many responses (a report's), are read as numbers (``_label_rows_numeric``); the frame is the
    same. A page's few responses keep the one plain query."""
    qs = Label.objects.filter(project=project) if cohort is None else Label.objects.filter(cohort=cohort)
    if response_ids is not None:
        response_ids = list(response_ids)
    qs = _restricted(labels_final(qs), response_ids)
    many = response_ids is None or len(response_ids) >= NUMERIC_READ_MIN_RESPONSES
    if many and connections[qs.db].vendor == "postgresql":
        return _label_rows_numeric(qs)
    rows = fetch_frame(qs.values_list("response_id", "criterion_id", "cohort_id", "annotator_id", "role", "verdict",
                                      "option_label", "value"), LABEL_COLUMNS)
    for column in ("role", "verdict", "option"):  # as the numeric read gives them
        rows[column] = object_column(rows[column], rows.index)
    rows["value"] = rows["value"].astype(float)
    return rows


ROLE_CODES = Case(When(role=Label.ANNOTATOR_ROLE, then=Value(0)), When(role=Label.CHECKER_ROLE, then=Value(1)),
                  default=Value(-1), output_field=IntegerField())
ROLE_BY_CODE = np.array([None, Label.ANNOTATOR_ROLE, Label.CHECKER_ROLE], dtype=object)  # indexed by code + 1


def _label_rows_numeric(qs) -> pd.DataFrame:
    """``label_rows`` in two reads: every label as numbers (role and verdict as small codes,
    through ``fetch_frame(numeric=True)``: PostgreSQL's COPY), then the option labels of the few
    labels that have one, matched by primary key."""
    numbers = fetch_frame(
        qs.annotate(rcode=ROLE_CODES, vcode=VERDICT_CODES).values_list(
            "pk", "response_id", "criterion_id", "cohort_id", "annotator_id", "rcode", "vcode", "value"),
        ["pk", "response_id", "criterion_id", "cohort", "rater", "rcode", "vcode", "value"], numeric=True)
    options = fetch_frame(qs.filter(option_label__isnull=False).values_list("pk", "option_label"), ["pk", "option"])
    option = np.full(len(numbers), None, dtype=object)
    if len(options):
        option[pd.Index(numbers["pk"]).get_indexer(options["pk"])] = options["option"].to_numpy(dtype=object)
    rows = numbers[["response_id", "criterion_id", "cohort", "rater"]].copy()
    rows["role"] = object_column(ROLE_BY_CODE[numbers["rcode"].to_numpy(dtype=np.int64) + 1], rows.index)
    rows["verdict"] = object_column(VERDICT_BY_CODE[numbers["vcode"].to_numpy(dtype=np.int64) + 1], rows.index)
    rows["option"] = object_column(option, rows.index)
    rows["value"] = numbers["value"].astype(float)
    # Item by item, as the plain read's index scan gives them: the cohort rule's grouping runs a
    # third faster on rows in item order than in the heap order COPY streams them in.
    order = np.lexsort((rows["criterion_id"].to_numpy(), rows["response_id"].to_numpy()))
    return rows.take(order).reset_index(drop=True)


def label_rater_counts(*, rows: pd.DataFrame, responses: pd.DataFrame) -> pd.DataFrame:
    """How many distinct raters made the labels ``rows`` (a cohort's ``label_rows``) on each
    source model's responses, by role: columns model, role, n. Labels of responses that are not
    in ``responses`` (indexed by response id, with ``model``) are not counted. From the rows a
    report has read for the cohort's decisions: counting in the database read them a second time."""
    at = responses.index.get_indexer(rows["response_id"].to_numpy())
    kept = at >= 0
    frame = pd.DataFrame({"model": object_column(responses["model"].to_numpy(dtype=object)[at[kept]]),
                          "role": object_column(rows["role"].to_numpy(dtype=object)[kept]),
                          "rater": rows["rater"].to_numpy()[kept]})
    return frame.groupby(["model", "role"], sort=True)["rater"].nunique().rename("n").reset_index()


def expert_label_rows(*, cohort: Cohort, criteria: pd.DataFrame, response_ids=None,
                      rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """The annotators' own labels of a cohort (the individual experts' values; checker labels
    left out), with each option's value filled in: response_id, criterion_id, rater, verdict,
    option, value. ``rows``: the cohort's ``label_rows`` when the caller has read them already
    (then restricted to ``response_ids`` here)."""
    if rows is None:
        rows = label_rows(project=cohort.project, cohort=cohort, response_ids=response_ids)
    elif response_ids is not None:
        rows = rows[rows["response_id"].isin(response_ids)]
    rows = rows[(rows["role"] == CohortMembership.ANNOTATOR).to_numpy()].reset_index(drop=True)
    rows["value"] = rows["value"].fillna(_option_values(rows, criteria))
    return rows


def evidence_rows(*, project: Project, criterion_ids, judges: list[Judge] | None = None,
                  cohort: Cohort | None = None) -> pd.DataFrame:
    """The quotes attached to decisions on ``criterion_ids``: the judgments of ``judges`` (with
    their sample), or the labels of ``cohort`` (of every cohort when neither is given; sample 0).
    Columns: response_id, criterion_id, sample, quotes (a list of strings)."""
    ids = list(criterion_ids)
    if judges is not None:
        rows = Judgment.objects.filter(judge__in=judges, criterion_id__in=ids).values_list(
            "response_id", "criterion_id", "sample", "evidence")
    else:
        labels = labels_final(Label.objects.filter(project=project, criterion_id__in=ids))
        rows = (labels.filter(cohort=cohort) if cohort is not None else labels).annotate(sample=Value(0)).values_list(
            "response_id", "criterion_id", "sample", "evidence")
    frame = fetch_frame(rows, ["response_id", "criterion_id", "sample", "quotes"])
    frame["quotes"] = [json.loads(q) if isinstance(q, str) else list(q or []) for q in frame["quotes"]]
    return frame


def cohort_frame(*, cohort: Cohort, response_ids=None, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """The cohort's decisions (SPEC §2 cohort rule). ``rows``: the cohort's ``label_rows`` when
    the caller has read them already."""
    if rows is None:
        rows = label_rows(project=cohort.project, cohort=cohort, response_ids=response_ids)
    return cohort_decide(rows, keys=ITEM)[COLUMNS] if len(rows) else _empty()


def cohort_frames(*, project: Project, response_ids=None, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every cohort's decisions at once, with a ``cohort`` column holding the cohort's name.
    ``rows``: the ``label_rows`` of these responses, when the caller has read them already."""
    if rows is None:
        rows = label_rows(project=project, response_ids=response_ids)
    if rows.empty:
        return pd.DataFrame(columns=[*COLUMNS, "cohort"])
    decided = cohort_decide(rows, keys=[*ITEM, "cohort"])
    names = dict(Cohort.objects.filter(project=project).values_list("pk", "name"))
    return decided.assign(cohort=decided["cohort"].map(names))


ADJUDICATION_EXTRA = ["adjudicator", "confidence", "category", "note"]


def gold_frame(*, project: Project, response_ids=None, cohorts: pd.DataFrame | None = None,
               with_cohort_decisions: bool = True) -> pd.DataFrame:
    """The gold decision of every labelled or adjudicated (response, criterion) with its
    provenance (agreed / adjudicated / single-cohort / unresolved), each cohort's decision
    (bundle form, by cohort name), and the adjudicator's user name, confidence, category and note.
    ``cohorts``: the cohort decisions when the caller has them already (``cohort_frames``);
    ``with_cohort_decisions=False``: each cohort's decision left empty (``gold_decide``)."""
    adjudications = fetch_frame(
        _restricted(Adjudication.objects.filter(project=project), response_ids).values_list(
            "response_id", "criterion_id", "verdict", "option_label", "value", "adjudicator__username", "confidence",
            "category", "note",
        ),
        [*ITEM, "verdict", "option", "value", *ADJUDICATION_EXTRA],
    )
    adjudications["value"] = adjudications["value"].astype(float)
    if cohorts is None:
        cohorts = cohort_frames(project=project, response_ids=response_ids)
    gold = gold_decide(cohorts, adjudications, keys=ITEM, with_cohort_decisions=with_cohort_decisions)
    extra = adjudications[[*ITEM, *ADJUDICATION_EXTRA]]
    gold = gold.merge(extra, on=ITEM, how="left")
    gold["adjudicator"] = gold["adjudicator"].astype(object).where(gold["adjudicator"].notna(), None)
    for column in ("confidence", "category", "note"):
        gold[column] = gold[column].fillna("").astype(object)
    return gold.sort_values(ITEM, kind="stable").reset_index(drop=True)


def gold_decision_frame(*, project: Project, response_ids=None, cohorts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Gold as a decision source: an unresolved gold item is one nobody has decided yet, not a
    decision, and is left out."""
    gold = gold_frame(project=project, response_ids=response_ids, cohorts=cohorts, with_cohort_decisions=False)
    gold = gold[gold["provenance"] != UNRESOLVED]
    if gold.empty:
        return _empty()
    return gold.assign(unresolved=False, invalid=0, n=1)[COLUMNS].reset_index(drop=True)


# -- judges -------------------------------------------------------------------------------------

VERDICT_CODES = Case(
    When(verdict=NOT_MET, then=Value(0)), When(verdict=MET, then=Value(1)), When(verdict=CANNOT_ASSESS, then=Value(2)),
    default=Value(-1), output_field=IntegerField(),
)
VERDICT_BY_CODE = np.array([None, NOT_MET, MET, CANNOT_ASSESS], dtype=object)  # indexed by code + 1


def _option_values(frame: pd.DataFrame, criteria: pd.DataFrame) -> pd.Series:
    """The value of each row's option label (NaN where there is no option)."""
    has = frame["option"].notna()
    values = pd.Series(np.nan, index=frame.index)
    if not has.any():
        return values
    lookup = {}
    for criterion_id, options in criteria.loc[criteria["options"].map(bool), "options"].items():
        for option in options:
            lookup[(criterion_id, option["label"])] = float(option["value"])
    values[has] = [lookup.get(k, np.nan) for k in zip(frame.loc[has, "criterion_id"], frame.loc[has, "option"])]
    return values


def judgment_rows(*, judge: Judge | None = None, judges: list[Judge] | None = None, criteria: pd.DataFrame,
                  response_ids=None) -> pd.DataFrame:
    """Raw outputs of one judge (or several, in one query): judge (name), response_id,
    criterion_id, sample, verdict, option, value, valid and the criterion's ``kind``. Verdicts
    travel as small integers, and option and value columns are read only when the project has
    non-binary criteria: at a million judgments the string and NULL columns are most of the cost."""
    judges = [judge] if judge is not None else list(judges or [])
    names = {j.pk: j.name for j in judges}
    with_options = bool((criteria["kind"] != "binary").any())
    fields = ["judge_id", "response_id", "criterion_id", "sample", "vcode", "valid"]
    fields += ["option_label", "value"] if with_options else []
    if response_ids is not None:
        response_ids = list(response_ids)
    qs = _restricted(Judgment.objects.filter(judge_id__in=list(names)), response_ids).annotate(vcode=VERDICT_CODES)
    columns = ["judge", "response_id", "criterion_id", "sample", "vcode", "valid"] + (["option", "value"] if with_options else [])
    # Binary criteria only, many responses: every column a number (valid as 0 / 1), read through COPY.
    numeric = not with_options and (response_ids is None or len(response_ids) >= NUMERIC_READ_MIN_RESPONSES)
    if numeric:
        qs = qs.annotate(valid_code=Case(When(valid=True, then=Value(1)), default=Value(0), output_field=IntegerField()))
        fields[fields.index("valid")] = "valid_code"
    rows = fetch_frame(qs.values_list(*fields), columns, numeric=numeric)
    rows["judge"] = mapped_column(rows["judge"], pd.Series(names, dtype=object))
    rows["verdict"] = object_column(VERDICT_BY_CODE[rows["vcode"].to_numpy(dtype=np.int64) + 1], rows.index)
    rows["option"] = object_column(rows["option"] if with_options else np.full(len(rows), None), rows.index)
    if not with_options:
        rows["value"] = np.nan
    rows["value"] = rows["value"].astype(float)
    if with_options:
        rows["value"] = rows["value"].fillna(_option_values(rows, criteria))
    rows["valid"] = rows["valid"].astype(bool)
    rows["kind"] = mapped_column(rows["criterion_id"], criteria["kind"])
    return rows.drop(columns="vcode")


def judge_hits(*, judge: Judge) -> pd.DataFrame | None:
    """Coverage hits of a judge counted in the database: per judged response, the binary
    criteria it marked met with a valid output. Only for a judge with one sample per item
    (its decisions are then its outputs, so no vote is needed); None otherwise, and the
    caller falls back to the decision frame. At 825,000 judgments this is one grouped
    query instead of a million rows through Python."""
    if judge.kind.votes_over_members or Judgment.objects.filter(judge=judge, sample__gt=0).exists():
        return None
    mixed = Criterion.objects.filter(project=judge.project_id).exclude(kind="binary").exists()
    binary_met = {"criterion__kind": "binary"} if mixed else {}  # join the criteria only when it matters
    met = Case(When(valid=True, verdict=MET, then=Value(1), **binary_met), default=Value(0), output_field=IntegerField())
    qs = Judgment.objects.filter(judge=judge).values("response_id").annotate(hits=Sum(met)).values_list("response_id", "hits")
    return fetch_frame(qs.order_by(), ["response_id", "hits"])


def _with_missing(frame: pd.DataFrame, *, responses: pd.DataFrame, criteria: pd.DataFrame,
                  scoped: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Judges' decisions plus their missing outputs inside the responses each one judged. A judge
    named in ``scoped`` decides only the criteria it has outputs for (a calibrated judge, fitted
    for one criterion or one trait: ``JudgeBackend.decides_own_criteria``): its missing outputs are
    looked for on those criteria only, never on the criteria it was not made to decide."""
    judged = frame[["judge", "response_id"]].drop_duplicates()
    expected = judged.merge(applicable_pairs(responses=responses, criteria=criteria), on="response_id")
    if scoped:
        own = frame.loc[frame["judge"].isin(scoped), ["judge", "criterion_id"]].drop_duplicates()
        outside = expected["judge"].isin(scoped)
        kept = expected[outside].merge(own, on=["judge", "criterion_id"])
        expected = pd.concat([expected[~outside], kept], ignore_index=True)
    expected["kind"] = expected["criterion_id"].map(criteria["kind"])
    missing = missing_outputs(expected, frame, keys=["judge", *ITEM])
    return pd.concat([frame, missing], ignore_index=True) if len(missing) else frame


def judge_sample_outputs(*, judge: Judge, responses: pd.DataFrame, criteria: pd.DataFrame,
                         rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """A judge's outputs sample by sample, as votes (``judge_outputs``), plus each sample's missing
    outputs inside the responses the judge judged (``missing_outputs``: not met on a binary
    criterion, no value otherwise), the rule its decisions follow: for Monte Carlo figures, where
    sample r's mean must count what sample r left out. Columns: response_id, criterion_id,
    sample, verdict, option, value, invalid. ``rows``: the judge's ``judgment_rows`` when the
    caller has read them already (for its decisions too)."""
    columns = ["response_id", "criterion_id", "sample", "verdict", "option", "value", "invalid"]
    if rows is None:
        rows = judgment_rows(judge=judge, criteria=criteria)
    rows = rows[rows["response_id"].isin(responses.index)]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    votes = judge_outputs(rows)
    expected = votes[["response_id"]].drop_duplicates().merge(applicable_pairs(responses=responses, criteria=criteria),
                                                              on="response_id")
    if judge.kind.decides_own_criteria:  # as its decisions (``_with_missing``): only the criteria it decides
        expected = expected[expected["criterion_id"].isin(votes["criterion_id"].unique())]
    expected["kind"] = expected["criterion_id"].map(criteria["kind"])
    expected = expected.merge(pd.DataFrame({"sample": sorted(votes["sample"].unique())}), how="cross")
    missing = missing_outputs(expected, votes, keys=["sample", *ITEM])
    return pd.concat([votes[columns], missing[columns]], ignore_index=True) if len(missing) else votes[columns]


def judges_frame(*, judges: list[Judge], responses: pd.DataFrame, criteria: pd.DataFrame, response_ids=None,
                 known: dict[str, Judge] | None = None, outputs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Decisions of several judges at once (one query for their outputs, one pass of the rules),
    with a ``judge`` column holding the judge's name; a panel's decisions come from its members'.
    ``known``: the project's judges by name, when the caller has them (no query for panel members).
    ``outputs``: ``judgment_rows`` of (at least) these judges and panel members, when the caller
    has read them already."""
    panels = [j for j in judges if j.kind.votes_over_members]
    plain = {j.name: j for j in judges if not j.kind.votes_over_members}
    members: dict[str, list[Judge]] = {p.name: panel_members(judge=p, known=known) for p in panels}
    for listed in members.values():
        plain.update({m.name: m for m in listed})
    parts = []
    if not plain:
        rows = None
    elif outputs is not None:
        rows = outputs[outputs["judge"].isin(plain)]
    else:
        rows = judgment_rows(judges=list(plain.values()), criteria=criteria, response_ids=response_ids)
    decided = None
    if rows is not None and len(rows):
        scoped = frozenset(name for name, j in plain.items() if j.kind.decides_own_criteria)
        decided = _with_missing(samples_decide(rows, keys=["judge", *ITEM]), responses=responses, criteria=criteria,
                                scoped=scoped)
        wanted = {j.name for j in judges if not j.kind.votes_over_members}
        parts.append(decided[decided["judge"].isin(wanted)])
    for panel in panels:
        settings = panel.typed_settings
        names = [m.name for m in members[panel.name]]
        votes = decided[decided["judge"].isin(names)].rename(columns={"judge": "member"}) if decided is not None else None
        if votes is None or votes.empty:
            continue
        votes = votes.assign(kind=votes["criterion_id"].map(criteria["kind"]))
        voted = panel_decide(votes, keys=ITEM, rule=settings.vote, weights=settings.weights or None)
        parts.append(voted.assign(judge=panel.name))
    if not parts:
        return pd.DataFrame(columns=[*COLUMNS, "judge"])
    return pd.concat(parts, ignore_index=True)[[*COLUMNS, "judge"]]


def judge_frame(*, judge: Judge, responses: pd.DataFrame, criteria: pd.DataFrame, response_ids=None,
                outputs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Decisions of one judge (over its samples), or of a panel over its members; ``outputs`` as
    for ``judges_frame``."""
    frame = judges_frame(judges=[judge], responses=responses, criteria=criteria, response_ids=response_ids,
                         outputs=outputs)
    return frame[COLUMNS].reset_index(drop=True) if len(frame) else _empty()


def panel_members(*, judge: Judge, known: dict[str, Judge] | None = None) -> list[Judge]:
    """The member judges of a panel, in the order its settings name them; LookupError / ValueError
    naming what is wrong with its configuration. ``known``: the project's judges by name, if loaded."""
    names = list(judge.typed_settings.members)
    if not names:
        raise ValueError(f"panel judge {judge.name!r} has no members (settings.members)")
    if known is not None:
        members = {name: known[name] for name in names if name in known}
    else:
        members = {j.name: j for j in Judge.objects.filter(project=judge.project_id, name__in=names)}
    unknown = [n for n in names if n not in members]
    if unknown:
        raise LookupError(f"panel judge {judge.name!r} names unknown member judge(s): {', '.join(unknown)}")
    nested = [n for n in names if members[n].kind.votes_over_members]
    if nested:
        raise ValueError(f"panel judge {judge.name!r} contains the panel {nested[0]!r}; panels do not nest")
    return [members[n] for n in names]


# -- any source ---------------------------------------------------------------------------------


def source_decisions(*, source, responses: pd.DataFrame, criteria: pd.DataFrame, response_ids=None,
                     outputs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The decision frame of a ``grading.sources.Source`` (frames of its own project); ``outputs``:
    a judge's ``judgment_rows`` when the caller has read them already."""
    if source.kind == "cohort":
        return cohort_frame(cohort=source.obj, response_ids=response_ids)
    if source.kind == "judge":
        return judge_frame(judge=source.obj, responses=responses, criteria=criteria, response_ids=response_ids,
                           outputs=outputs)
    return gold_decision_frame(project=source.project, response_ids=response_ids)


def decisions_by_criterion(frame: pd.DataFrame, *, source: str | None = None) -> dict[tuple, SourceDecision]:
    """A decision frame as {(response_id, criterion_id): SourceDecision}, for pages and the API;
    ``source`` (a column: ``judge``, ``cohort``): of several sources at once, keyed (source, response_id,
    criterion_id)."""
    names = [c for c in ("verdict", "option", "value", "unresolved", "invalid", "n") if c in frame.columns]
    keys = ("response_id", "criterion_id") if source is None else (source, "response_id", "criterion_id")
    columns = [frame[c].tolist() for c in (*keys, *names)]  # plain Python values, fast to zip
    width = len(keys)
    return {
        (*values[:width - 2], int(values[width - 2]), int(values[width - 1])):
            SourceDecision.from_row(dict(zip(names, values[width:])))
        for values in zip(*columns)
    }


def source_decision_records(*, source, response_external_id: str | None = None,
                            criterion_external_id: str | None = None) -> list[dict]:
    """A source's decisions as plain records with external ids, in project order (response
    position, then criterion position): what the researcher API lists. Restricting to one
    response loads only that response's rows."""
    project = source.project
    responses, criteria = response_frame(project=project), criterion_frame(project=project)
    response_ids = None
    if response_external_id is not None:
        response_ids = [int(pk) for pk in responses.index[responses["external_id"] == response_external_id]]
    frame = source_decisions(source=source, responses=responses, criteria=criteria, response_ids=response_ids)
    if criterion_external_id is not None:
        wanted = criteria.index[criteria["criterion_external_id"] == criterion_external_id]
        frame = frame[frame["criterion_id"].isin(wanted)]
    frame = frame.assign(
        _r=frame["response_id"].map(responses["position"]), _c=frame["criterion_id"].map(criteria["criterion_position"]),
    ).sort_values(["_r", "response_id", "_c", "criterion_id"], kind="stable")
    return [
        {"response_id": str(responses.at[row["response_id"], "external_id"]),
         "criterion_id": str(criteria.at[row["criterion_id"], "criterion_external_id"]),
         **SourceDecision.from_row(row).__dict__}
        for row in frame.to_dict("records")
    ]


def source_raters(*, source, responses: pd.DataFrame, criteria: pd.DataFrame) -> pd.DataFrame:
    """The individual ratings inside a source, one row per (rater, response, criterion):
    a cohort's annotators and checkers, a judge's Monte Carlo samples, a panel's members.
    Columns rater, response_id, criterion_id, verdict, option, value."""
    columns = ["rater", "response_id", "criterion_id", "verdict", "option", "value"]
    if source.kind == "cohort":
        return label_rows(project=source.project, cohort=source.obj)[columns]
    if source.kind == "judge" and source.obj.kind.votes_over_members:
        rows = judges_frame(judges=panel_members(judge=source.obj), responses=responses, criteria=criteria)
        rows = rows.rename(columns={"judge": "rater"})
        return rows[~rows["unresolved"].astype(bool)][columns]
    if source.kind == "judge":
        rows = judge_outputs(judgment_rows(judge=source.obj, criteria=criteria))  # invalid output: a not-met vote
        return rows.rename(columns={"sample": "rater"})[columns]
    raise ValueError("gold holds one decision per item; reliability needs a cohort or a judge source")
