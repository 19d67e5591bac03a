"""Text columns of label, judgment and decision frames stay numpy object arrays (issue 26): pandas 3
would store them as its Arrow-backed str dtype, converted back row by row by every decision rule."""
import numpy as np
import pandas as pd

from grading.metrics.columns import mapped_column, object_column


def test_an_object_column_keeps_its_strings_and_says_none_for_missing():
    met = "met"
    column = object_column(np.array([met, None, np.nan, "not_met"], dtype=object), index=[10, 11, 12, 13])
    assert column.dtype == object
    assert column.tolist() == ["met", None, None, "not_met"]
    assert column.index.tolist() == [10, 11, 12, 13]
    assert column[10] is met  # the same string object, not a copy per row
    frame = pd.DataFrame({"x": [1, 2, 3, 4]}, index=[10, 11, 12, 13])
    frame["verdict"] = column
    assert frame["verdict"].dtype == object  # assigned to a frame, it is not turned into pandas' str dtype


def test_an_object_column_from_a_pandas_string_column():
    strings = pd.Series(["annotator", None, "checker"])
    assert strings.dtype != object  # pandas 3 infers its str dtype
    column = object_column(strings, strings.index)
    assert column.dtype == object and column.tolist() == ["annotator", None, "checker"]


def test_a_mapped_column_equals_map_with_none_for_an_unknown_key():
    kinds = pd.Series(["binary", "ordinal", "nominal"], index=[7, 8, 9])
    keys = pd.Series([9, 7, 7, 42, 8], index=[5, 4, 3, 2, 1])
    mapped = mapped_column(keys, kinds)
    assert mapped.dtype == object
    assert mapped.index.tolist() == [5, 4, 3, 2, 1]
    assert mapped.tolist() == ["nominal", "binary", "binary", None, "ordinal"]
    expected = keys.map(kinds)
    assert [None if pd.isna(v) else v for v in expected] == mapped.tolist()
    assert mapped_column(pd.Series([], dtype="int64"), kinds).empty
