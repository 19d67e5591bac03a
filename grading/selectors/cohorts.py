"""Cohort and gold decisions as DataFrames, in one or two queries (used by the exporter
and by every report).

The cohort decision rule (SPEC §2): the checker's label if there is one; else the single
annotator's label; else the majority of the annotators' labels; a tie is unresolved.
A decision is encoded as one string key — ``v:<verdict>``, ``o:<option label>`` or
``x:<value>`` — so that votes over mixed criterion kinds compare exactly.
"""
import numpy as np
import pandas as pd

from annotation.models import Cohort, Label, Project

UNRESOLVED = None
KEYS = ["response_id", "criterion_id", "cohort"]


def decision_key(verdict: str | None, option_label: str | None, value: float | None) -> str | None:
    if option_label is not None:
        return f"o:{option_label}"
    if verdict is not None:
        return f"v:{verdict}"
    if value is not None:
        return f"x:{value!r}"
    return None


def decision_fields(key: str | None) -> dict:
    """The bundle fields of a decision key (``{"verdict": None}`` for unresolved)."""
    if not isinstance(key, str):  # None, or NaN after a pandas merge: unresolved
        return {"verdict": None}
    kind, _, rest = key.partition(":")
    if kind == "o":
        return {"option": rest}
    if kind == "v":
        return {"verdict": rest}
    return {"value": float(rest)}


def resolve_votes(labels: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One decision per group of ``keys`` from rows with ``role`` and ``decision`` columns.

    Checker rows win over annotator rows; among the rows that count, the most frequent
    decision wins and a tie gives ``None`` (unresolved). Returns keys + decision + n_labels.
    """
    if labels.empty:
        return pd.DataFrame(columns=[*keys, "decision", "n_labels"])
    df = labels.copy()
    df["is_checker"] = df["role"] == "checker"
    has_checker = df.groupby(keys, sort=False)["is_checker"].transform("any")
    df = df[~has_checker | df["is_checker"]]
    counts = df.groupby([*keys, "decision"], sort=False, dropna=False).size().rename("n").reset_index()
    top = counts.groupby(keys, sort=False)["n"].transform("max")
    winners = counts[counts["n"] == top]
    n_winners = winners.groupby(keys, sort=False)["decision"].transform("size")
    winners = winners.assign(decision=winners["decision"].where(n_winners == 1, None))
    result = winners.drop_duplicates(subset=keys)[[*keys, "decision"]]
    n_labels = df.groupby(keys, sort=False).size().rename("n_labels").reset_index()
    return result.merge(n_labels, on=keys, how="left").reset_index(drop=True)


def cohort_decisions(*, project: Project, cohort: Cohort | None = None) -> pd.DataFrame:
    """Cohort decisions of a project (all cohorts, or one): response_id, criterion_id and
    cohort as primary keys, ``decision`` key (None = unresolved tie), ``n_labels``."""
    qs = Label.objects.filter(project=project)
    if cohort is not None:
        qs = qs.filter(cohort=cohort)
    rows = qs.values_list("response_id", "criterion_id", "cohort_id", "role", "verdict", "option_label", "value")
    df = fetch_frame(rows, ["response_id", "criterion_id", "cohort", "role", "verdict", "option_label", "value"])
    df["decision"] = decision_keys(df["verdict"], df["option_label"], df["value"])
    return resolve_votes(df[["response_id", "criterion_id", "cohort", "role", "decision"]], KEYS)


def fetch_frame(queryset, columns: list[str]) -> pd.DataFrame:
    """Rows of a plain ``values_list`` straight from the cursor (the ORM's per-row work
    dominates at a million labels)."""
    from django.db import connections

    if not queryset.query.order_by:
        # The models' Meta ordering joins and sorts several tables: a 20x slowdown on PostgreSQL.
        queryset = queryset.order_by()
    sql, params = queryset.query.sql_with_params()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        return pd.DataFrame.from_records(cursor.fetchall(), columns=columns)


def decision_keys(verdicts: pd.Series, options: pd.Series, values: pd.Series) -> pd.Series:
    """``decision_key`` over whole columns: the same strings, computed once per distinct value."""
    keys = pd.Series(None, index=verdicts.index, dtype=object)
    value_keys = {v: decision_key(None, None, float(v)) for v in pd.unique(values.dropna())}
    has_value = values.notna()
    keys[has_value] = values[has_value].map(value_keys)
    has_verdict = verdicts.notna()
    keys[has_verdict] = "v:" + verdicts[has_verdict].astype(str)
    has_option = options.notna()
    keys[has_option] = "o:" + options[has_option].astype(str)
    return keys


def gold_frame(*, project: Project) -> pd.DataFrame:
    """The gold decision of every labeled (response, criterion), with its provenance.

    An adjudication wins; otherwise, when two or more cohorts decided and all agree the
    decision is ``agreed``, when they disagree (or one is a tie) it is ``unresolved``; an
    item only one cohort labeled is ``single-cohort`` (or ``unresolved`` on a tie).
    Columns: response_id, criterion_id, decision, provenance, cohort_decisions (dict of
    cohort name to key), adjudicator, note.
    """
    from ..models import Adjudication

    names = dict(Cohort.objects.filter(project=project).values_list("pk", "name"))
    columns = ["response_id", "criterion_id", "decision", "provenance", "cohort_decisions", "adjudicator", "note"]
    item = ["response_id", "criterion_id"]
    per_cohort = cohort_decisions(project=project)[[*item, "cohort", "decision"]]
    per_cohort = per_cohort.assign(
        cohort=per_cohort["cohort"].map(names),
        decision=per_cohort["decision"].astype(object).where(per_cohort["decision"].notna(), None),
    )
    grouped = per_cohort.groupby(item, sort=True)
    n_cohorts, n_decided = grouped.size(), grouped["decision"].count()
    n_distinct, first = grouped["decision"].nunique(), grouped["decision"].first()
    agreed = (n_cohorts >= 2) & (n_decided == n_cohorts) & (n_distinct == 1)
    single = (n_cohorts == 1) & (n_decided == 1)
    gold = pd.DataFrame({
        "decision": first.where(agreed | single, None),
        "provenance": np.select([agreed.to_numpy(), single.to_numpy()], ["agreed", "single-cohort"], "unresolved"),
    })
    # Each item's {cohort name: decision}, built from the wide table in one pass.
    wide = per_cohort.pivot(index=item, columns="cohort", values="decision").reindex(gold.index)
    present = per_cohort.assign(seen=True).pivot(index=item, columns="cohort", values="seen").reindex(gold.index)
    cohort_names = list(wide.columns)
    gold["cohort_decisions"] = [
        {name: (value if isinstance(value, str) else None) for name, value, seen in zip(cohort_names, values, seen_row) if seen is True}
        for values, seen_row in zip(wide.itertuples(index=False), present.itertuples(index=False))
    ]
    gold["adjudicator"], gold["note"] = None, ""

    adjudications = pd.DataFrame.from_records(
        [
            (r, c, decision_key(v, o, x), prov, user, note)
            for r, c, v, o, x, prov, user, note in Adjudication.objects.filter(project=project).values_list(
                "response_id", "criterion_id", "verdict", "option_label", "value", "provenance", "adjudicator__username", "note"
            )
        ],
        columns=[*item, "decision", "provenance", "adjudicator", "note"],
    ).set_index(item)
    if not adjudications.empty:
        missing = adjudications.index.difference(gold.index)
        gold = pd.concat([gold, pd.DataFrame({"cohort_decisions": [{} for _ in missing]}, index=missing)])
        for column in ("decision", "provenance", "adjudicator", "note"):
            gold.loc[adjudications.index, column] = adjudications[column]
        gold = gold.sort_index()
    return gold.reset_index()[columns]
