"""Labels routed where they matter (issue 28, point 2): on a simulated project whose judge errs more where
it is unsure, the routed design's interval is narrower than uniform sampling's at the same labelling
budget, its estimate stays unbiased and its interval covers; the design's probabilities and the
predicted widths and budgets."""
import numpy as np
import pytest

from grading.metrics import (
    MetricError,
    active_mean,
    budget_for_width,
    design_width,
    response_uncertainty,
    routed_design,
    routing_probabilities,
    uniform_design,
)

N, BUDGET, REPETITIONS = 2000, 200, 1000


def _project(seed: int = 1):
    """A fixed project of N responses: the judges' uncertainty u per response, the judge's figure f, and
    the humans' figure y, which differs from f by an error whose spread grows with u (heteroscedastic)."""
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.005, 0.3, N)
    f = rng.beta(5, 2, N)
    y = np.clip(f - 0.05 + 1.5 * u * rng.standard_normal(N), 0, 1)
    return u, f, y


def _repeat(probabilities, f, y, seed: int):
    rng = np.random.default_rng(seed)
    errors, widths, covered = [], [], 0
    for _ in range(REPETITIONS):
        labelled = rng.random(N) < probabilities
        found = active_mean(np.where(labelled, y, np.nan), f, probabilities)
        errors.append(found.estimate - y.mean())
        widths.append(found.width)
        covered += found.ci[0] <= y.mean() <= found.ci[1]
    return np.array(errors), np.mean(widths), covered


def test_at_equal_budgets_routing_narrows_the_interval_and_stays_unbiased():
    u, f, y = _project()
    routed = routing_probabilities(u, BUDGET)
    uniform = np.full(N, BUDGET / N)
    assert routed.sum() == pytest.approx(BUDGET)
    routed_errors, routed_width, routed_covered = _repeat(routed, f, y, seed=11)
    uniform_errors, uniform_width, uniform_covered = _repeat(uniform, f, y, seed=12)
    assert routed_width < 0.95 * uniform_width, (routed_width, uniform_width)
    for errors in (routed_errors, uniform_errors):
        # Unbiased: the mean error over the repetitions is within three of its standard errors (a
        # fixed seed; a biased estimator, e.g. unweighted means of the routed labels, fails by far).
        assert abs(errors.mean()) <= 3 * errors.std(ddof=1) / np.sqrt(REPETITIONS), errors.mean()
    assert 930 <= routed_covered <= 990 and 930 <= uniform_covered <= 990, (routed_covered, uniform_covered)


def test_without_the_inverse_probability_weights_the_routed_labels_are_biased():
    """The guard of the test above: the weights are what keeps the routed estimate unbiased."""
    u, f, y = _project()
    routed = routing_probabilities(u, BUDGET)
    rng = np.random.default_rng(5)
    errors = []
    for _ in range(300):
        labelled = rng.random(N) < routed
        errors.append(y[labelled].mean() - y.mean())
    assert abs(np.mean(errors)) > 5 * np.std(errors) / np.sqrt(300)


def test_predicted_widths_and_budgets_from_one_uniform_batch():
    u, f, y = _project()
    rng = np.random.default_rng(3)
    uniform = np.full(N, BUDGET / N)
    labelled = rng.random(N) < uniform
    values = np.where(labelled, y, np.nan)
    found = active_mean(values, f, uniform)
    # The batch's own design is predicted at its own width (up to the sample's noise).
    assert design_width(values, f, uniform, uniform, lam=found.lam) == pytest.approx(found.width, rel=0.1)
    # The routed design of the same budget is predicted narrower, as the simulation above finds it.
    assert design_width(values, f, uniform, routing_probabilities(u, BUDGET), lam=found.lam) < found.width
    target = found.width
    by_uniform = budget_for_width(target, values, f, uniform, uniform_design(N), lam=found.lam)
    by_routing = budget_for_width(target, values, f, uniform, routed_design(u), lam=found.lam)
    assert by_routing < by_uniform
    assert by_uniform == pytest.approx(BUDGET, rel=0.2)
    # Smallest: one label fewer would miss the target.
    design = routed_design(u)
    assert design_width(values, f, uniform, design(by_routing), lam=found.lam) <= target
    assert design_width(values, f, uniform, design(by_routing - 1), lam=found.lam) > target
    # A width that even every response labelled cannot reach.
    assert budget_for_width(target / 100, values, f, uniform, uniform_design(N), lam=found.lam) is None


def test_the_probabilities_sum_to_the_budget_stay_within_one_and_grow_with_it():
    u = np.array([0.0, 0.0, 0.01, 0.02, 0.5, 0.9, 3.0, 0.0])
    previous = np.zeros(u.size)
    for budget in (0.5, 1, 2, 3, 5, 7, 8):
        pi = routing_probabilities(u, budget)
        assert pi.sum() == pytest.approx(budget)
        assert (pi > 0).all() and (pi <= 1 + 1e-12).all()
        assert (pi >= previous - 1e-12).all()  # raising the budget never lowers a probability
        previous = pi
    assert routing_probabilities(u, 8) == pytest.approx(np.ones(u.size))
    # The most uncertain response is capped at 1 and its excess goes to the others, in proportion.
    pi = routing_probabilities(u, 2, uniform_share=0)
    assert pi[6] == pytest.approx(1.0)
    assert pi[5] / pi[4] == pytest.approx(0.9 / 0.5)
    assert pi[0] == 0.0
    # No uncertain response: uniform.
    assert routing_probabilities(np.zeros(4), 2) == pytest.approx([0.5] * 4)


def test_uncertainty_is_the_spread_of_the_judges_rubric_accuracy():
    found = response_uncertainty([[1.0, 0.0, 1.0], [0.5, 0.5], []], [3, 2, 0])
    assert found == pytest.approx([0.0, np.sqrt(0.5) / 2, 0.0])


def test_with_every_response_labelled_at_probability_one_it_is_the_humans_mean():
    rng = np.random.default_rng(2)
    y, f = rng.random(50), rng.random(50)
    found = active_mean(y, f, np.ones(50))
    assert found.estimate == pytest.approx(y.mean())
    half = 1.959963984540054 * y.std(ddof=1) / np.sqrt(50)
    assert found.ci == pytest.approx((y.mean() - half, y.mean() + half))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: routing_probabilities([0.1, -1], 1), "negative"),
    (lambda: routing_probabilities([0.1, 0.2], 3), "budget"),
    (lambda: routing_probabilities([], 1), "no responses"),
    (lambda: active_mean([1.0, np.nan, np.nan], [0.5, 0.5, 0.5], [1, 1, 1]), "at least 2 labelled"),
    (lambda: active_mean([1.0, 0.0], [0.5, 0.5], [1, 0]), "(0, 1]"),
    (lambda: active_mean([1.0, 0.0], [0.5], [1, 1]), "differ in length"),
    (lambda: budget_for_width(0, [1.0, 0.0], [0.5, 0.5], [1, 1], uniform_design(2), lam=1), "positive"),
    (lambda: response_uncertainty([[1.5]], [1]), "between 0 and 1"),
])
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(MetricError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        call()
