"""A decision's value and the one rescaling rule (SPEC §3): ``numeric_values`` gives a decision's
value in the rubric's own scale (met 1, not met 0, the option's or the ordinal value; NaN for
cannot assess, a tie or no decision); ``unit_bounds`` / ``unit_scale`` put values on [0, 1]:
values of criteria whose options lie inside [0, 1] as they are, other scales rescaled by their
lowest and highest option value."""
import numpy as np

from annotation.vocabulary import CANNOT_ASSESS, MET, NOT_MET

from .decisions import BINARY
from .errors import MetricError


def numeric_values(*, kind, verdict, value) -> np.ndarray:
    """A decision's value in the rubric's own scale: met 1, not met 0 on binary criteria, the
    option's (or the ordinal) value otherwise; NaN for cannot assess, a tie or no decision."""
    kind = np.asarray(kind, dtype=object)
    verdict = np.asarray(verdict, dtype=object)
    value = np.asarray(value, dtype=float)
    binary = np.where(verdict == MET, 1.0, np.where(verdict == NOT_MET, 0.0, np.nan))
    out = np.where(kind == BINARY, binary, value)
    return np.where(verdict == CANNOT_ASSESS, np.nan, out).astype(float)


def unit_bounds(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """(offset, span) that put a criterion's values on [0, 1]: (0, 1) for a criterion whose
    option values lie inside [0, 1], (lowest, highest − lowest) otherwise. A scale outside
    [0, 1] with a single value cannot be rescaled: MetricError."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or (lo > hi).any():
        raise MetricError("min_value and max_value must be finite with min_value ≤ max_value")
    rescale = (lo < 0) | (hi > 1)
    if (rescale & (hi == lo)).any():
        raise MetricError("a criterion with option values outside [0, 1] needs two distinct values")
    return np.where(rescale, lo, 0.0), np.where(rescale, hi - lo, 1.0)


def unit_scale(values, lo, hi) -> np.ndarray:
    """``values`` of criteria with lowest / highest option values ``lo`` / ``hi`` on [0, 1]."""
    offset, span = unit_bounds(lo, hi)
    return (np.asarray(values, dtype=float) - offset) / span
