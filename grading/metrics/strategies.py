"""Cannot-assess strategies and the mapping of string verdicts to binary decisions.
SPEC §3 names four ways to treat a `cannot_assess` verdict: SKIP leaves it out, ZERO
counts it as not met, PARTIAL gives it value p where a value is used (weighted score)
and not met where a decision is needed (F1), FAIL takes the worst case. Anything that is
no verdict (a tie, no decision) is never dropped: it counts as not met.
`apply_cannot_assess` does this for a whole column at once. Which judge outputs are invalid,
and their tally, is the decision rules' (``decisions.judge_outputs``), not this module's.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from annotation.vocabulary import CANNOT_ASSESS, MET

from .errors import MetricError


class CannotAssess(enum.StrEnum):
    """How a cannot-assess verdict (or a not-applicable option) is scored."""

    SKIP = "skip"
    ZERO = "zero"
    PARTIAL = "partial"
    FAIL = "fail"


# What each strategy does, in the words a page's help gives.
STRATEGY_HELP = {
    CannotAssess.SKIP: "left out: the criterion counts neither for nor against the response",
    CannotAssess.ZERO: "counted as not met",
    CannotAssess.PARTIAL: ("partial credit (half the weight unless set otherwise) where a score is computed; not met where "
                           "a met / not-met decision is needed"),
    CannotAssess.FAIL: "the worst case: not met, or a met penalty, or the worst option",
}


def parse_strategy(strategy: CannotAssess | str) -> CannotAssess:
    """Accept a `CannotAssess` member or its name/value in any case ('SKIP', 'skip')."""
    if isinstance(strategy, CannotAssess):
        return strategy
    try:
        return CannotAssess(str(strategy).strip().lower())
    except ValueError:
        choices = ", ".join(s.value for s in CannotAssess)
        raise MetricError(f"unknown cannot-assess strategy {strategy!r}; use one of {choices}") from None


@dataclass(frozen=True, eq=False)
class ResolvedVerdicts:
    """Binary decisions derived from string verdicts.

    `values[i]` is 1 (met) or 0 (not met) and is meaningful only where `keep[i]`
    is True; SKIP is the only strategy that sets `keep` to False.
    """

    values: np.ndarray
    keep: np.ndarray
    strategy: CannotAssess
    n: int
    n_cannot_assess: int

    @property
    def n_kept(self) -> int:
        return int(self.keep.sum())


def apply_cannot_assess(
    verdicts: Iterable[object] | np.ndarray | pd.Series,
    *,
    strategy: CannotAssess | str,
    penalty: Iterable[bool] | np.ndarray | None = None,
) -> ResolvedVerdicts:
    """Map verdicts met / not met / cannot assess / anything else to 1 / 0 / dropped / 0.

    Any value other than the three verdicts (None, NaN: no decision) becomes 0.
    cannot_assess becomes: SKIP → dropped, ZERO → 0, PARTIAL → 0 (not met for F1),
    FAIL → the worst case, which is 0 — or 1 for rows flagged in the optional
    `penalty` mask, since meeting a penalty criterion is the worse outcome.
    """
    rule = parse_strategy(strategy)
    raw = pd.Series(verdicts, dtype=object) if not isinstance(verdicts, pd.Series) else verdicts
    arr = raw.to_numpy(dtype=object)
    met = arr == MET
    cannot = arr == CANNOT_ASSESS
    values = met.astype(np.int8)
    keep = np.ones(arr.shape[0], dtype=bool)
    if rule is CannotAssess.SKIP:
        keep = ~cannot
    elif rule is CannotAssess.FAIL and penalty is not None:
        pen = np.asarray(penalty, dtype=bool)
        if pen.shape != arr.shape:
            raise MetricError("penalty mask must have one entry per verdict")
        values[cannot & pen] = 1
    return ResolvedVerdicts(
        values=values,
        keep=keep,
        strategy=rule,
        n=int(arr.shape[0]),
        n_cannot_assess=int(cannot.sum()),
    )


def paired_decisions(a: ResolvedVerdicts, b: ResolvedVerdicts) -> tuple[np.ndarray, np.ndarray]:
    """Return the aligned (a, b) decision arrays with every pair dropped where either side was skipped."""
    if a.n != b.n:
        raise MetricError(f"sources have {a.n} and {b.n} verdicts; align them first")
    keep = a.keep & b.keep
    return a.values[keep], b.values[keep]
