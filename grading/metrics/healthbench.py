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

Intervals on request (``healthbench_intervals``, SPEC §3: a mean may carry a bootstrap 95% interval):
the percentile interval of each clipped mean, resampling whole cases as every report's ``--ci`` does
(``bootstrap.case_bootstrap_ci``: 2,000 seeded resamples; a case may hold several examples — several
completions, or several gradings of one).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .bootstrap import DEFAULT_RESAMPLES, case_bootstrap_ci
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


def example_figures(example: HealthBenchExample) -> tuple[float | None, dict[str, float], dict[str, float]]:
    """One example's score, its score under each of its example tags (the same score; none when
    the score is undefined) and its score over each rubric tag's items (tags where it is defined)."""
    score = example_score(example.points, example.met)
    by_example_tag = {tag: score for tag in dict.fromkeys(example.example_tags)} if score is not None else {}
    items: dict[str, list[int]] = defaultdict(list)
    for i, tags in enumerate(example.item_tags):
        for tag in dict.fromkeys(tags):
            items[tag].append(i)
    by_rubric_tag = {}
    for tag, positions in items.items():
        tag_score = example_score([example.points[i] for i in positions], [example.met[i] for i in positions])
        if tag_score is not None:
            by_rubric_tag[tag] = tag_score
    return score, by_example_tag, by_rubric_tag


def healthbench_score(examples: Sequence[HealthBenchExample], *, n_resamples: int = BOOTSTRAP_RESAMPLES,
                      seed: int = 0) -> HealthBenchScore:
    """The overall score with its bootstrap std and n (examples with a defined score) and the
    figures by example tag and by rubric tag (tags in sorted order)."""
    scores: list[float] = []
    by_example_tag: dict[str, list[float]] = defaultdict(list)
    by_rubric_tag: dict[str, list[float]] = defaultdict(list)
    for example in examples:
        score, example_tags, rubric_tags = example_figures(example)
        if score is not None:
            scores.append(score)
        for tag, value in example_tags.items():
            by_example_tag[tag].append(value)
        for tag, value in rubric_tags.items():
            by_rubric_tag[tag].append(value)
    return HealthBenchScore(
        overall=clipped_mean(scores),
        bootstrap_std=clipped_mean_bootstrap_std(scores, n_resamples=n_resamples, seed=seed),
        n_examples=len(scores),
        by_example_tag={tag: clipped_mean(by_example_tag[tag]) for tag in sorted(by_example_tag)},
        by_rubric_tag={tag: clipped_mean(by_rubric_tag[tag]) for tag in sorted(by_rubric_tag)},
    )


def healthbench_counts(examples: Sequence[HealthBenchExample]) -> dict:
    """How many examples each figure averages: ``{"by_example_tag": {TAG: n}, "by_rubric_tag": {TAG: n}}``."""
    counts: dict[str, dict[str, int]] = {"by_example_tag": defaultdict(int), "by_rubric_tag": defaultdict(int)}
    for example in examples:
        _, example_tags, rubric_tags = example_figures(example)
        for tag in example_tags:
            counts["by_example_tag"][tag] += 1
        for tag in rubric_tags:
            counts["by_rubric_tag"][tag] += 1
    return {key: dict(sorted(found.items())) for key, found in counts.items()}


def healthbench_intervals(examples: Sequence[HealthBenchExample], cases: Sequence, *, confidence: float = 0.95,
                          n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> dict:
    """Percentile bootstrap intervals of the clipped means, resampling whole cases (``cases``: the
    case of each example): ``{"overall": BootstrapCI | None, "by_example_tag": {TAG: ...},
    "by_rubric_tag": {TAG: ...}}`` over the examples with a defined score (None where
    ``case_bootstrap_ci`` gives none: fewer than two cases, or a figure fewer than 90% of the
    resamples define)."""
    if len(cases) != len(examples):
        raise MetricError("one case per example")
    # an example without a positive item enters no figure: its case is not drawn for it
    kept = [(case, found) for case, found in zip(cases, map(example_figures, examples)) if found[0] is not None]
    cases, figures = [case for case, _ in kept], [found for _, found in kept]
    example_tags = sorted({tag for _, tags, _ in figures for tag in tags})
    rubric_tags = sorted({tag for _, _, tags in figures for tag in tags})
    columns = [("overall", None), *(("by_example_tag", t) for t in example_tags), *(("by_rubric_tag", t) for t in rubric_tags)]
    position = {column: j for j, column in enumerate(columns)}
    matrix = np.full((len(figures), len(columns)), np.nan)
    for row, (score, by_example, by_rubric) in enumerate(figures):
        matrix[row, 0] = score
        for group, found in (("by_example_tag", by_example), ("by_rubric_tag", by_rubric)):
            for tag, value in found.items():
                matrix[row, position[(group, tag)]] = value
    empty = {"overall": None, "by_example_tag": dict.fromkeys(example_tags), "by_rubric_tag": dict.fromkeys(rubric_tags)}
    if not figures:
        return empty

    def clipped_means(rows: np.ndarray) -> tuple:
        drawn = matrix[rows]
        counts = (~np.isnan(drawn)).sum(axis=0)
        sums = np.nansum(drawn, axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.clip(sums / counts, 0.0, 1.0)
        return tuple(None if n == 0 else float(m) for m, n in zip(means, counts))

    intervals = case_bootstrap_ci(cases, clipped_means, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if intervals is None:
        return empty
    out = {"overall": intervals[0], "by_example_tag": {}, "by_rubric_tag": {}}
    for (group, tag), interval in zip(columns[1:], intervals[1:]):
        out[group][tag] = interval
    return out
