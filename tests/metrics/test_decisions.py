"""The decision rules of SPEC §2/§3 (grading.metrics.decisions), worked by hand: the cohort
rule, a judge's samples, panels, gold provenance, numeric values and rescaling."""
import math

import numpy as np
import pandas as pd
import pytest

from grading.metrics import MetricError
from grading.metrics.decisions import (
    SourceDecision,
    cohort_decide,
    cohort_votes,
    decision_fields,
    gold_decide,
    missing_outputs,
    panel_decide,
    samples_decide,
)
from grading.metrics.values import numeric_values, unit_bounds, unit_scale

KEYS = ["item"]


def labels(rows):
    return pd.DataFrame(rows, columns=["item", "role", "verdict", "option", "value"]).astype({"value": float})


def by_item(frame):
    return {row["item"]: SourceDecision.from_row(row) for row in frame.to_dict("records")}


class TestCohortRule:
    def test_the_votes_behind_a_decision_are_chosen_item_by_item(self):
        # One response, two criteria: the checker reviewed "a" only, so "b" keeps its annotators'
        # labels (the side-by-side page counts these to say "2 of 2 labels").
        rows = labels([
            ("a", "annotator", "met", None, np.nan), ("a", "annotator", "met", None, np.nan),
            ("a", "checker", "not_met", None, np.nan),
            ("b", "annotator", "met", None, np.nan), ("b", "annotator", "not_met", None, np.nan),
        ])
        votes = cohort_votes(rows, keys=KEYS)
        assert sorted(zip(votes["item"], votes["role"], votes["verdict"])) == [
            ("a", "checker", "not_met"), ("b", "annotator", "met"), ("b", "annotator", "not_met")]
        decided = by_item(cohort_decide(rows, keys=KEYS))
        assert {item: len(group) for item, group in votes.groupby("item")} == {k: d.n for k, d in decided.items()}
        assert cohort_votes(rows.iloc[:0], keys=KEYS).empty

    def test_checker_wins_over_a_unanimous_majority(self):
        out = by_item(cohort_decide(labels([
            ("i", "annotator", "met", None, np.nan), ("i", "annotator", "met", None, np.nan),
            ("i", "checker", "not_met", None, np.nan),
        ]), keys=KEYS))
        assert out["i"] == SourceDecision(verdict="not_met", n=1)

    def test_single_annotator_and_majority(self):
        out = by_item(cohort_decide(labels([
            ("one", "annotator", "cannot_assess", None, np.nan),
            ("three", "annotator", "met", None, np.nan), ("three", "annotator", "not_met", None, np.nan),
            ("three", "annotator", "met", None, np.nan),
        ]), keys=KEYS))
        assert out["one"] == SourceDecision(verdict="cannot_assess", n=1)
        assert out["three"] == SourceDecision(verdict="met", n=3)

    def test_a_tie_is_unresolved(self):
        out = by_item(cohort_decide(labels([
            ("i", "annotator", "met", None, np.nan), ("i", "annotator", "not_met", None, np.nan),
        ]), keys=KEYS))
        assert out["i"] == SourceDecision(unresolved=True, n=2) and not out["i"].decided

    def test_a_nominal_three_way_tie_and_an_option_majority(self):
        out = by_item(cohort_decide(labels([
            ("tie", "annotator", None, "short", 0.0), ("tie", "annotator", None, "right", 1.0),
            ("tie", "annotator", None, "long", 0.0),
            ("maj", "annotator", None, "right", 1.0), ("maj", "annotator", None, "right", 1.0),
            ("maj", "annotator", None, "long", 0.0),
        ]), keys=KEYS))
        assert out["tie"].unresolved
        assert out["maj"] == SourceDecision(option="right", value=1.0, n=3)

    def test_ordinal_values_vote_as_values(self):
        # Two annotators gave 7.5 as a value, one chose the option "high" (value 7.5): a 2-1 majority
        # for the bare value, never mixed up with the option.
        out = by_item(cohort_decide(labels([
            ("i", "annotator", None, None, 7.5), ("i", "annotator", None, None, 7.5),
            ("i", "annotator", None, "high", 7.5),
        ]), keys=KEYS))
        assert out["i"] == SourceDecision(value=7.5, n=3)

    def test_keys_keep_cohorts_apart(self):
        rows = pd.DataFrame([
            ("i", "g1", "annotator", "met", None, np.nan), ("i", "g2", "annotator", "not_met", None, np.nan),
        ], columns=["item", "cohort", "role", "verdict", "option", "value"])
        out = cohort_decide(rows, keys=["item", "cohort"])
        assert dict(zip(out["cohort"], out["verdict"])) == {"g1": "met", "g2": "not_met"}

    def test_empty(self):
        assert cohort_decide(labels([]), keys=KEYS).empty


def outputs(rows):
    frame = pd.DataFrame(rows, columns=["item", "kind", "verdict", "option", "value", "valid"])
    return frame.astype({"value": float})


class TestJudgeSamples:
    def test_binary_majority_with_invalid_outputs_as_not_met_votes(self):
        out = by_item(samples_decide(outputs([
            ("a", "binary", "met", None, np.nan, True), ("a", "binary", "met", None, np.nan, True),
            ("a", "binary", None, None, np.nan, False),
            ("b", "binary", "met", None, np.nan, True), ("b", "binary", None, None, np.nan, False),
            ("b", "binary", None, None, np.nan, True),  # valid flag but empty output: invalid too
            ("t", "binary", "met", None, np.nan, True), ("t", "binary", "not_met", None, np.nan, True),
        ]), keys=KEYS))
        assert out["a"] == SourceDecision(verdict="met", invalid=1, n=3)
        assert out["b"] == SourceDecision(verdict="not_met", invalid=2, n=3)
        assert out["t"] == SourceDecision(unresolved=True, n=2)

    def test_nominal_tie_is_unresolved_and_invalid_output_is_no_vote(self):
        out = by_item(samples_decide(outputs([
            ("tie", "nominal", None, "short", 0.0, True), ("tie", "nominal", None, "right", 1.0, True),
            ("one", "nominal", None, "right", 1.0, True), ("one", "nominal", None, None, np.nan, False),
            ("none", "nominal", None, None, np.nan, False), ("none", "nominal", None, None, np.nan, False),
        ]), keys=KEYS))
        assert out["tie"] == SourceDecision(unresolved=True, n=2)
        assert out["one"] == SourceDecision(option="right", value=1.0, invalid=1, n=2)
        assert out["none"] == SourceDecision(invalid=2, n=2)  # no decision, and not a tie

    def test_ordinal_mean_value_and_cannot_assess(self):
        out = by_item(samples_decide(outputs([
            ("m", "ordinal", None, "ok", 0.5, True), ("m", "ordinal", None, "good", 1.0, True),
            ("m", "ordinal", None, None, np.nan, False),
            ("v", "ordinal", None, None, 6.0, True), ("v", "ordinal", None, None, 9.0, True),
            ("ca", "ordinal", "cannot_assess", None, np.nan, True), ("ca", "ordinal", "cannot_assess", None, np.nan, True),
        ]), keys=KEYS))
        assert out["m"] == SourceDecision(value=0.75, invalid=1, n=3)
        assert out["v"] == SourceDecision(value=7.5, n=2)
        assert out["ca"] == SourceDecision(verdict="cannot_assess", n=2)

    def test_deciding_judges_together_or_alone_gives_the_same_decisions(self):
        # One judge with three samples beside one with a single sample: deciding both in one pass
        # (keyed by judge) must give each what it gets alone (a lone ordinal option stays an option).
        rows = outputs([
            ("a", "ordinal", None, "ok", 0.5, True), ("b", "nominal", None, "short", 0.0, True),
            ("a", "ordinal", None, "good", 1.0, True), ("a", "ordinal", None, "poor", 0.0, True),
            ("b", "nominal", None, "right", 1.0, True), ("b", "nominal", None, "right", 1.0, True),
        ])
        rows["judge"] = ["single", "single", "multi", "multi", "multi", "multi"]
        together = samples_decide(rows, keys=["judge", "item"])
        for judge in ("single", "multi"):
            alone = samples_decide(rows[rows["judge"] == judge].drop(columns="judge"), keys=KEYS)
            assert by_item(together[together["judge"] == judge].drop(columns="judge")) == by_item(alone), judge
        assert by_item(together[together["judge"] == "single"])["a"] == SourceDecision(option="ok", value=0.5, n=1)

    def test_one_sample_is_its_own_decision(self):
        out = by_item(samples_decide(outputs([
            ("a", "binary", None, None, np.nan, False), ("b", "ordinal", None, "ok", 0.5, True),
            ("c", "nominal", None, None, np.nan, False),
        ]), keys=KEYS))
        assert out["a"] == SourceDecision(verdict="not_met", invalid=1, n=1)
        assert out["b"] == SourceDecision(option="ok", value=0.5, n=1)
        assert out["c"] == SourceDecision(invalid=1, n=1)


def members(rows):
    frame = pd.DataFrame(rows, columns=["item", "member", "kind", "verdict", "option", "value", "unresolved", "invalid", "n"])
    return frame.astype({"value": float})


PANEL = [
    ("i1", "j1", "binary", "met", None, np.nan, False, 0, 1), ("i1", "j2", "binary", "not_met", None, np.nan, False, 0, 1),
    ("i1", "j3", "binary", "not_met", None, np.nan, False, 1, 1),
    ("i2", "j1", "binary", "met", None, np.nan, False, 0, 1), ("i2", "j2", "binary", None, None, np.nan, True, 0, 2),
    ("i2", "j3", "binary", "not_met", None, np.nan, False, 0, 1),
    ("o", "j1", "ordinal", None, "ok", 0.5, False, 0, 1), ("o", "j2", "ordinal", None, "good", 1.0, False, 0, 1),
    ("n", "j1", "nominal", None, "short", 0.0, False, 0, 1), ("n", "j2", "nominal", None, "right", 1.0, False, 0, 1),
    ("n", "j3", "nominal", None, "right", 1.0, False, 0, 1),
]


class TestPanels:
    @pytest.mark.parametrize("rule, i1, i2", [
        ("majority", "not_met", None), ("unanimous", None, None), ("any", "met", "met"),
    ])
    def test_rules_on_binary_items(self, rule, i1, i2):
        out = by_item(panel_decide(members(PANEL), keys=KEYS, rule=rule))
        assert (out["i1"].verdict, out["i2"].verdict) == (i1, i2)
        assert out["i1"].invalid == 1 and out["i1"].n == 3 and out["i2"].n == 4  # members' outputs add up
        assert out["i2"].unresolved == (i2 is None)  # j2's tie is no vote: 1-1 is a tie again

    def test_weighted_and_ordinal_weighted_mean(self):
        out = by_item(panel_decide(members(PANEL), keys=KEYS, rule="weighted", weights={"j1": 3, "j2": 1, "j3": 1}))
        assert out["i1"].verdict == "met"  # 3 against 1 + 1
        assert out["o"].value == pytest.approx((0.5 * 3 + 1.0) / 4) and out["o"].option is None
        assert out["n"].option == "short"

    def test_any_falls_back_to_the_majority_off_binary_criteria(self):
        out = by_item(panel_decide(members(PANEL), keys=KEYS, rule="any"))
        assert out["n"].option == "right" and out["o"].value == pytest.approx(0.75)

    def test_weighted_needs_weights(self):
        with pytest.raises(MetricError):
            panel_decide(members(PANEL), keys=KEYS, rule="weighted")


def cohort_rows(rows):
    frame = pd.DataFrame(rows, columns=["item", "cohort", "verdict", "option", "value", "unresolved"]).astype({"value": float})
    return frame.assign(invalid=0, n=1)


class TestGold:
    def test_provenance(self):
        cohorts = cohort_rows([
            ("agree", "g1", "met", None, np.nan, False), ("agree", "g2", "met", None, np.nan, False),
            ("differ", "g1", "met", None, np.nan, False), ("differ", "g2", "not_met", None, np.nan, False),
            ("tie", "g1", None, None, np.nan, True), ("tie", "g2", "met", None, np.nan, False),
            ("single", "g1", None, "good", 1.0, False),
            ("single-tie", "g2", None, None, np.nan, True),
            ("adj", "g1", "met", None, np.nan, False), ("adj", "g2", "not_met", None, np.nan, False),
        ])
        adjudications = pd.DataFrame([("adj", "not_met", None, np.nan), ("only-adj", None, "ok", 0.5)],
                                     columns=["item", "verdict", "option", "value"])
        gold = gold_decide(cohorts, adjudications, keys=KEYS).set_index("item")
        assert gold["provenance"].to_dict() == {
            "agree": "agreed", "differ": "unresolved", "tie": "unresolved", "single": "single-cohort",
            "single-tie": "unresolved", "adj": "adjudicated", "only-adj": "adjudicated",
        }
        assert gold.loc["agree", "verdict"] == "met" and gold.loc["differ", "verdict"] is None
        assert gold.loc["single", "option"] == "good" and gold.loc["adj", "verdict"] == "not_met"
        assert gold.loc["only-adj", "option"] == "ok" and gold.loc["only-adj", "cohort_decisions"] == {}
        assert gold.loc["tie", "cohort_decisions"] == {"g1": {"verdict": None}, "g2": {"verdict": "met"}}
        assert gold.loc["single", "cohort_decisions"] == {"g1": {"option": "good"}}

    def test_settled_is_the_provenance_before_the_adjudications(self):
        # The adjudication page decides gold once and reads from it which items the cohorts dispute.
        cohorts = cohort_rows([
            ("agree", "g1", "met", None, np.nan, False), ("agree", "g2", "met", None, np.nan, False),
            ("adj", "g1", "met", None, np.nan, False), ("adj", "g2", "not_met", None, np.nan, False),
            ("adj-agreed", "g1", "met", None, np.nan, False), ("adj-agreed", "g2", "met", None, np.nan, False),
        ])
        adjudications = pd.DataFrame([("adj", "not_met", None, np.nan), ("adj-agreed", "not_met", None, np.nan),
                                      ("only-adj", "met", None, np.nan)], columns=["item", "verdict", "option", "value"])
        gold = gold_decide(cohorts, adjudications, keys=KEYS, with_settled=True).set_index("item")
        assert gold["settled"].to_dict() == {"agree": "agreed", "adj": "unresolved", "adj-agreed": "agreed",
                                             "only-adj": None}
        assert gold["provenance"].to_dict() == {"agree": "agreed", "adj": "adjudicated", "adj-agreed": "adjudicated",
                                                "only-adj": "adjudicated"}
        without = gold_decide(cohorts, None, keys=KEYS, with_settled=True).set_index("item")
        assert without["settled"].to_dict() == without["provenance"].to_dict()
        assert "settled" not in gold_decide(cohorts, adjudications, keys=KEYS).columns

    def test_nothing(self):
        assert gold_decide(cohort_rows([]), None, keys=KEYS).empty
        assert list(gold_decide(cohort_rows([]), None, keys=KEYS, with_settled=True)["settled"]) == []


class TestValues:
    def test_numeric_values_in_the_rubrics_own_scale(self):
        out = numeric_values(kind=["binary", "binary", "binary", "ordinal", "ordinal", "nominal"],
                             verdict=["met", "not_met", "cannot_assess", None, "cannot_assess", None],
                             value=[np.nan, np.nan, np.nan, 7.5, np.nan, 1.0])
        assert out[:2].tolist() == [1.0, 0.0] and math.isnan(out[2]) and out[3] == 7.5
        assert math.isnan(out[4]) and out[5] == 1.0

    def test_unit_scale(self):
        assert unit_scale([0.25, 7.5, 3.0], [0.0, 0.0, 1.0], [1.0, 10.0, 5.0]).tolist() == [0.25, 0.75, 0.5]
        assert unit_bounds([0.5], [0.5])[1].tolist() == [1.0]  # one value inside [0, 1]: used as it is
        with pytest.raises(MetricError):
            unit_scale([5.0], [5.0], [5.0])  # one value outside [0, 1]: no scale to rescale by

    def test_bundle_fields(self):
        assert decision_fields(verdict=None, option="ok", value=0.5) == {"option": "ok"}
        assert decision_fields(verdict="met", option=None, value=None) == {"verdict": "met"}
        assert decision_fields(verdict=None, option=None, value=7.5) == {"value": 7.5}
        assert decision_fields(verdict=None, option=None, value=float("nan")) == {"verdict": None}
        assert SourceDecision(unresolved=True).text() == "unresolved" and SourceDecision(verdict="not_met").text() == "not met"


class TestMissingOutputs:
    def test_the_items_a_judge_gave_no_output_for(self):
        keys = ["judge", "response_id", "criterion_id"]
        expected = pd.DataFrame([("j1", 1, 10, "binary"), ("j1", 1, 11, "ordinal"), ("j1", 2, 10, "binary"),
                                 ("j2", 1, 10, "binary"), ("j2", 1, 11, "ordinal")], columns=[*keys, "kind"])
        decided = pd.DataFrame([("j1", 1, 10), ("j1", 1, 10), ("j2", 1, 11), ("j3", 2, 10)], columns=keys)
        missing = missing_outputs(expected, decided, keys=keys)
        assert missing[keys].values.tolist() == [["j1", 1, 11], ["j1", 2, 10], ["j2", 1, 10]]
        assert missing["verdict"].tolist() == [None, "not_met", "not_met"]  # not met on a binary criterion only
        assert missing["invalid"].tolist() == [1, 1, 1] and missing["n"].tolist() == [0, 0, 0]
        assert missing_outputs(expected, decided.iloc[:0], keys=keys)[keys].values.tolist() == expected[keys].values.tolist()
        assert missing_outputs(expected, expected, keys=keys).empty

    def test_the_same_items_as_a_merge_would_find(self):
        # The keys are numbered together instead of merged: the same rows, in the same order, as
        # the left merge with an indicator it replaced, keys of mixed types and missing values included.
        rng = np.random.default_rng(7)
        keys = ["judge", "response_id", "criterion_id"]
        for size in (0, 1, 50, 2_000):
            expected = pd.DataFrame({"judge": rng.choice(["a", "b", None], size).astype(object),
                                     "response_id": rng.integers(0, 20, size), "criterion_id": rng.integers(0, 5, size),
                                     "kind": "binary"})
            decided = expected.sample(frac=0.6, random_state=1)[keys].astype({"criterion_id": float})
            merged = expected.merge(decided.drop_duplicates(), on=keys, how="left", indicator=True)
            wanted = merged.loc[merged["_merge"] == "left_only", keys].reset_index(drop=True)
            got = missing_outputs(expected, decided, keys=keys)[keys]
            assert got.astype({"criterion_id": int}).equals(wanted.astype({"criterion_id": int}))
