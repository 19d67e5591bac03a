"""The grouping helpers of the reliability report: the memoized binary figures of a group equal
``_binary`` on the group's own pairs, whatever their order and however often their confusion
table recurs; a group's rows are found in the frame's order, a row with several keys in each."""
import numpy as np
import pandas as pd

from grading.reports.reliability_report import _binary, _BinaryFigures, _group_rows


def test_memoized_binary_figures_equal_a_direct_call_per_group():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 2, 600), rng.integers(0, 2, 600)
    figures = _BinaryFigures(a, b)
    groups = [np.sort(rng.choice(600, size=int(rng.integers(1, 12)), replace=False)) for _ in range(400)]
    groups += [np.array([], dtype=np.intp), np.arange(600)]
    for rows in groups:
        assert figures(rows) == _binary(a[rows], b[rows])
    assert len(figures.memo) < len(groups)  # tables recur: each is computed once


def test_binary_figures_depend_on_the_table_not_the_order():
    a, b = np.array([1, 1, 0, 0, 1, 0, 1]), np.array([1, 0, 0, 1, 1, 0, 0])
    figures = _BinaryFigures(np.concatenate([a, a[::-1]]), np.concatenate([b, b[::-1]]))
    first, second = figures(np.arange(7)), figures(np.arange(7, 14))
    assert first == second == _binary(a[::-1], b[::-1]) and len(figures.memo) == 1


def test_group_rows_keep_frame_order_and_every_key_of_a_row():
    keys = pd.Series([["x"], ["y", "x"], ["y"], ["x"], ["z", "z"]], index=[10, 4, 7, 2, 9])
    rows = _group_rows(keys)
    assert set(rows) == {"x", "y", "z"}
    assert rows["x"].tolist() == [0, 1, 3] and rows["y"].tolist() == [1, 2] and rows["z"].tolist() == [4, 4]
    assert _group_rows(pd.Series([], dtype=object)) == {}
