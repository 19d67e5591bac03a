"""The Autorubric weighted score (SPEC §3), worked by hand for each cannot-assess
strategy, penalty-only rubrics, rescaling, clamping and the length penalty; the
vectorised scorer must agree with the single-response one."""

import numpy as np
import pandas as pd
import pytest

from grading.metrics import (
    CriterionOutcome as C,
)
from grading.metrics import (
    LengthPenalty,
    MetricError,
    score_response,
    score_responses,
    word_count,
)

# Contributions of the assessed criteria: 3·1 + 2·0 + 1·0.7 − 2·1 = 1.7
RUBRIC = [
    C(weight=3, value=1),  # binary, met
    C(weight=2, value=0),  # binary, not met
    C(weight=1, value=7, min_value=0, max_value=10),  # 0–10 scale → 0.7
    C(weight=-2, value=1),  # penalty, met
    C(weight=2, value=None),  # binary, cannot assess
    C(weight=1, value=0.5, min_value=0.25, max_value=1.0, not_applicable=True),  # N/A option
    C(weight=-1, value=None),  # penalty, cannot assess
]


@pytest.mark.parametrize(
    "strategy, expected",
    [
        # scored: first four only; P = 3 + 2 + 1, Nn = 2
        ("skip", 1.7 / 6),
        # everything scored, cannot-assess adds 0; P = 6 + 2 + 1 = 9
        ("zero", 1.7 / 9),
        # + 0.5·2 + 0.5·1 for the positive ones, 0 for the penalty
        ("partial", (1.7 + 1.0 + 0.5) / 9),
        # worst cases: 2·0, 1·0.25 (lowest option), −1·1 (penalty met)
        ("fail", (1.7 + 0.0 + 0.25 - 1.0) / 9),
    ],
)
def test_each_strategy_worked_by_hand(strategy, expected):
    assert score_response(RUBRIC, strategy=strategy) == pytest.approx(expected)


def test_partial_credit_parameter():
    assert score_response(RUBRIC, strategy="partial", partial_credit=1.0) == pytest.approx((1.7 + 3.0) / 9)


@pytest.mark.parametrize(
    "outcomes, expected",
    [
        ([C(-2, 1), C(-1, 0)], 1 - 2 / 3),  # clamp(1 + S/Nn): S = −2, Nn = 3
        ([C(-2, 1), C(-1, 1)], 0.0),
        ([C(-2, 0), C(-1, 0)], 1.0),
    ],
)
def test_penalty_only_rubric(outcomes, expected):
    assert score_response(outcomes, strategy="skip") == pytest.approx(expected)


def test_penalty_only_rubric_under_fail_counts_unassessed_penalty_as_met():
    assert score_response([C(-2, 0), C(-1, None)], strategy="fail") == pytest.approx(1 - 1 / 3)


def test_clamped_at_zero_when_penalties_outweigh():
    # S = 0 − 3 = −3, P = 1 → S/P = −3 → 0
    assert score_response([C(1, 0), C(-3, 1)], strategy="skip") == 0.0


def test_zero_weights_only_score_zero_and_nothing_scored_is_none():
    assert score_response([C(0, 1)], strategy="skip") == 0.0
    assert score_response([C(2, None), C(-1, None)], strategy="skip") is None
    assert score_response([], strategy="zero") is None


def test_scale_outside_unit_interval_is_rescaled_by_its_range():
    # options −2..2, value 1 → 0.75; values already in [0, 1] stay as they are
    assert score_response([C(1, 1, min_value=-2, max_value=2)], strategy="skip") == pytest.approx(0.75)
    assert score_response([C(1, 0.4, min_value=0.2, max_value=0.9)], strategy="skip") == pytest.approx(0.4)


def test_value_outside_its_options_is_rejected():
    with pytest.raises(MetricError):
        score_response([C(1, 11, min_value=0, max_value=10)], strategy="skip")
    with pytest.raises(MetricError):
        score_response([C(1, 5, min_value=5, max_value=5)], strategy="skip")
    with pytest.raises(MetricError):
        score_response(RUBRIC, strategy="generous")


def test_length_penalty_worked_by_hand():
    penalty = LengthPenalty(free_words=100, cap_words=300, penalty_at_cap=0.2, exponent=2)
    # 200 words: 0.2 · (100/200)² = 0.05
    assert penalty.amount(200) == pytest.approx(0.05)
    assert penalty.amount(50) == 0.0
    assert penalty.amount(1000) == pytest.approx(0.2)
    score = score_response(RUBRIC, strategy="skip", length_penalty=penalty, words=200)
    assert score == pytest.approx(1.7 / 6 - 0.05)
    floored = score_response([C(1, 0.1)], strategy="skip", length_penalty=penalty, words=1000)
    assert floored == 0.0
    with pytest.raises(MetricError):
        LengthPenalty(free_words=10, cap_words=10, penalty_at_cap=0.1)


def test_word_count():
    assert word_count("  one two\nthree\tfour ") == 4


def _frame(responses):
    rows = []
    for rid, outcomes in responses.items():
        for o in outcomes:
            rows.append(
                {
                    "response": rid,
                    "weight": o.weight,
                    "value": np.nan if o.value is None else o.value,
                    "min_value": o.min_value,
                    "max_value": o.max_value,
                    "not_applicable": o.not_applicable,
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("strategy", ["skip", "zero", "partial", "fail"])
def test_vectorised_scores_match_hand_values_and_single_scorer(strategy):
    rng = np.random.default_rng(11)
    responses = {"hand": RUBRIC, "empty": [C(1, None)]}
    for rid in range(200):
        outcomes = []
        for _ in range(rng.integers(1, 8)):
            weight = float(rng.choice([-2, -1, 0, 1, 2, 3]))
            if rng.random() < 0.5:
                value = None if rng.random() < 0.2 else float(rng.integers(0, 2))
                outcomes.append(C(weight, value))
            else:
                value = None if rng.random() < 0.2 else float(rng.integers(0, 11))
                outcomes.append(C(weight, value, min_value=0, max_value=10))
        responses[rid] = outcomes
    table = score_responses(_frame(responses), strategy=strategy)
    for rid, outcomes in responses.items():
        single = score_response(outcomes, strategy=strategy)
        got = table.loc[rid, "score"]
        if single is None:
            assert np.isnan(got)
        else:
            assert got == pytest.approx(single)
    assert table.loc["hand", "n_cannot_assess"] == 3
    assert table.loc["hand", "n_scored"] == (4 if strategy == "skip" else 7)
    if strategy == "skip":
        assert np.isnan(table.loc["empty", "score"])


def test_vectorised_length_penalty_uses_words_per_response():
    df = _frame({"r1": [C(1, 1)], "r2": [C(1, 1)]})
    penalty = LengthPenalty(free_words=10, cap_words=20, penalty_at_cap=0.5)
    table = score_responses(df, strategy="skip", length_penalty=penalty, words=pd.Series({"r1": 5, "r2": 15}))
    assert table.loc["r1", "score"] == pytest.approx(1.0)
    assert table.loc["r2", "score"] == pytest.approx(0.75)
