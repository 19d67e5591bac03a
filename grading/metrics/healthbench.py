"""The HealthBench score (SPEC §5 ``healthbench_score``), as openai simple-evals'
``healthbench_eval.py`` computes it.

An example (one graded completion) scores Σ points of its met rubric items / Σ positive points:
not clipped, so penalties can take it below zero; undefined (None) when no item has positive
points. A figure over examples is the mean of their scores clipped to [0, 1]. Its bootstrap std
follows simple-evals (``_compute_clipped_stats(values, "bootstrap_std")``): draw the examples'
scores with replacement ``n_resamples`` times (1,000), take each draw's clipped mean, and report
the population standard deviation (ddof = 0) of those means; simple-evals draws from numpy's
unseeded global generator, here the draws come from ``default_rng(seed)`` so the figure repeats.
An example tag's figure is the clipped mean of its examples' scores; a rubric tag's is the clipped
mean over examples of the score of that tag's items alone, examples where it is undefined (no
positive item with the tag) left out.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import MetricError

BOOTSTRAP_RESAMPLES = 1000
_MAX_CELLS_PER_CHUNK = 4_000_000


@dataclass(frozen=True)
class HealthBenchExample:
    """One graded completion: per rubric item its points, whether it was met and its tags, plus
    the example's own tags."""

    points: tuple[float, ...]
    met: tuple[bool, ...]
    item_tags: tuple[tuple[str, ...], ...] = ()
    example_tags: tuple[str, ...] = ()

    def __post_init__(self):
        if len(self.points) != len(self.met):
            raise MetricError("an example needs one met flag per rubric item")
        if self.item_tags and len(self.item_tags) != len(self.points):
            raise MetricError("an example's item tags, when given, come one tuple per rubric item")


@dataclass(frozen=True)
class HealthBenchScore:
    overall: float | None
    bootstrap_std: float | None
    n_examples: int
    by_example_tag: dict = field(default_factory=dict)  # tag -> clipped mean
    by_rubric_tag: dict = field(default_factory=dict)  # tag -> clipped mean


def example_score(points: Sequence[float], met: Sequence[bool]) -> float | None:
    """Σ points of met items / Σ positive points; None without a positive item."""
    possible = sum(float(p) for p in points if p > 0)
    if possible == 0:
        return None
    return sum(float(p) for p, hit in zip(points, met) if hit) / possible


def clipped_mean(values: Sequence[float]) -> float | None:
    """The mean clipped to [0, 1]; None for no values."""
    x = np.asarray(values, dtype=float)
    return float(np.clip(x.mean(), 0.0, 1.0)) if x.size else None


def clipped_mean_bootstrap_std(values: Sequence[float], *, n_resamples: int = BOOTSTRAP_RESAMPLES,
                               seed: int = 0) -> float | None:
    """std (ddof = 0) of the clipped means of ``n_resamples`` draws of the values with replacement."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return None
    if n_resamples < 1:
        raise MetricError("n_resamples must be at least 1")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, _MAX_CELLS_PER_CHUNK // x.size)
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        means[start:stop] = x[rng.integers(0, x.size, size=(stop - start, x.size))].mean(axis=1)
    return float(np.std(np.clip(means, 0.0, 1.0)))


def healthbench_score(examples: Sequence[HealthBenchExample], *, n_resamples: int = BOOTSTRAP_RESAMPLES,
                      seed: int = 0) -> HealthBenchScore:
    """The overall score with its bootstrap std and n (examples with a defined score) and the
    figures by example tag and by rubric tag (tags in sorted order)."""
    scores: list[float] = []
    by_example_tag: dict[str, list[float]] = defaultdict(list)
    by_rubric_tag: dict[str, list[float]] = defaultdict(list)
    for example in examples:
        score = example_score(example.points, example.met)
        if score is not None:
            scores.append(score)
            for tag in dict.fromkeys(example.example_tags):
                by_example_tag[tag].append(score)
        items: dict[str, list[int]] = defaultdict(list)
        for i, tags in enumerate(example.item_tags):
            for tag in dict.fromkeys(tags):
                items[tag].append(i)
        for tag, positions in items.items():
            tag_score = example_score([example.points[i] for i in positions], [example.met[i] for i in positions])
            if tag_score is not None:
                by_rubric_tag[tag].append(tag_score)
    return HealthBenchScore(
        overall=clipped_mean(scores),
        bootstrap_std=clipped_mean_bootstrap_std(scores, n_resamples=n_resamples, seed=seed),
        n_examples=len(scores),
        by_example_tag={tag: clipped_mean(by_example_tag[tag]) for tag in sorted(by_example_tag)},
        by_rubric_tag={tag: clipped_mean(by_rubric_tag[tag]) for tag in sorted(by_rubric_tag)},
    )
