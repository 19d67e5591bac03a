"""Length–score correlations pooled and per model, worked by hand."""

import numpy as np
import pandas as pd
import pytest

from grading.metrics import MetricError, length_score_correlation, verbosity_check


def test_correlations_worked_by_hand():
    # deviations (−1.5, −.5, .5, 1.5) and (−1.5, .5, −.5, 1.5): Σxy = 4, Σx² = Σy² = 5
    result = length_score_correlation([100, 200, 300, 400], [0.1, 0.3, 0.2, 0.4])
    assert result.n == 4
    assert result.pearson_r == pytest.approx(0.8)
    # ranks equal the values' order: same 0.8
    assert result.spearman_rho == pytest.approx(0.8)
    assert 0 < result.pearson_p < 1


def test_spearman_differs_from_pearson_on_nonlinear_data():
    # monotone but curved: Spearman 1, Pearson below 1
    result = length_score_correlation([1, 2, 3, 4, 5], [1, 2, 3, 4, 100])
    assert result.spearman_rho == pytest.approx(1.0)
    assert result.pearson_r < 0.8


def test_missing_scores_dropped_and_degenerate_cases_none():
    result = length_score_correlation([1, 2, 3, 4, 5], [0.1, np.nan, 0.3, 0.2, 0.5])
    assert result.n == 4
    assert length_score_correlation([1, 2], [0.1, 0.2]).pearson_r is None
    assert length_score_correlation([1, 2, 3], [0.5, 0.5, 0.5]).spearman_rho is None
    with pytest.raises(MetricError):
        length_score_correlation([1, 2, 3], [0.5, 0.5])


def test_verbosity_check_per_model():
    df = pd.DataFrame(
        {
            "model": ["m"] * 4 + ["n"] * 3,
            "length_chars": [100, 200, 300, 400, 10, 20, 30],
            "score": [0.1, 0.3, 0.2, 0.4, 0.9, 0.5, 0.1],
        }
    )
    report = verbosity_check(df)
    assert report.pooled.n == 7
    assert report.per_model["m"].pearson_r == pytest.approx(0.8)
    assert report.per_model["n"].pearson_r == pytest.approx(-1.0)
    assert report.per_model["n"].n == 3
