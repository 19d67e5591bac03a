"""Binary, case-level, ordinal and Krippendorff agreement, pinned to hand calculations,
scikit-learn on the same data and Krippendorff's published worked example."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score

from grading.metrics import (
    MetricError,
    binary_agreement,
    case_level_mf1,
    krippendorff_alpha,
    mf1_by_group,
    mf1_from_counts,
    ordinal_agreement,
)

nan = np.nan

# Reference A and compared B: TP = 3, FN = 1, FP = 1, TN = 5.
A_2X2 = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
B_2X2 = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]


def test_binary_agreement_two_by_two_table_worked_by_hand():
    result = binary_agreement(A_2X2, B_2X2)
    assert (result.n, result.tp, result.fp, result.fn, result.tn) == (10, 3, 1, 1, 5)
    # F1_met = 2·3 / (2·3 + 1 + 1) = 0.75; F1_not_met = 2·5 / (2·5 + 1 + 1) = 10/12
    assert result.f1_met == pytest.approx(0.75)
    assert result.f1_not_met == pytest.approx(10 / 12)
    assert result.mf1 == pytest.approx((0.75 + 10 / 12) / 2)
    # p_o = 0.8, p_e = 0.4·0.4 + 0.6·0.6 = 0.52, kappa = 0.28 / 0.48
    assert result.cohen_kappa == pytest.approx(0.28 / 0.48)
    assert result.percent_agreement == pytest.approx(0.8)
    assert result.positive_rate_a == pytest.approx(0.4)
    assert result.positive_rate_b == pytest.approx(0.4)

def test_binary_agreement_matches_sklearn_macro_f1_and_kappa_on_random_data():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2, 500)
    b = np.where(rng.random(500) < 0.8, a, 1 - a)
    result = binary_agreement(a, b)
    assert result.mf1 == pytest.approx(f1_score(a, b, average="macro"))
    assert result.f1_met == pytest.approx(f1_score(a, b, pos_label=1))
    assert result.cohen_kappa == pytest.approx(cohen_kappa_score(a, b))

@pytest.mark.parametrize("shape", ["random", "all met", "all not met", "met in a only", "met in b only", "one pair",
                                   "perfect", "opposite"])
def test_binary_agreement_is_exactly_sklearn_on_the_pairs_themselves(shape):
    """The figures come from scikit-learn on the four (a, b) pairs weighted by their counts: exactly
    those of scikit-learn on the pairs one by one, undefined where those are undefined."""
    rng = np.random.default_rng(len(shape))
    a = rng.integers(0, 2, 997)
    b = np.where(rng.random(997) < 0.7, a, 1 - a)
    a, b = {
        "random": (a, b), "all met": (np.ones(50, int), np.ones(50, int)), "all not met": (np.zeros(9, int), np.zeros(9, int)),
        "met in a only": (a, np.zeros(997, int)), "met in b only": (np.zeros(997, int), b), "one pair": (np.array([1]), np.array([0])),
        "perfect": (a, a), "opposite": (a, 1 - a),
    }[shape]
    result = binary_agreement(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f1_met, f1_not = f1_score(a, b, labels=[1, 0], average=None, zero_division=np.nan)
        kappa = cohen_kappa_score(a, b, labels=[0, 1], replace_undefined_by=np.nan)
    as_none = [None if np.isnan(x) else float(x) for x in (f1_met, f1_not, kappa)]
    assert [result.f1_met, result.f1_not_met, result.cohen_kappa] == as_none


def test_class_absent_from_both_sources_leaves_mf1_undefined():
    result = binary_agreement([0, 0, 0], [0, 0, 0])
    assert result.f1_met is None
    assert result.f1_not_met == 1.0
    assert result.mf1 is None
    assert result.cohen_kappa is None
    assert result.percent_agreement == 1.0

def test_class_absent_from_one_source_only_is_defined():
    # met occurs in A only: F1_met = 0 / (0 + 0 + 2) = 0, F1_not_met = 2 / (2 + 0 + 2) = 0.5
    result = binary_agreement([1, 1, 0], [0, 0, 0])
    assert result.f1_met == 0.0
    assert result.f1_not_met == pytest.approx(0.5)
    assert result.mf1 == pytest.approx(0.25)

def test_binary_agreement_of_nothing_is_all_none():
    result = binary_agreement([], [])
    assert result.n == 0
    assert result.mf1 is None and result.percent_agreement is None

def test_binary_agreement_rejects_unequal_lengths_and_non_binary_values():
    with pytest.raises(MetricError):
        binary_agreement([1, 0], [1])
    with pytest.raises(MetricError):
        binary_agreement([1, 2], [1, 0])


def _case_frame():
    rows = []
    # (m1, c1): perfect agreement with both classes → MF1 1
    rows += [("m1", "c1", a, a) for a in (1, 0, 1)]
    # (m1, c2): both sources mark every criterion not met → undefined
    rows += [("m1", "c2", 0, 0) for _ in range(4)]
    # (m2, c1): the hand-worked 2×2 table → MF1 (0.75 + 10/12) / 2
    rows += [("m2", "c1", a, b) for a, b in zip(A_2X2, B_2X2)]
    # (m2, c2): total disagreement → F1_met = F1_not_met = 0
    rows += [("m2", "c2", 1, 0), ("m2", "c2", 0, 1)]
    return pd.DataFrame(rows, columns=["model", "case", "a", "b"])


def test_case_level_distribution_worked_by_hand():
    result = case_level_mf1(_case_frame())
    mid = (0.75 + 10 / 12) / 2
    assert result.n == 4
    assert result.n_undefined == 1
    assert result.mean == pytest.approx((1 + mid + 0) / 3)
    assert result.median == pytest.approx(mid)
    # linear interpolation over the sorted values [0, mid, 1]
    assert result.q25 == pytest.approx(mid / 2)
    assert result.q75 == pytest.approx((mid + 1) / 2)
    assert result.share_below == pytest.approx(1 / 3)

def test_case_level_per_group_lists_undefined_case_and_low_tail():
    result = case_level_mf1(_case_frame())
    by_key = result.per_group.set_index(["model", "case"])
    assert np.isnan(by_key.loc[("m1", "c2"), "mf1"])
    assert by_key.loc[("m1", "c2"), "n"] == 4
    tail = result.low_agreement()
    assert list(zip(tail["model"], tail["case"])) == [("m2", "c2")]

def test_mf1_from_counts_is_case_level_mf1_of_the_counted_pairs():
    # (m1, c1) the hand-worked 2×2 table, then total disagreement, then a class in neither source.
    mf1 = mf1_from_counts(tp=[3, 0, 4], fp=[1, 1, 0], fn=[1, 1, 0], tn=[5, 0, 0])
    assert mf1[0] == pytest.approx((0.75 + 10 / 12) / 2) and mf1[1] == 0 and np.isnan(mf1[2])
    per = case_level_mf1(_case_frame()).per_group
    assert mf1_from_counts(per["tp"], per["fp"], per["fn"], per["tn"]) == pytest.approx(per["mf1"].to_numpy(), nan_ok=True)


def test_case_level_threshold_moves_the_tail():
    result = case_level_mf1(_case_frame(), threshold=0.9)
    assert result.share_below == pytest.approx(2 / 3)

def test_case_level_each_group_matches_sklearn():
    rng = np.random.default_rng(3)
    n = 3000
    df = pd.DataFrame(
        {
            "model": rng.choice(["x", "y", "z"], n),
            "case": rng.integers(0, 40, n),
            "a": rng.integers(0, 2, n),
        }
    )
    df["b"] = np.where(rng.random(n) < 0.7, df["a"], 1 - df["a"])
    result = case_level_mf1(df)
    for row in result.per_group.itertuples():
        group = df[(df["model"] == row.model) & (df["case"] == row.case)]
        classes = set(group["a"]) | set(group["b"])
        if classes == {0, 1}:
            assert row.mf1 == pytest.approx(f1_score(group["a"], group["b"], average="macro"))
        else:
            assert np.isnan(row.mf1)

def test_case_level_all_groups_undefined():
    df = pd.DataFrame({"model": ["m"] * 2, "case": ["c"] * 2, "a": [1, 1], "b": [1, 1]})
    result = case_level_mf1(df)
    assert result.n_undefined == 1
    assert result.mean is None and result.share_below is None


def test_per_model_equals_binary_agreement_of_its_rows():
    df = _case_frame()
    result = mf1_by_group(df, by="model")
    assert set(result) == {"m1", "m2"}
    m2 = df[df["model"] == "m2"]
    assert result["m2"].mf1 == pytest.approx(f1_score(m2["a"], m2["b"], average="macro"))
    assert result["m1"].mf1 == pytest.approx(1.0)

def test_each_group_is_exactly_binary_agreement_of_its_rows():
    """Counted per group at once, every figure of every group is the one ``binary_agreement`` gives
    on the group's rows alone (a group with one class only, too)."""
    rng = np.random.default_rng(3)
    n = 4000
    df = pd.DataFrame({"model": rng.choice(["m1", "m2", "m3", "m4"], n), "a": rng.integers(0, 2, n)},
                      index=rng.permutation(n) + 100)
    df["b"] = np.where(rng.random(n) < 0.75, df["a"], 1 - df["a"])
    df.loc[df["model"] == "m4", ["a", "b"]] = 1
    result = mf1_by_group(df, by="model")
    assert list(result) == ["m1", "m2", "m3", "m4"]
    for model, group in df.groupby("model"):
        assert result[model] == binary_agreement(group["a"].to_numpy(), group["b"].to_numpy())
    assert result["m4"].mf1 is None
    assert list(mf1_by_group(df, by=["model"])) == [("m1",), ("m2",), ("m3",), ("m4",)]
    assert mf1_by_group(df.iloc[:0], by="model") == {}


def test_mf1_by_group_list_of_keys_gives_tuple_keys():
    result = mf1_by_group(_case_frame(), by=["model", "case"])
    assert result[("m1", "c2")].mf1 is None


OPTIONS = [0, 1, 5, 10]


def test_qwk_on_option_order_worked_by_hand():
    # indices a = [0,1,2,3,3], b = [0,2,2,3,1]; Σ(i−j)²·O = 5, Σ(i−j)²·E = 61/5
    result = ordinal_agreement([0, 1, 5, 10, 10], [0, 5, 5, 10, 1], option_values=OPTIONS)
    assert result.n == 5
    assert result.qwk == pytest.approx(1 - 5 / (61 / 5))
    assert result.exact == pytest.approx(0.6)
    assert result.adjacent == pytest.approx(0.8)

def test_ordinal_qwk_uses_order_not_raw_values():
    # Weighting by raw values (v_i − v_j)² instead would give Σw·O = 97, Σw·E = 793/5,
    # kappa 1 − 97 / 158.6 ≈ 0.388; the order index gives ≈ 0.590.
    raw_value_kappa = 1 - 97 / (793 / 5)
    result = ordinal_agreement([0, 1, 5, 10, 10], [0, 5, 5, 10, 1], option_values=OPTIONS)
    assert result.qwk == pytest.approx(1 - 5 / (61 / 5))
    assert abs(result.qwk - raw_value_kappa) > 0.1


def test_ordinal_unknown_value_is_rejected():
    with pytest.raises(MetricError):
        ordinal_agreement([0, 2], [0, 1], option_values=OPTIONS)

def test_ordinal_constant_identical_ratings_have_undefined_qwk():
    result = ordinal_agreement([1, 1], [1, 1], option_values=OPTIONS)
    assert result.qwk is None
    assert result.exact == 1.0


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", 4 coders × 12 units
# with missing data; published alphas: nominal .743, ordinal .815, interval .849, ratio .797.
KRIPPENDORFF_EXAMPLE = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


def test_krippendorff_published_example_nominal_by_hand():
    # Coincidences from the paper: n = 40 pairable values (unit 12 has one value),
    # n_c = 9, 13, 10, 5, 3 and Σ o_cc = 32.
    n, diagonal = 40, 32
    expected_pairs = sum(c * (c - 1) for c in (9, 13, 10, 5, 3))
    hand = ((n - 1) * diagonal - expected_pairs) / (n * (n - 1) - expected_pairs)
    assert round(hand, 3) == 0.743
    assert krippendorff_alpha(KRIPPENDORFF_EXAMPLE, level="nominal") == pytest.approx(hand)

@pytest.mark.parametrize("level, published", [("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_published_example_other_levels(level, published):
    assert round(krippendorff_alpha(KRIPPENDORFF_EXAMPLE, level=level), 3) == published

def test_krippendorff_small_example_with_missing_raters_by_hand():
    # units: (1,1,1), (1,1,2), (2,2,–), (–,–,1). The last unit is unpairable.
    # o11 = 3 + 1, o12 = o21 = 1, o22 = 2; n1 = 5, n2 = 3, n = 8.
    # alpha = 1 − (n − 1) · D_o / (2 · n1 · n2) = 1 − 7 · 2 / 30
    data = [[1, 1, 2, nan], [1, 1, 2, nan], [1, 2, nan, 1]]
    assert krippendorff_alpha(data, level="nominal") == pytest.approx(16 / 30)

def test_krippendorff_undefined_cases_return_none():
    assert krippendorff_alpha([[1, 1, 1], [1, 1, 1]], level="nominal") is None
    assert krippendorff_alpha([[1, nan], [nan, 2]], level="nominal") is None
    # two values exist, but the only pairable unit holds one of them
    assert krippendorff_alpha([[1, 2], [1, nan]], level="interval") is None

def test_krippendorff_unknown_level_is_rejected():
    with pytest.raises(MetricError):
        krippendorff_alpha(KRIPPENDORFF_EXAMPLE, level="cardinal")
