"""Labels routed where they matter (active inference, Zrnic and Candès 2024): which responses the
humans label is drawn with known probabilities that favour responses the judges are unsure about, and
the estimate weights each human label by the inverse of its probability, so it stays unbiased while its
interval shrinks faster per label than under uniform sampling.

The design. Each response i has an uncertainty u_i ≥ 0 (``response_uncertainty``: the standard
deviation of the judges' figure for it, from how their samples and their votes split on each criterion).
For a budget of b labelled responses out of N, ``routing_probabilities`` gives π_i ∝ u_i, capped at 1
(water-filling, so Σ π_i = b), mixed with a share of uniform sampling so that no response has a
probability near zero (a response the judges agree on may still be one they all get wrong). The
probabilities grow with b for every response, so a design is extended by raising b: with one stored
uniform number U_i per response, response i is labelled when U_i < π_i, which keeps each inclusion an
independent draw with probability exactly π_i, however many times the budget was raised.

The estimate of the humans' mean of a per-response figure Y from the judge's figure f on all N
responses and Y on the labelled ones (ξ_i = 1), with power-tuned λ ∈ [0, 1]:

    θ = (1/N) Σ_i T_i,   T_i = λ f_i + (Y_i − λ f_i) ξ_i / π_i

E[T_i] = Y_i for any fixed λ, so θ is unbiased. Its 95% interval is θ ± z σ_T / √N. λ = 0 is the humans
alone (inverse-probability weighted), λ = 1 the judge corrected by its labelled errors; the tuned λ
minimises the variance of T from the data.

What a design would give: Var(T) = Var(Y) + E[(Y − λf)² (1 − π')/π'] under probabilities π', estimated
from the labels in hand (each weighted by its own inclusion probability), so the width of any budget,
uniform or routed, is predicted from the same labels (``design_width``, ``budget_for_width``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .errors import MetricError

ALPHA = 0.05  # 95% intervals
UNIFORM_SHARE = 0.2  # the share of every budget spread uniformly


@dataclass(frozen=True)
class ActiveEstimate:
    """An inverse-probability weighted, judge-assisted mean (fractions or percentages as given)."""

    estimate: float
    ci: tuple[float, float]
    lam: float  # the judge's weight λ
    n_labelled: int
    n: int  # responses in all (labelled or not)
    term_variance: float  # Var(T): the width is 2 z √(Var(T) / n)

    @property
    def width(self) -> float:
        return self.ci[1] - self.ci[0]


def _vector(values, name: str, *, allow_nan: bool = False) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    bad = np.isinf(array) if allow_nan else ~np.isfinite(array)
    if bad.any():
        raise MetricError(f"{name} must hold finite numbers only")
    return array


def response_uncertainty(p_met, n_criteria) -> np.ndarray:
    """The standard deviation of a response's rubric accuracy as the judges see it, per response:
    √(Σ_c p_c (1 − p_c)) / N_i, where p_c is the share of the judges' decisions (over judges and
    samples) that say criterion c is met, and N_i the response's binary criteria. ``p_met`` holds one
    sequence of p_c per response. 0 when every judge and sample agree on every criterion."""
    counts = _vector(n_criteria, "n_criteria")
    if len(p_met) != counts.size:
        raise MetricError(f"p_met and n_criteria differ in length ({len(p_met)} and {counts.size})")
    out = np.zeros(counts.size)
    for i, (shares, total) in enumerate(zip(p_met, counts, strict=True)):
        p = _vector(shares, "p_met")
        if ((p < 0) | (p > 1)).any():
            raise MetricError("p_met holds shares between 0 and 1")
        if total > 0:
            out[i] = float(np.sqrt(np.sum(p * (1 - p)))) / total
    return out


def routing_probabilities(uncertainty, budget: float, *, uniform_share: float = UNIFORM_SHARE) -> np.ndarray:
    """Inclusion probabilities π (one per response, Σ π = budget): (1 − s) times π ∝ uncertainty capped
    at 1, plus s × budget / N, where s is ``uniform_share``. Uniform when no response is uncertain."""
    u = _vector(uncertainty, "uncertainty")
    n = u.size
    if n == 0:
        raise MetricError("no responses to route")
    if (u < 0).any():
        raise MetricError("uncertainty must not be negative")
    if not 0 < budget <= n:
        raise MetricError(f"the budget must lie between 0 and the {n} responses, not {budget!r}")
    if not 0 <= uniform_share <= 1:
        raise MetricError(f"uniform_share must lie between 0 and 1, not {uniform_share!r}")
    return (1 - uniform_share) * _water_fill(u, budget) + uniform_share * budget / n


def _water_fill(u: np.ndarray, budget: float) -> np.ndarray:
    """π ∝ u with Σ π = budget and π ≤ 1: responses whose share would pass 1 are set to 1 and the rest of
    the budget is shared again among the others; what the uncertain ones cannot take goes uniformly to the
    rest."""
    p = np.zeros(u.size)
    capped = np.zeros(u.size, dtype=bool)
    remaining = float(budget)
    while True:
        free = ~capped & (u > 0)
        if not free.any():
            rest = ~capped
            if rest.any() and remaining > 0:
                p[rest] = remaining / rest.sum()
            return np.minimum(p, 1.0)
        share = remaining / u[free].sum()
        over = free & (share * u >= 1)
        if not over.any():
            p[free] = share * u[free]
            return p
        p[over] = 1.0
        capped |= over
        remaining -= float(over.sum())


def _design(values, judge, probabilities) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    y = _vector(values, "values", allow_nan=True)
    f = _vector(judge, "judge")
    pi = _vector(probabilities, "probabilities")
    if not y.size == f.size == pi.size:
        raise MetricError(f"values, judge and probabilities differ in length ({y.size}, {f.size}, {pi.size})")
    if ((pi <= 0) | (pi > 1)).any():
        raise MetricError("every probability must lie in (0, 1]")
    labelled = ~np.isnan(y)
    return np.where(labelled, y, 0.0), f, pi, labelled


def active_mean(values, judge, probabilities, *, alpha: float = ALPHA, lam: float | None = None) -> ActiveEstimate:
    """The estimate of the humans' mean over all responses, with its (1 − alpha) interval.

    ``values``: the human figure per response, NaN where the response is not labelled; ``judge``: the
    judge's figure on every response; ``probabilities``: each response's probability of being labelled
    under the design that drew the labels. ``lam``: the judge's weight, or None to tune it."""
    y, f, pi, labelled = _design(values, judge, probabilities)
    if labelled.sum() < 2:
        raise MetricError(f"at least 2 labelled responses are needed, not {int(labelled.sum())}")
    if not 0 < alpha < 1:
        raise MetricError(f"alpha must lie between 0 and 1, not {alpha!r}")
    d = np.where(labelled, 1.0 / pi, 0.0)
    if lam is None:
        lam = _tuned_lambda(y * d, f * (1 - d))
    terms = lam * f + (y - lam * f) * d
    n = terms.size
    variance = float(terms.var(ddof=1))
    half = NormalDist().inv_cdf(1 - alpha / 2) * np.sqrt(variance / n)
    estimate = float(terms.mean())
    return ActiveEstimate(estimate=estimate, ci=(estimate - half, estimate + half), lam=float(lam),
                          n_labelled=int(labelled.sum()), n=n, term_variance=variance)


def _tuned_lambda(weighted_y: np.ndarray, weighted_f: np.ndarray) -> float:
    """λ minimising Var(Y D + λ f (1 − D)) on the sample, clipped to [0, 1]."""
    spread = float(np.var(weighted_f))
    if spread <= 0:
        return 1.0
    covariance = float(np.mean((weighted_y - weighted_y.mean()) * (weighted_f - weighted_f.mean())))
    return float(np.clip(-covariance / spread, 0.0, 1.0))


def design_width(values, judge, probabilities, planned, *, lam: float, alpha: float = ALPHA) -> float:
    """The predicted interval width if the labels had been drawn with probabilities ``planned``, estimated
    from the labels in hand (drawn with ``probabilities``)."""
    y, f, pi, labelled = _design(values, judge, probabilities)
    plan = _vector(planned, "planned")
    if plan.size != y.size or ((plan <= 0) | (plan > 1)).any():
        raise MetricError("planned needs one probability in (0, 1] per response")
    n = y.size
    w = np.where(labelled, 1.0 / pi, 0.0)
    residual = (y - lam * f) ** 2
    # Var(Y): the inverse-probability weighted variance of the labelled figures (self-normalised, so never
    # below zero however few the labels)
    mean_y = float(np.sum(w * y) / np.sum(w))
    var_y = float(np.sum(w * (y - mean_y) ** 2) / np.sum(w))
    extra = float(np.sum(w * residual * (1 - plan) / plan)) / n
    variance = (var_y + extra) * n / (n - 1)  # as active_mean's sample variance of the terms (ddof 1)
    return 2 * NormalDist().inv_cdf(1 - alpha / 2) * float(np.sqrt(variance / n))


def budget_for_width(target: float, values, judge, probabilities, design: Callable[[int], np.ndarray], *,
                     lam: float, alpha: float = ALPHA) -> int | None:
    """The smallest budget b (labelled responses) whose design ``design(b)`` is predicted to give an
    interval no wider than ``target``; None when even labelling every response would not."""
    n = np.asarray(judge).size
    if not target > 0:
        raise MetricError(f"the target width must be positive, not {target!r}")

    def width(b: int) -> float:
        return design_width(values, judge, probabilities, design(b), lam=lam, alpha=alpha)

    if width(n) > target:
        return None
    low, high = 1, n  # width(high) <= target; the width falls as the budget grows
    while low < high:
        middle = (low + high) // 2
        if width(middle) <= target:
            high = middle
        else:
            low = middle + 1
    return low


def uniform_design(n: int) -> Callable[[int], np.ndarray]:
    """The design that labels b of n responses uniformly at random: π = b / n for every response."""
    return lambda budget: np.full(n, budget / n)


def routed_design(uncertainty, *, uniform_share: float = UNIFORM_SHARE) -> Callable[[int], np.ndarray]:
    """The routed design of ``routing_probabilities`` as a function of the budget."""
    u = _vector(uncertainty, "uncertainty")
    return lambda budget: routing_probabilities(u, budget, uniform_share=uniform_share)
