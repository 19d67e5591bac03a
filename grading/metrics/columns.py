"""Text columns of label, judgment and decision frames (role, verdict, option, a criterion's kind,
a judge's name) kept as numpy object arrays whose rows share the few distinct strings, the form
``decisions._typed`` gives decisions.

pandas 3 stores an object array of strings assigned to a frame as its Arrow-backed ``str`` dtype: at
the millions of rows of a full-scale study that conversion takes about 0.4 s per column, and every
``to_numpy(dtype=object)`` the decision rules make back allocates one Python string per row (about
0.3 s and a hundred megabytes more). ``object_column`` keeps the array as it is.
"""
import numpy as np
import pandas as pd


def object_column(values, index=None) -> pd.Series:
    """``values`` (an array or a Series) as an object column with None for a missing value,
    aligned on ``index`` where given."""
    values = values.to_numpy(dtype=object) if isinstance(values, pd.Series) else np.asarray(values, dtype=object)
    missing = pd.isna(values)
    if missing.any():
        values = values.copy()  # a Series' array may be read-only (copy on write)
        values[missing] = None
    return pd.Series(values, index=index, dtype=object)


def mapped_column(keys: pd.Series, mapping: pd.Series) -> pd.Series:
    """``keys.map(mapping)`` as an object column: the few distinct values of ``mapping`` (a Series
    indexed by key, such as the criteria's kinds) taken row by row, with None for a key it lacks."""
    table = pd.Index(mapping.index)
    at = table.get_indexer(keys.to_numpy())
    values = np.append(mapping.to_numpy(dtype=object), None)
    return pd.Series(values[at], index=keys.index, dtype=object)
