"""``partial_correlation`` (``grading.metrics.verbosity``) by Frisch–Waugh–Lovell equals the
correlation of the residuals of the full least-squares regression on every indicator column,
the definition it replaced (issue 26: at 2,500 cases that matrix took minutes)."""
import numpy as np
import pandas as pd

from grading.metrics.verbosity import partial_correlation


def _by_full_regression(x, y, covariates: pd.DataFrame) -> float:
    design = pd.get_dummies(covariates.astype(str), drop_first=True, dtype=float)
    matrix = np.column_stack([np.ones(len(x)), design.to_numpy()]) if design.shape[1] else np.ones((len(x), 1))
    residuals = [v - matrix @ np.linalg.lstsq(matrix, v, rcond=None)[0] for v in (x, y)]
    return float(np.corrcoef(*residuals)[0, 1])


def test_equals_the_full_regression_on_unbalanced_data():
    rng = np.random.default_rng(26)
    n = 600
    covariates = pd.DataFrame({"model": rng.choice(list("abcdefg"), n), "case": rng.integers(0, 90, n),
                               "register": rng.choice(["lay", "pro"], n)})
    x = rng.normal(size=n) + covariates["case"].to_numpy() / 30
    y = 0.3 * x + rng.normal(size=n) + (covariates["model"] == "c").to_numpy()
    for columns in (["model", "case"], ["case"], ["model"], ["model", "case", "register"]):
        expected = _by_full_regression(x, y, covariates[columns])
        assert abs(partial_correlation(x, y, covariates[columns]) - expected) < 1e-9, columns


def test_no_spread_left_is_none():
    covariates = pd.DataFrame({"case": [1, 1, 2, 2]})
    assert partial_correlation([1.0, 1.0, 2.0, 2.0], [0.0, 1.0, 0.0, 1.0], covariates) is None
