"""Empirical quantile mapping, level snapping, the seeded split and QWK before/after."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from grading.metrics import (
    MetricError,
    apply_quantile_map,
    evaluate_calibration,
    fit_quantile_map,
    snap_to_levels,
    split_items,
)


def test_quantile_map_worked_by_hand():
    g = fit_quantile_map([4, 1, 3, 2], [10, 40, 20, 30])
    # F_judge(2) = F_judge(2.5) = 0.5 → smallest human x with F_human(x) ≥ 0.5 is 20
    assert apply_quantile_map(g, [1, 2, 2.5, 4, 0, 9]).tolist() == [10, 20, 20, 40, 10, 40]


def test_quantile_map_with_unequal_sample_sizes():
    g = fit_quantile_map([1, 2, 3, 4], [0, 1])
    # F_judge: ¼, ½, ¾, 1 → F_human⁻¹: 0, 0, 1, 1
    assert g([1, 2, 3, 4]).tolist() == [0, 0, 1, 1]


def test_quantile_map_matches_numpy_inverted_cdf():
    rng = np.random.default_rng(2)
    judge = rng.normal(0.6, 0.1, 137)
    human = rng.integers(0, 5, 89).astype(float)
    g = fit_quantile_map(judge, human)
    z = rng.normal(0.6, 0.15, 300)
    share = np.searchsorted(np.sort(judge), z, side="right") / judge.size
    expected = np.quantile(human, np.clip(share, 1e-12, 1), method="inverted_cdf")
    assert np.array_equal(g(z), expected)


def test_snap_to_levels_ties_go_down():
    assert snap_to_levels([1.5, 1.6, 0, 5, 2.0, 2.49], [1, 2, 3]).tolist() == [1, 2, 1, 3, 2, 2]


def test_split_items_is_seeded_disjoint_and_complete():
    items = [f"i{n}" for n in range(10)] * 2
    calib, hold = split_items(items, holdout_fraction=0.3, seed=4)
    assert len(hold) == 3 and len(calib) == 7
    assert set(calib).isdisjoint(hold)
    assert set(calib) | set(hold) == {f"i{n}" for n in range(10)}
    again = split_items(items, holdout_fraction=0.3, seed=4)
    assert again[1].tolist() == hold.tolist()
    other = split_items(items, holdout_fraction=0.3, seed=5)
    assert other[1].tolist() != hold.tolist()
    with pytest.raises(MetricError):
        split_items(["only"], holdout_fraction=0.5)


def test_quantile_mapping_undoes_a_monotone_distortion():
    rng = np.random.default_rng(8)
    human = rng.integers(0, 5, 400).astype(float)
    df = pd.DataFrame({"item": np.arange(400), "human_score": human, "judge_score": human / 2})
    report = evaluate_calibration(df, levels=[0, 1, 2, 3, 4], seed=1)
    assert report.n_calibration + report.n_holdout == 400
    assert report.qwk_after == pytest.approx(1.0)

    # before: judge h/2 snapped to the 0..4 grid (0.5 → 0, 1.5 → 1 by the tie rule)
    _, hold = split_items(df["item"], holdout_fraction=0.5, seed=1)
    held = df[df["item"].isin(hold)]
    snapped = {0.0: 0, 0.5: 0, 1.0: 1, 1.5: 1, 2.0: 2}
    judge_levels = held["judge_score"].map(snapped).to_numpy()
    expected = cohen_kappa_score(
        held["human_score"].astype(int), judge_levels, labels=[0, 1, 2, 3, 4], weights="quadratic"
    )
    assert report.qwk_before == pytest.approx(expected)
    assert report.qwk_before < 0.9


def test_held_out_distributions_by_hand():
    """Ten items the humans all score 1 and the judge 0.4 on the scale 0, 1: five are held out; the raw
    judge snaps them to 0, the map sends 0.4 to the humans' only score, 1."""
    df = pd.DataFrame({"item": range(10), "human_score": [1.0] * 10, "judge_score": [0.4] * 10})
    report = evaluate_calibration(df, levels=[0, 1])
    assert report.n_holdout == 5
    assert report.holdout_counts == {"human": (0, 5), "raw": (5, 0), "calibrated": (0, 5)}


def test_held_out_distributions_follow_the_snapped_scores():
    rng = np.random.default_rng(8)
    human = rng.integers(0, 5, 400).astype(float)
    df = pd.DataFrame({"item": np.arange(400), "human_score": human, "judge_score": human / 2})
    report = evaluate_calibration(df, levels=[0, 1, 2, 3, 4], seed=1)
    _, hold = split_items(df["item"], holdout_fraction=0.5, seed=1)
    held = df[df["item"].isin(hold)]["human_score"]
    expected_human = tuple(int((held == level).sum()) for level in range(5))
    # h / 2 snapped (ties down): 0, 0.5 → 0; 1, 1.5 → 1; 2 → 2
    expected_raw = (int(held.isin([0, 1]).sum()), int(held.isin([2, 3]).sum()), int((held == 4).sum()), 0, 0)
    assert report.holdout_counts == {"human": expected_human, "raw": expected_raw, "calibrated": expected_human}
    assert sum(expected_human) == report.n_holdout
