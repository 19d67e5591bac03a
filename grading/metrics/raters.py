"""One annotator's quality (issue 28): agreement with gold on hidden check items, its drift over a
rolling window in submission order, the alert, Cohen's kappa with a cohort's decision, and time per
item. Decisions arrive as codes (``annotation.vocabulary.choice_encode``: "verdict:met",
"option:good", "value:7.5"), so binary, ordinal and nominal criteria compare alike: a decision
agrees with gold when it is the same decision. Kappa treats the codes as nominal categories
(scikit-learn's ``cohen_kappa_score``, as ``agreement``); an undefined figure is None.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import MetricError


@dataclass(frozen=True)
class CheckItem:
    """One submitted check item: how many of its gold-decided criteria the annotator matched."""

    hits: int
    total: int


@dataclass(frozen=True)
class GoldQuality:
    """Agreement with gold over check items in submission order (fractions in [0, 1]).

    ``agreement`` pools every compared decision; ``window_agreement`` pools the last ``window``
    items; ``drift`` is the rolling figure after each item (item i: items max(1, i-window+1)..i);
    ``alert`` is set once ``n_items >= min_items`` and the lower of the two figures is below the
    threshold, ``alert_reason`` saying which."""

    n_items: int
    n_decisions: int
    hits: int
    agreement: float | None
    window: int
    window_items: int
    window_agreement: float | None
    drift: list[float | None]
    threshold: float
    min_items: int
    alert: bool
    alert_reason: str


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def rolling_agreement(items: Sequence[CheckItem], *, window: int) -> list[float | None]:
    """Agreement pooled over the last ``window`` items, after each item (None before any decision)."""
    if window < 1:
        raise MetricError(f"window must be at least 1, not {window}")
    hits = np.cumsum([0] + [item.hits for item in items])
    total = np.cumsum([0] + [item.total for item in items])
    out = []
    for i in range(1, len(items) + 1):
        start = max(0, i - window)
        out.append(_share(int(hits[i] - hits[start]), int(total[i] - total[start])))
    return out


def gold_quality(items: Sequence[CheckItem], *, window: int, threshold: float, min_items: int) -> GoldQuality:
    """The annotator's agreement with gold, its drift and the alert (see ``GoldQuality``)."""
    if not 0 <= threshold <= 1:
        raise MetricError(f"threshold must be in [0, 1], not {threshold}")
    for item in items:
        if item.total < 0 or not 0 <= item.hits <= item.total:
            raise MetricError(f"a check item's hits must be between 0 and its total, not {item.hits}/{item.total}")
    hits, total = sum(i.hits for i in items), sum(i.total for i in items)
    drift = rolling_agreement(items, window=window)
    last = list(items)[-window:]
    window_agreement = _share(sum(i.hits for i in last), sum(i.total for i in last))
    agreement = _share(hits, total)
    reason = ""
    if len(items) >= max(1, min_items):
        below = []
        if agreement is not None and agreement < threshold:
            below.append(f"overall {agreement:.0%}")
        if window_agreement is not None and window_agreement < threshold and len(last) < len(items):
            below.append(f"last {len(last)} items {window_agreement:.0%}")
        if below:
            reason = f"agreement with gold below {threshold:.0%}: " + ", ".join(below)
    return GoldQuality(n_items=len(items), n_decisions=total, hits=hits, agreement=agreement, window=window,
                       window_items=len(last), window_agreement=window_agreement, drift=drift, threshold=threshold,
                       min_items=min_items, alert=bool(reason), alert_reason=reason)


def nominal_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two aligned sequences of decision codes, the codes as nominal categories;
    None for no pairs or when chance agreement is 1 (one category throughout)."""
    if len(a) != len(b):
        raise MetricError(f"a and b differ in length ({len(a)} vs {len(b)})")
    if not len(a):
        return None
    from sklearn.metrics import cohen_kappa_score  # lazy: scikit-learn loads on first use, not at start-up

    labels = sorted(set(a) | set(b))
    if len(labels) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kappa = float(cohen_kappa_score(list(a), list(b), labels=labels, replace_undefined_by=np.nan))
    return kappa if math.isfinite(kappa) else None


def seconds_summary(seconds: Sequence[float]) -> tuple[float | None, float | None]:
    """(median, mean) active seconds per item; (None, None) without items."""
    if not len(seconds):
        return None, None
    values = np.asarray(seconds, dtype=float)
    return float(np.median(values)), float(values.mean())
