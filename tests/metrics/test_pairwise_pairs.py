"""``pair_frame`` (HealthBench's pairwise protocol, ``grading.metrics.pairwise``) built with numpy
gives, row for row, the pairs of the plain loop over items it replaced (issue 26: at a million
items the loop took minutes)."""
import numpy as np
import pandas as pd

from grading.metrics.pairwise import annotator_pairs, pair_frame


def _pairs_by_loop(labels: pd.DataFrame) -> pd.DataFrame:
    """The definition, item by item: each label as the prediction against every other label of its item."""
    rater, truth, prediction, label = [], [], [], []
    positions = pd.Series(np.arange(len(labels)), index=labels.index)
    for _, rows in labels.groupby("item", sort=False):
        raters, values, where = rows["rater"].tolist(), rows["value"].tolist(), positions[rows.index].tolist()
        for i, (name, mine) in enumerate(zip(raters, values)):
            for j, other in enumerate(values):
                if i != j:
                    rater.append(name)
                    truth.append(other)
                    prediction.append(mine)
                    label.append(where[i])
    return pd.DataFrame({"rater": pd.Series(rater, dtype=object), "truth": np.asarray(truth, dtype=np.int8),
                         "prediction": np.asarray(prediction, dtype=np.int8), "label": np.asarray(label, dtype=np.int64)})


def _labels(seed: int, n_items: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for item in range(n_items):
        raters = rng.choice(["ann", "bob", "cy", "dee", "eve"], size=int(rng.integers(1, 5)), replace=False)
        rows += [((int(item // 7), int(item % 7)), str(r), int(rng.integers(0, 2))) for r in raters]
    frame = pd.DataFrame(rows, columns=["item", "rater", "value"])
    return frame.sample(frac=1.0, random_state=seed).set_index(pd.Index(rng.permutation(len(frame)) * 3))


def test_pairs_equal_the_loop_row_for_row():
    for seed in range(5):
        labels = _labels(seed, 300)
        pd.testing.assert_frame_equal(pair_frame(labels), _pairs_by_loop(labels))


def test_items_with_one_rater_and_no_labels_give_no_pairs():
    one_each = pd.DataFrame({"item": [(1, 1), (1, 2)], "rater": ["a", "b"], "value": [1, 0]})
    for labels in (one_each, one_each.iloc[:0]):
        pairs = pair_frame(labels)
        assert pairs.empty and list(pairs.columns) == ["rater", "truth", "prediction", "label"]
        assert annotator_pairs(labels) == {}


def test_a_hand_counted_item():
    labels = pd.DataFrame({"item": [(5, 1)] * 3, "rater": ["a", "b", "c"], "value": [1, 0, 1]})
    pairs = pair_frame(labels)
    assert pairs["rater"].tolist() == ["a", "a", "b", "b", "c", "c"]
    assert pairs["truth"].tolist() == [0, 1, 1, 1, 1, 0]
    assert pairs["prediction"].tolist() == [1, 1, 0, 0, 1, 1]
    assert pairs["label"].tolist() == [0, 0, 1, 1, 2, 2]
