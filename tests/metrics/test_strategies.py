"""Cannot-assess strategies and invalid verdicts in binary comparisons, worked by hand."""

import pytest

from grading.metrics import (
    CannotAssess,
    MetricError,
    apply_cannot_assess,
    binary_agreement,
    paired_decisions,
    parse_strategy,
)

A = ["met", "met", "not_met", "cannot_assess", "not_met", None]
B = ["met", "cannot_assess", "not_met", "met", "met", "met"]


def _mf1(strategy, penalty=None):
    a = apply_cannot_assess(A, strategy=strategy, penalty=penalty)
    b = apply_cannot_assess(B, strategy=strategy, penalty=penalty)
    return binary_agreement(*paired_decisions(a, b))


def test_skip_drops_the_pair():
    # pairs 0, 2, 4, 5 stay: a = [1,0,0,0] (None → 0), b = [1,0,1,1]
    result = _mf1("skip")
    assert result.n == 4
    assert (result.tp, result.fp, result.fn, result.tn) == (1, 2, 0, 1)
    assert result.mf1 == pytest.approx(0.5)

@pytest.mark.parametrize("strategy", ["zero", "partial", "fail"])
def test_zero_partial_and_fail_count_not_met(strategy):
    # a = [1,1,0,0,0,0], b = [1,0,0,1,1,1]: TP 1, FN 1, FP 3, TN 1 → both F1 = 2/6
    result = _mf1(strategy)
    assert result.n == 6
    assert (result.tp, result.fp, result.fn, result.tn) == (1, 3, 1, 1)
    assert result.mf1 == pytest.approx(1 / 3)

def test_fail_on_a_penalty_criterion_counts_met():
    penalty = [False, False, False, True, False, False]
    # a = [1,1,0,1,0,0]: TP 2, FN 1, FP 2, TN 1 → F1_met 4/7, F1_not_met 2/5
    result = _mf1("fail", penalty=penalty)
    assert (result.tp, result.fp, result.fn, result.tn) == (2, 2, 1, 1)
    assert result.mf1 == pytest.approx((4 / 7 + 2 / 5) / 2)

def test_no_verdict_counts_not_met_and_cannot_assess_is_tallied():
    resolved = apply_cannot_assess(A + ["garbage", float("nan")], strategy=CannotAssess.ZERO)
    assert not hasattr(resolved, "n_invalid")  # the invalid tally is the decision rules' (judge_outputs)
    assert resolved.n_cannot_assess == 1
    assert resolved.values.tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    assert resolved.keep.all()

def test_skip_keeps_invalid_rows():
    resolved = apply_cannot_assess(A, strategy="SKIP")
    assert resolved.keep.tolist() == [True, True, True, False, True, True]
    assert resolved.n_kept == 5

def test_unknown_strategy():
    with pytest.raises(MetricError):
        parse_strategy("lenient")

def test_paired_sources_must_align():
    with pytest.raises(MetricError):
        paired_decisions(
            apply_cannot_assess(["met"], strategy="zero"), apply_cannot_assess([], strategy="zero")
        )
