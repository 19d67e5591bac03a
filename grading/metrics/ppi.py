"""Prediction-powered estimates of a mean (PPI++, Angelopoulos, Duchi and Zrnic 2023): a judge's value
on every response plus a human value on a random subset give an unbiased estimate of the humans' mean
with a valid interval, narrower than the humans' alone when the judge is informative.

The arithmetic is ``ppi_py``'s (the maintained ``ppi-python`` package; power-tuned: its λ is chosen
from the data, so an uninformative judge costs nothing: λ → 0 is the humans' own interval). This
module only adds what a report states beside it: the humans-only estimate and interval on the same
labelled subset, the judge-only mean, and how many human labels the judge is worth (the labelled
count that would give the humans alone an interval as narrow: n × (width alone / width with the
judge)², since a normal interval's width falls with √n).

Inputs are per-response values of one figure (a rubric accuracy s_i / N_i, a pass [s_i ≥ k], a CACS
term, a weighted score): ``human`` and ``judge_labelled`` on the labelled responses, in the same
order, and ``judge_unlabelled`` on the others. ``weights`` (optional, on the labelled responses) are
inverse inclusion probabilities when the labelled subset was not drawn uniformly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import MetricError

ALPHA = 0.05  # 95% intervals


@dataclass(frozen=True)
class PpiEstimate:
    """One prediction-powered mean and what it is compared with (fractions as given)."""

    estimate: float
    ci: tuple[float, float]
    human_only: float
    human_only_ci: tuple[float, float]
    judge_only: float
    n_labelled: int
    n_unlabelled: int
    effective_n: float | None  # None when only the humans' interval has no width

    @property
    def width(self) -> float:
        return self.ci[1] - self.ci[0]

    @property
    def human_only_width(self) -> float:
        return self.human_only_ci[1] - self.human_only_ci[0]


def _vector(values, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    if not np.isfinite(array).all():
        raise MetricError(f"{name} must hold finite numbers only")
    return array


def ppi_mean(human, judge_labelled, judge_unlabelled, *, alpha: float = ALPHA, weights=None) -> PpiEstimate:
    """The PPI++ estimate of the humans' mean with its (1 − alpha) interval, beside the humans' own
    estimate and interval on the labelled responses and the judge's mean over all responses."""
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate  # lazy: numba, statsmodels on first use

    y, yhat, yhat_u = (_vector(v, name) for v, name in ((human, "human"), (judge_labelled, "judge_labelled"),
                                                          (judge_unlabelled, "judge_unlabelled")))
    if y.shape != yhat.shape:
        raise MetricError(f"human and judge_labelled differ in length ({y.size} and {yhat.size})")
    if y.size < 2:
        raise MetricError(f"at least 2 labelled responses are needed, not {y.size}")
    if not 0 < alpha < 1:
        raise MetricError(f"alpha must lie between 0 and 1, not {alpha!r}")
    w = None if weights is None else _vector(weights, "weights")
    if w is not None and (w.shape != y.shape or (w <= 0).any()):
        raise MetricError("weights need one positive number per labelled response")
    human_only = float(y.mean() if w is None else np.average(y, weights=w))
    human_ci = _pair(classical_mean_ci(y, w=w, alpha=alpha))
    if yhat_u.size:
        estimate = float(np.ravel(ppi_mean_pointestimate(y, yhat, yhat_u, w=w))[0])
        ci = _pair(ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, w=w))
    else:  # every response is labelled: the judge adds nothing
        estimate, ci = human_only, human_ci
    width, alone = ci[1] - ci[0], human_ci[1] - human_ci[0]
    effective = float(y.size * (alone / width) ** 2) if width > 0 else (float(y.size) if alone == 0 else None)
    return PpiEstimate(estimate=estimate, ci=ci, human_only=human_only, human_only_ci=human_ci,
                       judge_only=float(np.concatenate([yhat, yhat_u]).mean()), n_labelled=int(y.size),
                       n_unlabelled=int(yhat_u.size), effective_n=effective)


def _pair(interval) -> tuple[float, float]:
    low, high = interval
    return float(np.ravel(low)[0]), float(np.ravel(high)[0])
