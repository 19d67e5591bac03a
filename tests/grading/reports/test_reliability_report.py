"""The reliability report of two sources (issue 14, point 1), pinned against scikit-learn and
scipy on the same paired data: binary figures on the mini project (cohort vs judge, the pairs the
agreement command lists), ordinal figures on a 0-4 criterion scored by a cohort and by a judge
one point too high, pooled and per model."""
import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, precision_score, recall_score

from grading.bundles import bundle_import
from tests.grading.reports.test_calibrate import HUMAN, shifted_bundle


def report(project, *args):
    out = io.StringIO()
    call_command("reliability_report", "--project", project, *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_binary_figures_match_scikit_learn(mini_project, tmp_path):
    result = report("mini", "--a", "cohort:group-1", "--b", "judge:judge-a", "--by", "criterion")
    call_command("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "judge:judge-a",
                 "--pairs", str(tmp_path / "pairs.jsonl"), "--json", stdout=io.StringIO())
    pairs = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    pairs = [p for p in pairs if p["a_binary"] is not None]
    a, b = np.array([p["a_binary"] for p in pairs]), np.array([p["b_binary"] for p in pairs])
    pooled = result["pooled"]
    assert pooled["n"] == len(pairs) == 6
    assert pooled["accuracy"] == pytest.approx(accuracy_score(a, b))
    for cls, name in ((1, "met"), (0, "not_met")):
        assert pooled[f"precision_{name}"] == pytest.approx(precision_score(a, b, pos_label=cls, zero_division=0))
        assert pooled[f"recall_{name}"] == pytest.approx(recall_score(a, b, pos_label=cls, zero_division=0))
        assert pooled[f"f1_{name}"] == pytest.approx(f1_score(a, b, pos_label=cls, zero_division=0))
    assert pooled["mf1"] == pytest.approx((pooled["f1_met"] + pooled["f1_not_met"]) / 2)
    assert pooled["cohen_kappa"] == pytest.approx(cohen_kappa_score(a, b))
    ecg = [p for p in pairs if p["criterion_id"] == "c1-ecg"]
    assert result["groups"]["c1-ecg"]["n"] == len(ecg)
    assert result["groups"]["c1-ecg"]["accuracy"] == pytest.approx(np.mean([p["a_binary"] == p["b_binary"] for p in ecg]))


def test_ordinal_figures_match_scipy_and_scikit_learn(db, tmp_path):
    bundle_import(path=shifted_bundle(tmp_path / "shift"))
    result = report("shift", "--a", "cohort:docs", "--b", "judge:j", "--by", "model")
    human = np.array(HUMAN, dtype=float)
    judge = np.minimum(human + 1, 4)
    pooled = result["pooled"]
    assert (pooled["n"], pooled["n_ordinal"], pooled["scale"]) == (0, 40, "native")
    labels = [0, 1, 2, 3, 4]
    assert pooled["qwk"] == pytest.approx(cohen_kappa_score(human, judge, weights="quadratic", labels=labels))
    assert pooled["linear_wk"] == pytest.approx(cohen_kappa_score(human, judge, weights="linear", labels=labels))
    assert pooled["spearman"] == pytest.approx(stats.spearmanr(human, judge)[0])
    assert pooled["pearson"] == pytest.approx(stats.pearsonr(human, judge)[0])
    assert pooled["mean_difference"] == pytest.approx(np.mean(judge - human)) == pytest.approx(0.8)
    assert pooled["emd"] == pytest.approx(stats.wasserstein_distance(human, judge))
    ks = stats.ks_2samp(human, judge)
    assert (pooled["ks_statistic"], pooled["ks_pvalue"]) == (pytest.approx(ks.statistic), pytest.approx(ks.pvalue))
    assert set(result["groups"]) == {"m0", "m1", "m2"}
    m0 = np.arange(40) % 3 == 0
    assert result["groups"]["m0"]["n_ordinal"] == int(m0.sum())
    assert result["groups"]["m0"]["mean_difference"] == pytest.approx(np.mean(judge[m0] - human[m0]))


def test_bad_groupings_are_named(mini_project):
    with pytest.raises(Exception, match="invalid choice"):
        report("mini", "--a", "cohort:group-1", "--b", "gold", "--by", "case")
