"""Vote rules and voter agreement, worked by hand, including ties."""

import pandas as pd
import pytest

from grading.metrics import MetricError, ensemble_vote

VOTES = pd.DataFrame(
    [
        ("i1", "j1", 1), ("i1", "j2", 1), ("i1", "j3", 0),
        ("i2", "j1", 1), ("i2", "j2", 0),
        ("i3", "j1", 0), ("i3", "j2", 0), ("i3", "j3", 0),
        ("i4", "j1", 0), ("i4", "j2", 1), ("i4", "j3", 1),
        ("i5", "j2", 1),
    ],
    columns=["item", "voter", "vote"],
)  # fmt: skip
WEIGHTS = {"j1": 2.0, "j2": 1.0, "j3": 1.0}


def _decisions(rule, **kwargs):
    result = ensemble_vote(VOTES, rule=rule, **kwargs)
    return result, result.decisions.to_dict()


def test_majority_with_a_tie_left_unresolved():
    result, d = _decisions("majority")
    assert d == {"i1": 1, "i2": None, "i3": 0, "i4": 1, "i5": 1}
    assert result.n_items == 5
    assert result.n_unresolved == 1


def test_weighted_breaks_the_tie_and_can_tie_itself():
    # i2: j1 (2) for 1 vs j2 (1) for 0 → 1; i4: j1 (2) for 0 vs j2 + j3 (2) for 1 → tie
    result, d = _decisions("weighted", weights=WEIGHTS)
    assert d == {"i1": 1, "i2": 1, "i3": 0, "i4": None, "i5": 1}
    assert result.n_unresolved == 1


def test_unanimous():
    result, d = _decisions("unanimous")
    assert d == {"i1": None, "i2": None, "i3": 0, "i4": None, "i5": 1}
    assert result.n_unresolved == 3


def test_any():
    _, d = _decisions("any")
    assert d == {"i1": 1, "i2": 1, "i3": 0, "i4": 1, "i5": 1}


def test_mean_agreement_is_modal_share_over_items_with_two_votes():
    result = ensemble_vote(VOTES, rule="majority")
    # i1 2/3, i2 1/2, i3 1, i4 2/3; i5 has a single vote and is left out
    assert result.mean_agreement == pytest.approx((2 / 3 + 1 / 2 + 1 + 2 / 3) / 4)
    assert result.n_items_agreement == 4


def test_string_labels_with_three_way_plurality_tie():
    df = pd.DataFrame(
        {
            "item": ["a"] * 4 + ["b"] * 3,
            "voter": list("wxyz") + list("wxy"),
            "vote": ["met", "met", "not_met", "cannot_assess", "met", "not_met", "cannot_assess"],
        }
    )
    d = ensemble_vote(df, rule="majority").decisions.to_dict()
    assert d == {"a": "met", "b": None}
    assert ensemble_vote(df, rule="any", positive="met", negative="not_met").decisions["b"] == "met"


def test_invalid_input_is_rejected():
    with pytest.raises(MetricError):
        ensemble_vote(VOTES, rule="weighted")
    with pytest.raises(MetricError):
        ensemble_vote(VOTES, rule="weighted", weights={"j1": 1.0})
    with pytest.raises(MetricError):
        ensemble_vote(VOTES, rule="plurality-ish")
    missing = VOTES.astype({"vote": object})
    missing.loc[0, "vote"] = None
    with pytest.raises(MetricError):
        ensemble_vote(missing, rule="majority")
