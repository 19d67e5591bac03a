"""Prediction-powered estimates (issue 28, point 1): the interval's coverage and width in a seeded
simulation, and the figures equal to ``ppi_py``'s on the same arrays."""
import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from grading.metrics import MetricError, ppi_mean

TRUE_MEAN = 0.6
AGREEMENT = 0.8


def _draw(rng, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Human decisions (met with probability TRUE_MEAN) and a judge that agrees with each one with
    probability AGREEMENT."""
    human = (rng.random(size) < TRUE_MEAN).astype(float)
    agrees = rng.random(size) < AGREEMENT
    return human, np.where(agrees, human, 1.0 - human)


def test_over_a_thousand_simulated_studies_the_interval_covers_the_truth_and_is_narrower():
    rng = np.random.default_rng(20261126)
    covered, narrower, widths, alone = 0, 0, [], []
    for _ in range(1000):
        human, judge = _draw(rng, 100)
        _, judge_unlabelled = _draw(rng, 2000)
        found = ppi_mean(human, judge, judge_unlabelled)
        covered += found.ci[0] <= TRUE_MEAN <= found.ci[1]
        narrower += found.width < found.human_only_width
        widths.append(found.width)
        alone.append(found.human_only_width)
    assert 930 <= covered <= 970, covered
    assert np.mean(widths) < np.mean(alone)
    assert narrower >= 950, narrower  # PPI++ gives up nothing but estimation noise of its weight


def test_the_figures_are_ppi_pys_on_the_same_arrays():
    rng = np.random.default_rng(7)
    human, judge = _draw(rng, 80)
    _, judge_unlabelled = _draw(rng, 900)
    found = ppi_mean(human, judge, judge_unlabelled)
    assert found.estimate == pytest.approx(float(ppi_mean_pointestimate(human, judge, judge_unlabelled)[0]), abs=1e-12)
    low, high = ppi_mean_ci(human, judge, judge_unlabelled, alpha=0.05)
    assert found.ci == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)
    assert found.human_only_ci == pytest.approx(tuple(map(float, classical_mean_ci(human, alpha=0.05))), abs=1e-12)
    assert found.human_only == pytest.approx(human.mean())
    assert found.judge_only == pytest.approx(np.concatenate([judge, judge_unlabelled]).mean())
    assert (found.n_labelled, found.n_unlabelled) == (80, 900)
    assert found.effective_n == pytest.approx(80 * (found.human_only_width / found.width) ** 2)


def test_a_judge_that_tells_nothing_leaves_the_humans_interval():
    rng = np.random.default_rng(3)
    human = (rng.random(200) < 0.5).astype(float)
    noise = (rng.random(200) < 0.5).astype(float)  # independent of the humans
    found = ppi_mean(human, noise, (rng.random(5000) < 0.5).astype(float))
    assert found.width <= found.human_only_width * 1.05
    assert found.effective_n == pytest.approx(200, rel=0.1)


def test_with_every_response_labelled_the_estimate_is_the_humans():
    found = ppi_mean([1, 0, 1, 1], [1, 1, 1, 0], [])
    assert (found.estimate, found.ci) == (found.human_only, found.human_only_ci)
    assert (found.n_unlabelled, found.effective_n) == (0, 4.0)


@pytest.mark.parametrize(("human", "judge", "unlabelled", "message"), [
    ([1.0], [1.0], [0.0, 1.0], "at least 2 labelled responses"),
    ([1.0, 0.0], [1.0], [0.0], "differ in length"),
    ([1.0, float("nan")], [1.0, 0.0], [0.0], "human must hold finite numbers"),
    ([1.0, 0.0], [1.0, 0.0], [float("inf")], "judge_unlabelled must hold finite numbers"),
])
def test_bad_input_is_named(human, judge, unlabelled, message):
    with pytest.raises(MetricError, match=message):
        ppi_mean(human, judge, unlabelled)


def test_weights_need_one_positive_number_per_labelled_response():
    with pytest.raises(MetricError, match="weights"):
        ppi_mean([1, 0, 1], [1, 0, 0], [1, 1], weights=[1, 0, 2])
