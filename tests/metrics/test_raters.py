"""One annotator's quality figures, pinned to hand calculations: agreement with gold pooled over
check items, the rolling window and its drift, the alert and its minimum, nominal kappa (worked by
hand), and time per item."""
import pytest

from grading.metrics import CheckItem, MetricError, gold_quality, nominal_kappa, rolling_agreement, seconds_summary

ITEMS = [CheckItem(3, 3), CheckItem(2, 3), CheckItem(0, 3), CheckItem(1, 3)]  # 6 of 12 decisions match gold


def test_rolling_agreement_pools_the_last_window_items():
    # after 1: 3/3; after 2: 5/6; after 3 (window 2): (2+0)/6; after 4: (0+1)/6
    assert rolling_agreement(ITEMS, window=2) == pytest.approx([1.0, 5 / 6, 2 / 6, 1 / 6])
    assert rolling_agreement([], window=3) == []
    assert rolling_agreement([CheckItem(0, 0)], window=3) == [None]
    with pytest.raises(MetricError):
        rolling_agreement(ITEMS, window=0)


def test_the_alert_needs_the_minimum_and_names_what_is_below():
    quality = gold_quality(ITEMS, window=2, threshold=0.6, min_items=4)
    assert (quality.n_items, quality.n_decisions, quality.hits) == (4, 12, 6)
    assert quality.agreement == pytest.approx(0.5) and quality.window_agreement == pytest.approx(1 / 6)
    assert quality.alert and quality.alert_reason == "agreement with gold below 60%: overall 50%, last 2 items 17%"
    assert not gold_quality(ITEMS, window=2, threshold=0.6, min_items=5).alert  # not enough items yet
    # Overall above the threshold, the last two items below: drift alone raises it.
    drifting = gold_quality([CheckItem(3, 3)] * 6 + [CheckItem(0, 3)] * 2, window=2, threshold=0.6, min_items=4)
    assert drifting.agreement == pytest.approx(0.75) and drifting.alert
    assert drifting.alert_reason == "agreement with gold below 60%: last 2 items 0%"
    steady = gold_quality([CheckItem(3, 3)] * 8, window=2, threshold=0.6, min_items=4)
    assert not steady.alert and steady.alert_reason == ""


def test_a_window_as_long_as_the_items_is_stated_once_and_bad_input_is_refused():
    quality = gold_quality(ITEMS[:2], window=5, threshold=0.9, min_items=1)
    assert quality.window_items == 2 and quality.alert_reason == "agreement with gold below 90%: overall 83%"
    empty = gold_quality([], window=5, threshold=0.9, min_items=0)
    assert empty.agreement is None and empty.window_agreement is None and not empty.alert
    with pytest.raises(MetricError):
        gold_quality([CheckItem(4, 3)], window=2, threshold=0.5, min_items=1)
    with pytest.raises(MetricError):
        gold_quality(ITEMS, window=2, threshold=1.5, min_items=1)


def test_nominal_kappa_worked_by_hand():
    a = ["verdict:met"] * 4 + ["verdict:not_met"] * 4 + ["option:good"] * 2
    b = ["verdict:met"] * 3 + ["verdict:not_met"] * 5 + ["option:good"] * 2
    # p_o = 9/10; p_e = (4·3 + 4·5 + 2·2) / 100 = 0.36; kappa = (0.9 − 0.36) / 0.64 = 0.84375
    assert nominal_kappa(a, b) == pytest.approx(0.84375)
    assert nominal_kappa([], []) is None
    assert nominal_kappa(["verdict:met"] * 3, ["verdict:met"] * 3) is None  # one category: chance agreement is 1
    with pytest.raises(MetricError):
        nominal_kappa(["verdict:met"], [])


def test_seconds_per_item():
    assert seconds_summary([30.0, 10.0, 20.0, 100.0]) == (25.0, 40.0)
    assert seconds_summary([]) == (None, None)
