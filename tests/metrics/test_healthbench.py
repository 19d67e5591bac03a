"""The HealthBench score (``grading.metrics.healthbench``) against a hand calculation, following
openai simple-evals' ``healthbench_eval.py``: Σ points met / Σ positive points per example (not
clipped), clipped means over examples, rubric-tag scores over that tag's items only."""
import numpy as np
import pytest

from grading.metrics import (
    HealthBenchExample,
    MetricError,
    clipped_mean,
    clipped_mean_bootstrap_std,
    example_score,
    healthbench_score,
)

ACC, COMP = "axis:accuracy", "axis:completeness"
EXAMPLES = [
    # A: (5 − 2) / 8 = 0.375; accuracy items 1, 3: (5 − 2) / 5 = 0.6; completeness item 2: 0 / 3 = 0
    HealthBenchExample(points=(5, 3, -2), met=(True, False, True), item_tags=((ACC,), (COMP,), (ACC,)),
                       example_tags=("theme:emergency",)),
    # B: −6 / 4 = −1.5 (a negative example score); accuracy: 0 / 4 = 0; completeness: no positive item
    HealthBenchExample(points=(4, -6), met=(False, True), item_tags=((ACC,), (COMP,)), example_tags=("theme:emergency",)),
    # C: 4 / 4 = 1; completeness 1
    HealthBenchExample(points=(2, 2), met=(True, True), item_tags=((COMP,), (COMP,)), example_tags=("theme:hedging",)),
    # D: no positive item: undefined, left out everywhere
    HealthBenchExample(points=(-3,), met=(False,), item_tags=((ACC,),), example_tags=("theme:hedging",)),
    # E: 1 / 1 = 1, no tags
    HealthBenchExample(points=(1,), met=(True,)),
]


def test_example_scores_are_not_clipped_and_undefined_without_a_positive_item():
    assert [example_score(e.points, e.met) for e in EXAMPLES] == [0.375, -1.5, 1.0, None, 1.0]


def test_the_score_equals_the_hand_calculation():
    score = healthbench_score(EXAMPLES)
    assert score.n_examples == 4
    assert score.overall == pytest.approx((0.375 - 1.5 + 1 + 1) / 4)  # 0.21875
    # emergency: mean(0.375, −1.5) = −0.5625, clipped to 0; hedging: C only (D undefined)
    assert score.by_example_tag == {"theme:emergency": 0.0, "theme:hedging": 1.0}
    # accuracy: mean(0.6, 0) (D has no positive accuracy item); completeness: mean(0, 1) (B has none)
    assert score.by_rubric_tag == {ACC: pytest.approx(0.3), COMP: pytest.approx(0.5)}


def test_the_overall_mean_is_clipped():
    assert healthbench_score(EXAMPLES[:2]).overall == 0.0  # mean(0.375, −1.5) < 0
    assert clipped_mean([1.5, 2.0]) == 1.0 and clipped_mean([]) is None


def test_the_bootstrap_std_is_the_std_of_clipped_resampled_means():
    values = [0.375, -1.5, 1.0, 1.0]
    rng = np.random.default_rng(0)  # the same draws one resample at a time, as simple-evals loops
    means = [float(np.clip(np.mean(np.asarray(values)[rng.integers(0, 4, size=4)]), 0, 1)) for _ in range(1000)]
    assert clipped_mean_bootstrap_std(values) == pytest.approx(float(np.std(means)))
    assert healthbench_score(EXAMPLES).bootstrap_std == pytest.approx(float(np.std(means)))
    assert clipped_mean_bootstrap_std([0.5, 0.5, 0.5]) == 0.0
    assert clipped_mean_bootstrap_std([]) is None
    assert clipped_mean_bootstrap_std(values, seed=1) != clipped_mean_bootstrap_std(values, seed=0)


def test_no_examples_and_bad_input():
    empty = healthbench_score([])
    assert (empty.overall, empty.bootstrap_std, empty.n_examples, empty.by_rubric_tag) == (None, None, 0, {})
    with pytest.raises(MetricError):
        HealthBenchExample(points=(1, 2), met=(True,))


def test_intervals_resample_cases_and_leave_undefined_examples_out():
    """The clipped means' percentile intervals over scipy's seeded draws of cases (2,000, seed 0), the
    cases of examples without a positive item (D) not drawn; a case may hold several examples."""
    from scipy import stats

    from grading.metrics import healthbench_intervals

    cases = ["c1", "c1", "c2", "c3", "c4"]  # A and B share a case; D's case c3 enters no figure
    examples = [EXAMPLES[0], EXAMPLES[1], EXAMPLES[2], EXAMPLES[3], EXAMPLES[4]]
    found = healthbench_intervals(examples, cases)
    scores = {"c1": [0.375, -1.5], "c2": [1.0], "c4": [1.0]}
    kept = sorted(scores)

    def clipped(drawn):
        return float(np.clip(np.mean([v for i in drawn for v in scores[kept[i]]]), 0, 1))

    draws = stats.bootstrap((np.arange(len(kept)),), clipped, vectorized=False, n_resamples=2000, method="percentile",
                            rng=np.random.default_rng(0)).bootstrap_distribution
    assert [found["overall"].low, found["overall"].high] == pytest.approx(list(np.quantile(draws, [0.025, 0.975])))
    assert found["overall"].n == 4  # the defined examples
    assert found["by_example_tag"]["theme:emergency"] is None  # one case (c1): nothing to resample
    assert set(found["by_rubric_tag"]) == {ACC, COMP}
    with pytest.raises(MetricError):
        healthbench_intervals(examples, cases[:2])
