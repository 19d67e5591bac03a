"""What the adjudication queue needs from a whole project's labels, counted in the database: the
items the cohorts leave unresolved, and per response how the first two cohorts' decisions pair up
on binary criteria (the counts behind its case-level MF1).

At full scale a project has millions of final labels; deciding each cohort in pandas
(``cohort_frames`` and ``gold_decide``) moved them all through Python on every queue request (23 s
on the full-scale bench). Here one grouping of the labels by (response, criterion) counts each
cohort's votes, decides the item from them, and returns only the disputed items and a few counts
per response. It counts the labels the rules of ``grading.metrics.decisions`` count, the
final ones (``labels_final``), and it is the same rule restricted to what counts can decide:

- the cohort decision (``cohort_decide``): the checker's label where the cohort has one on the
  item, else the annotators'; the verdict with the most votes; a tie, or no vote, is unresolved;
- the gold provenance without adjudications (``gold_decide``): agreed when two or more cohorts
  decided it alike, single-cohort when one cohort labelled and decided it, unresolved otherwise.

Counts cover the first two cohorts (A and B, the pair the queue compares). A label with an option or
a bare value (an ordinal or nominal criterion) is a vote counts cannot compare, and a third
cohort's label is one they do not hold; the responses with such a label are returned apart
(``fallback``) and the caller decides them through the decision frames. A test holds this fast path
equal to the frames on the same data.

Everything here is counted per response, so the counts of a few responses (``response_ids``) replace
theirs in a whole project's (``CohortDisputes.updated``): the queue counts the project once and
then only the responses whose labels or assignments changed (``fingerprint.responses_changed``).
"""
from dataclasses import dataclass

import pandas as pd
from django.db import connections, transaction
from django.db.models import Case, IntegerField, Q, Value, When

from annotation.models import Cohort, Criterion, Label, Project
from annotation.selectors import label_draft_q, label_final_q

from .decisions import ROLE_CODES, VERDICT_BY_CODE, VERDICT_CODES
from .frames import _copy_frame

# Votes are the verdict codes of ``VERDICT_CODES`` (not met 0, met 1, cannot assess 2; -1 no vote).
# ``_PLAIN`` is 0 for a label whose vote is an option or a bare value (``_vote_codes``), which
# verdict counts cannot hold.
_PLAIN = Case(When(Q(option_label__isnull=False) | Q(verdict__isnull=True, value__isnull=False), then=Value(0)),
              default=Value(1), output_field=IntegerField())


def _flag(condition: Q) -> Case:
    return Case(When(condition, then=Value(1)), default=Value(0), output_field=IntegerField())


# Each final label adds to three integer sums per (response, criterion), so that one grouping of
# the labels (millions) yields every cohort decision of the item: fourteen aggregates per label
# made the grouping most of the queue's time. ``votes_a`` / ``votes_b``: the annotator votes of
# cohort A / B, met + 2^10 not met + 2^20 cannot assess; ``seen``: A's labels + 2^10 its checker's
# vote (vcode + 2: 1 no vote, 2 not met, 3 met, 4 cannot assess; a cohort has at most one checker
# label per item), then B's the same from bit 13. Ten bits hold up to 1,023 labels of one cohort on
# one item. ``apart``: labels counts cannot decide: an option or a value, or a third cohort's.
# Only final labels count (``label_final_q``); the drafts are counted in the same pass
# (``label_draft_q``), for the queue to say how many it left out.
_SQL = """
WITH lab (response_id, criterion_id, cohort_id, rcode, vcode, plain, final, draft) AS ({labels}),
item AS (
  SELECT response_id, criterion_id,
    SUM(CASE WHEN final = 1 AND cohort_id = {a} AND rcode <> 1 THEN
          CASE vcode WHEN 1 THEN 1 WHEN 0 THEN 1024 WHEN 2 THEN 1048576 ELSE 0 END ELSE 0 END) AS votes_a,
    SUM(CASE WHEN final = 1 AND cohort_id = {b} AND rcode <> 1 THEN
          CASE vcode WHEN 1 THEN 1 WHEN 0 THEN 1024 WHEN 2 THEN 1048576 ELSE 0 END ELSE 0 END) AS votes_b,
    SUM(CASE WHEN final = 0 THEN 0
             WHEN cohort_id = {a} THEN 1 + CASE WHEN rcode = 1 THEN (vcode + 2) * 1024 ELSE 0 END
             WHEN cohort_id = {b} THEN 8192 + CASE WHEN rcode = 1 THEN (vcode + 2) * 8388608 ELSE 0 END
             ELSE 0 END) AS seen,
    SUM(CASE WHEN final = 1 AND (plain = 0 OR (cohort_id <> {a} AND cohort_id <> {b})) THEN 1 ELSE 0 END) AS apart,
    SUM(draft) AS drafts
  FROM lab GROUP BY response_id, criterion_id
),
counts AS (
  SELECT response_id, criterion_id, apart, drafts,
    CASE WHEN (seen & 1023) > 0 THEN 1 ELSE 0 END AS has_a, (seen / 1024) & 7 AS checker_a,
    votes_a & 1023 AS met_a, (votes_a / 1024) & 1023 AS not_a, (votes_a / 1048576) & 1023 AS ca_a,
    CASE WHEN ((seen / 8192) & 1023) > 0 THEN 1 ELSE 0 END AS has_b, (seen / 8388608) & 7 AS checker_b,
    votes_b & 1023 AS met_b, (votes_b / 1024) & 1023 AS not_b, (votes_b / 1048576) & 1023 AS ca_b
  FROM item
),
decided AS (
  SELECT response_id, criterion_id, apart, drafts, has_a, has_b,
    CASE WHEN checker_a > 0 THEN CASE WHEN checker_a >= 2 THEN checker_a - 2 END
         WHEN met_a > not_a AND met_a > ca_a THEN 1 WHEN not_a > met_a AND not_a > ca_a THEN 0
         WHEN ca_a > met_a AND ca_a > not_a THEN 2 END AS win_a,
    CASE WHEN checker_b > 0 THEN CASE WHEN checker_b >= 2 THEN checker_b - 2 END
         WHEN met_b > not_b AND met_b > ca_b THEN 1 WHEN not_b > met_b AND not_b > ca_b THEN 0
         WHEN ca_b > met_b AND ca_b > not_b THEN 2 END AS win_b
  FROM counts
)
SELECT 0, response_id, criterion_id, 0, 0, 0 FROM decided
  WHERE apart = 0 AND has_a + has_b > 0 AND NOT (
    (has_a = 1 AND has_b = 1 AND win_a IS NOT NULL AND win_b IS NOT NULL AND win_a = win_b)
    OR (has_a + has_b = 1 AND COALESCE(win_a, win_b) IS NOT NULL))
UNION ALL
SELECT 1, decided.response_id, 0, COALESCE(win_a, -1), COALESCE(win_b, -1), COUNT(*) FROM decided
  INNER JOIN {criterion} ON {criterion}.id = decided.criterion_id
  WHERE {criterion}.kind = 'binary' AND has_a = 1 AND has_b = 1
  GROUP BY decided.response_id, COALESCE(win_a, -1), COALESCE(win_b, -1)
UNION ALL
SELECT 2, response_id, 0, 0, 0, 0 FROM decided WHERE apart > 0 GROUP BY response_id
UNION ALL
SELECT 3, response_id, 0, 0, 0, SUM(drafts) FROM decided GROUP BY response_id HAVING SUM(drafts) > 0
"""
# For this one query (SET LOCAL ends with the transaction): its row estimates after grouping are
# far too low, so without these PostgreSQL spends half a second compiling it (JIT), sorts millions
# of labels on disk to group them, and looks the criteria up row by row.
_PG_SETTINGS = ("SET LOCAL jit = off", "SET LOCAL work_mem = '256MB'", "SET LOCAL enable_nestloop = off")
COLUMNS = ["part", "response_id", "criterion_id", "code_a", "code_b", "n"]


@dataclass(frozen=True)
class CohortDisputes:
    """``disputed``: (response_id, criterion_id) of every item the cohorts leave unresolved;
    ``pairs``: per response, the binary items both cohorts labelled, tallied by their two
    decisions (response_id, verdict_a, unresolved_a, verdict_b, unresolved_b, n); ``fallback``: the
    responses with an option or value label or a label of a cohort other than A and B, left out of
    both; ``draft_counts``: the draft labels, which count nowhere, by response (response_id, n)."""

    disputed: pd.DataFrame
    pairs: pd.DataFrame
    fallback: frozenset
    draft_counts: pd.DataFrame

    @property
    def drafts(self) -> int:
        """How many draft labels the counted responses have."""
        return int(self.draft_counts["n"].sum())

    def updated(self, fresh: "CohortDisputes", response_ids) -> "CohortDisputes":
        """These counts with those of ``response_ids`` replaced by ``fresh`` (counted for those
        responses only, ``cohort_disputes(response_ids=...)``)."""
        ids = {int(r) for r in response_ids}

        def spliced(kept: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
            kept = kept[~kept["response_id"].isin(ids)]
            return pd.concat([kept, new], ignore_index=True) if len(new) else kept.reset_index(drop=True)

        return CohortDisputes(disputed=spliced(self.disputed, fresh.disputed), pairs=spliced(self.pairs, fresh.pairs),
                              fallback=(self.fallback - ids) | fresh.fallback,
                              draft_counts=spliced(self.draft_counts, fresh.draft_counts))


def cohort_disputes(*, project: Project, a: Cohort | None, b: Cohort | None, response_ids=None) -> CohortDisputes:
    """The disputed items of ``project`` and the decisions of its cohorts ``a`` and ``b`` (None
    where the project has fewer cohorts) paired per response, in one query; only of the responses
    ``response_ids`` where given."""
    labels = Label.objects.filter(project=project)
    if response_ids is not None:
        labels = labels.filter(response_id__in=sorted(response_ids))
    labels = (labels
              .annotate(rcode=ROLE_CODES, vcode=VERDICT_CODES, plain=_PLAIN, final=_flag(label_final_q()),
                        draft=_flag(label_draft_q()))
              .values_list("response_id", "criterion_id", "cohort_id", "rcode", "vcode", "plain", "final", "draft")
              .order_by())
    label_sql, label_params = labels.query.sql_with_params()
    connection = connections[labels.db]
    criterion = connection.ops.quote_name(Criterion._meta.db_table)
    sql = _SQL.format(labels=label_sql, criterion=criterion, a=int(a.pk) if a else -1, b=int(b.pk) if b else -1)
    params = label_params
    if connection.vendor == "postgresql":
        with transaction.atomic(using=labels.db), connection.cursor() as cursor:
            for setting in _PG_SETTINGS if response_ids is None else ():  # a few responses: the planner's estimates hold
                cursor.execute(setting)
            rows = _copy_frame(connection, sql, params, COLUMNS)
    else:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = pd.DataFrame.from_records(cursor.fetchall(), columns=COLUMNS)
    rows = rows.astype("int64") if len(rows) else pd.DataFrame({c: pd.Series(dtype="int64") for c in COLUMNS})
    part = rows["part"].to_numpy()
    disputed = rows.loc[part == 0, ["response_id", "criterion_id"]].reset_index(drop=True)
    tallies = rows[part == 1]
    code_a, code_b = tallies["code_a"].to_numpy(), tallies["code_b"].to_numpy()
    pairs = pd.DataFrame({
        "response_id": tallies["response_id"].to_numpy(),
        "verdict_a": VERDICT_BY_CODE[code_a + 1], "unresolved_a": code_a < 0,
        "verdict_b": VERDICT_BY_CODE[code_b + 1], "unresolved_b": code_b < 0,
        "n": tallies["n"].to_numpy(),
    })
    return CohortDisputes(disputed=disputed, pairs=pairs, fallback=frozenset(int(r) for r in rows.loc[part == 2, "response_id"]),
                          draft_counts=rows.loc[part == 3, ["response_id", "n"]].reset_index(drop=True))
