"""Bias and score matrices in the rubric's own scale (issue 13, point 1), pinned by hand.

Three judges (j1, j2, j3, whose own models are the targets m1, m2, m3) score a 0–10 criterion
twice each (two samples) on two cases; five experts of one cohort score the same responses. Each
judge gives both responses of a target the same points in a sample, so the cell means are the
sample values:

    samples   m1      m2      m3          S = μ     m1    m2    m3
    j1        9, 8    6, 6    5, 7         j1       8.5   6     6
    j2        7, 7    9, 9    6, 4         j2       7     9     5
    j3        6, 6    5, 7    8, 8         j3       6     6     8

Bias[i][j] = S[i][j] − mean of the other two judges: m1 (2, −0.25, −1.75), m2 (−1.5, 3, −1.5),
m3 (−0.5, −2, 2.5); self-bias j1 +2, j2 +3, j3 +2.5 points (0.2, 0.3, 0.25 on [0, 1]).
The experts: m1 8, 7, 9, 6, 5 (mean 7, sd √2.5); m2 6, 6, 7, 5, 6 (6, sd √0.5); m3 4, 5, 6, 7, 3
(5, sd √2.5). The cohort decision is a majority: a tie (no decision) for m1 and m3, 6 for m2.
"""
import math

import pytest
from django.core.management import call_command

from grading.bundles import bundle_import
from tests.grading.reports.points import SAMPLES, bias, points_bundle


def _bundle(directory):
    return points_bundle(directory, samples=SAMPLES, models={j: f"m{j[1]}" for j in SAMPLES}, safe=True)


@pytest.fixture
def points(db, tmp_path):
    bundle_import(path=_bundle(tmp_path / "points"))


def approx(matrix, scale=1.0):
    return [[None if v is None else pytest.approx(v * scale, abs=1e-9) for v in row] for row in matrix]


S = [[8.5, 6, 6], [7, 9, 5], [6, 6, 8]]
BIAS = [[2, -1.5, -0.5], [-0.25, 3, -2], [-1.75, -1.5, 2.5]]
SD = [[math.sqrt(0.5), 0, math.sqrt(2)], [0, 0, math.sqrt(2)], [0, math.sqrt(2), 0]]


def test_self_bias_in_points_with_monte_carlo_cells(points):
    result = bias("--condition", "attributed", "--criterion", "quality")
    assert (result["judges"], result["targets"]) == (["j1", "j2", "j3"], ["m1", "m2", "m3"])
    assert (result["scale"], result["range"], result["criterion"], result["n_criteria"]) == ("native", [0.0, 10.0], "quality", 1)
    assert result["scores"] == approx(S) and result["mu"] == approx(S)
    assert result["bias"] == approx(BIAS)
    assert all(sum(column) == pytest.approx(0, abs=1e-12) for column in zip(*result["bias"]))
    assert result["self_bias"] == {"j1": pytest.approx(2), "j2": pytest.approx(3), "j3": pytest.approx(2.5)}
    assert result["sd"] == approx(SD)
    assert result["counts"] == [[2, 2, 2]] * 3 and result["samples"] == {"j1": 2, "j2": 2, "j3": 2}
    assert result["n_judges"] == {"m1": 3, "m2": 3, "m3": 3} and result["warnings"] == []

    unit = bias("--condition", "attributed", "--criterion", "quality", "--scale", "unit")
    assert unit["range"] == [0.0, 1.0] and unit["bias"] == approx(BIAS, 0.1) and unit["sd"] == approx(SD, 0.1)
    assert unit["self_bias"] == {"j1": pytest.approx(0.2), "j2": pytest.approx(0.3), "j3": pytest.approx(0.25)}


def test_the_human_reference_is_the_mean_of_five_experts_or_the_tied_decision(points):
    result = bias("--condition", "attributed", "--criterion", "quality", "--reference", "cohort:panel")
    assert result["human"] == "mean" and result["human_scores"] == {"m1": 7.0, "m2": 6.0, "m3": 5.0}
    assert result["human_bias"] == approx([[1.5, 0, 1], [0, 3, 0], [-1, 0, 3]])
    assert result["mean_human_bias"] == pytest.approx(7.5 / 9)
    panel = result["panel"]
    assert (panel["targets"], panel["criteria"], panel["experts"]) == (["m1", "m2", "m3"], ["all", "quality"],
                                                                      ["e1", "e2", "e3", "e4", "e5"])
    assert panel["mean"] == approx([[7, 7], [6, 6], [5, 5]])
    assert panel["sd"] == approx([[math.sqrt(2.5)] * 2, [math.sqrt(0.5)] * 2, [math.sqrt(2.5)] * 2])
    assert panel["n_experts"] == [[5, 5]] * 3

    decided = bias("--condition", "attributed", "--criterion", "quality", "--reference", "cohort:panel", "--human", "decision")
    assert decided["human"] == "decision" and decided["human_scores"] == {"m1": None, "m2": 6.0, "m3": None}
    assert decided["human_bias"] == approx([[None, 0, None], [None, 3, None], [None, 0, None]])
    assert any("no human score for m1, m3" in w for w in decided["warnings"])


def test_all_criteria_pool_one_scale_and_two_judges_are_flagged(points):
    pooled = bias("--condition", "attributed")
    assert pooled["criterion"] == "all" and pooled["range"] == [0.0, 10.0] and pooled["n_criteria"] == 1
    assert any("other scales than 0–10" in w and "safe" in w for w in pooled["warnings"])
    assert pooled["bias"] == approx(BIAS) and "per_criterion" not in pooled  # one criterion: nothing to break down
    unit = bias("--condition", "attributed", "--scale", "unit")
    assert unit["n_criteria"] == 2 and set(unit["per_criterion"]) == {"quality", "safe"}
    # safe: every judge says met in sample 0 and not met in sample 1: a tie, which the majority of
    # two samples leaves unresolved (no value); μ over the samples is 0.5 with σ √0.5.
    safe = unit["per_criterion"]["safe"]
    assert safe["mu"] == approx([[0.5] * 3] * 3) and safe["sd"] == approx([[math.sqrt(0.5)] * 3] * 3)

    two = bias("--condition", "anonymized", "--criterion", "quality")
    assert two["n_judges"] == {"m1": 2, "m2": 2, "m3": 2}
    assert len(two["warnings"]) == 1 and "fewer than three judges score m1, m2, m3" in two["warnings"][0]
    assert two["bias"][0] == [pytest.approx(0.5), pytest.approx(-2), pytest.approx(1)]  # a1; a2 is its mirror
    assert two["bias"][1] == [pytest.approx(-0.5), pytest.approx(2), pytest.approx(-1)]


@pytest.mark.parametrize("args, message", [
    (["--criterion", "nope"], "has no criterion 'nope'"),
    (["--scale", "points"], "invalid choice"),
])
def test_bad_options_are_named(points, args, message, capsys):
    with pytest.raises((SystemExit, Exception)) as caught:
        bias("--condition", "attributed", *args)
    assert message in str(caught.value) + capsys.readouterr().err


def test_stability_per_target_and_criterion_and_per_kind(points, capsys):
    import io
    import json

    out = io.StringIO()
    call_command("stability", "--project", "points", "--judge", "j1", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert set(result) == {"judge", "samples", "samples_seen", "scale", "cells", "by_kind", "mean_sd_by_kind", "n_excluded_cases",
                           "n_draft_labels", "cannot_assess_strategy", "left_out"}
    assert result["cannot_assess_strategy"] == "skip"  # a cannot-assess sample has no value: left out of μ and σ
    assert (result["judge"], result["samples_seen"], result["scale"]) == ("j1", 2, "native")
    cells = {(c["target"], c["criterion"]): c for c in result["cells"]}
    assert len(cells) == 6
    assert cells[("m1", "quality")] == {"target": "m1", "criterion": "quality", "kind": "ordinal", "mu": 8.5,
                                        "sigma": pytest.approx(math.sqrt(0.5)), "n_samples": 2, "n_items": 2}
    assert cells[("m2", "quality")]["sigma"] == 0.0 and cells[("m3", "quality")]["sigma"] == pytest.approx(math.sqrt(2))
    assert cells[("m1", "safe")]["mu"] == 0.5 and cells[("m1", "safe")]["sigma"] == pytest.approx(math.sqrt(0.5))
    # per item sds: quality m1 √0.5 (×2), m2 0 (×2), m3 √2 (×2) -> mean √0.5; safe met then not met: √0.5 each
    assert result["mean_sd_by_kind"] == {"ordinal": pytest.approx(math.sqrt(0.5)), "binary": pytest.approx(math.sqrt(0.5))}
    assert result["by_kind"]["ordinal"] == {"n_items": 6, "n_items_with_sd": 6, "mean_sd": pytest.approx(math.sqrt(0.5))}

    with pytest.raises(Exception, match="unknown judge 'nobody'"):
        call_command("stability", "--project", "points", "--judge", "nobody", "--json", stdout=io.StringIO())
