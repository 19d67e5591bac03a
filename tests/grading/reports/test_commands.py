"""The report commands of SPEC §5 on the ``mini`` project: exact JSON keys, values checked
against hand calculations written out here, and one-line errors with exit status 1.

Binary decisions of the two cohorts (r1, r2, r4 x ecg, call, abx; tests/bundles.py):
group-1 = 1 1 0 | 0 0 1 | 1 1 0 and group-2 = 1 1 0 | 1 0 1 | 1 1 0, so TP 5, FP 1, FN 0,
TN 3: F1_met = 10/11, F1_not_met = 6/7, MF1 = 68/77, kappa = (8/9 - 42/81)/(1 - 42/81) =
10/13, Krippendorff's alpha (nominal, coincidences 10/1/1/6 of 18 values) = 60/77.
"""
import json
import subprocess
import sys
from io import StringIO

import krippendorff
import numpy as np
import pytest
from django.core.management import CommandError, call_command

AGREEMENT_KEYS = {
    "n_decisions", "matched_responses", "unmatched_responses", "mf1", "f1_met", "f1_not_met", "cohen_kappa",
    "krippendorff_alpha", "percent_agreement", "positive_rate_a", "positive_rate_b", "invalid_b", "by_model",
    "case_level", "ordinal", "criteria_compared", "n_excluded_cases", "n_draft_labels", "cannot_assess_strategy", "left_out",
}
# What every report states (issue 25): the cannot-assess strategy in use and what was left out.
NOTHING_LEFT_OUT = {"draft_labels": 0, "excluded_cases": 0, "few_shot_cases": {}, "criteria_not_decided": {}}


def run(*args) -> dict:
    out = StringIO()
    call_command(*args, "--json", stdout=out)
    text = out.getvalue()
    assert text.count("\n") <= 1
    return json.loads(text)


def test_agreement_cohort_vs_cohort(mini_project):
    result = run("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "cohort:group-2")
    assert set(result) == AGREEMENT_KEYS
    assert result["n_decisions"] == 9
    assert (result["matched_responses"], result["unmatched_responses"]) == (4, 0)
    assert result["f1_met"] == pytest.approx(10 / 11)
    assert result["f1_not_met"] == pytest.approx(6 / 7)
    assert result["mf1"] == pytest.approx(68 / 77)
    assert result["cohen_kappa"] == pytest.approx(10 / 13)
    assert result["krippendorff_alpha"] == pytest.approx(60 / 77)
    assert result["percent_agreement"] == pytest.approx(8 / 9)
    assert (result["positive_rate_a"], result["positive_rate_b"]) == (pytest.approx(5 / 9), pytest.approx(6 / 9))
    assert result["invalid_b"] == 0
    # with each cohort's annotators and checkers per model (ClinConsensus Table 3): group-1 has ann1 and
    # ann2, and its checker chk1 labelled r1 (model-a); group-2 has ann3
    raters = {"annotators_a": 2, "checkers_a": 0, "annotators_b": 1, "checkers_b": 0}
    assert result["by_model"] == {
        "model-a": {"mf1": 1.0, "n_decisions": 3, **raters, "checkers_a": 1},
        "model-b": {"mf1": pytest.approx(2 / 3), "n_decisions": 3, **raters},  # 0 0 1 vs 1 0 1: F1 2/3 both
        "physician": {"mf1": 1.0, "n_decisions": 3, **raters},
    }
    # case-level MF1 over (model, case): 1, 2/3, 1 -> numpy's linear quartiles of [2/3, 1, 1]
    assert result["case_level"] == {
        "n": 3, "n_undefined": 0, "mean": pytest.approx(8 / 9), "median": 1.0, "q25": pytest.approx(5 / 6),
        "q75": 1.0, "share_below_0_6": 0.0,
    }
    # one ordinal pair (r3 tone: good vs good); kappa undefined with one class
    assert result["ordinal"] == {"n": 1, "qwk": None, "exact": 1.0, "adjacent": 1.0}


def test_agreement_judge_counts_invalid_and_missing_output(mini_project):
    result = run("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "judge:judge-a")
    # judge-a: r1 = 1 0 0 (call, abx missing), r2 = 0 0 0 (ecg unparseable, call, abx missing)
    # vs group-1 r1 = 1 1 0, r2 = 0 0 1: TP 1, FN 2, FP 0, TN 3
    assert result["n_decisions"] == 6
    assert result["invalid_b"] == 5
    assert result["f1_met"] == pytest.approx(0.5)
    assert result["f1_not_met"] == pytest.approx(0.75)
    assert result["mf1"] == pytest.approx(0.625)
    assert result["positive_rate_b"] == pytest.approx(1 / 6)
    assert (result["matched_responses"], result["unmatched_responses"]) == (3, 1)  # r4 never judged


def test_agreement_cannot_assess_strategies(mini_project):
    from annotation.models import Label
    from annotation.services import label_save

    label = Label.objects.select_related("response", "criterion", "cohort", "annotator").get(
        annotator__username="ann3", response__external_id="r2", criterion__external_id="c1-ecg"
    )
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, verdict="cannot_assess", replace=True)
    skip = run("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "cohort:group-2", "--cannot-assess", "skip")
    zero = run("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "cohort:group-2", "--cannot-assess", "zero")
    assert skip["n_decisions"] == 8 and skip["mf1"] == 1.0  # the only disagreement is left out
    assert zero["n_decisions"] == 9 and zero["mf1"] == 1.0  # cannot_assess -> not met, which group-1 said too


def test_reliability_inside_a_cohort(mini_project):
    assert run("reliability", "--project", "mini", "--source", "cohort:group-1") == {
        "krippendorff_alpha": 1.0, "n_units": 11, "n_raters": 3, "level": "nominal", "n_excluded_cases": 0, "n_draft_labels": 0,
        "cannot_assess_strategy": "skip", "left_out": NOTHING_LEFT_OUT,
    }
    single = run("reliability", "--project", "mini", "--source", "cohort:group-2")
    assert single == {"krippendorff_alpha": None, "n_units": 0, "n_raters": 1, "level": "nominal",
                      "n_excluded_cases": 0, "n_draft_labels": 0, "cannot_assess_strategy": "skip", "left_out": NOTHING_LEFT_OUT}


def test_reliability_matches_the_library_after_a_disagreement(mini_project):
    from annotation.models import Label
    from annotation.services import label_save

    label = Label.objects.select_related("response", "criterion", "cohort", "annotator").get(
        annotator__username="ann2", response__external_id="r2", criterion__external_id="c1-call"
    )
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, verdict="met", replace=True)
    result = run("reliability", "--project", "mini", "--source", "cohort:group-1", "--level", "interval")
    # interval: binary units (9) + tone (1); length is nominal and left out; chk1 rates r1/abx
    ann1 = [1, 1, 0, 0, 0, 1, 1, 1, 0, 1]
    ann2 = [1, 1, 0, 0, 1, 1, 1, 1, 0, 1]
    chk1 = [np.nan, np.nan, 0] + [np.nan] * 7
    expected = krippendorff.alpha(reliability_data=[ann1, ann2, chk1], level_of_measurement="interval")
    assert result == {"krippendorff_alpha": pytest.approx(expected), "n_units": 10, "n_raters": 3, "level": "interval",
                      "n_excluded_cases": 0, "n_draft_labels": 0, "cannot_assess_strategy": "skip", "left_out": NOTHING_LEFT_OUT}


def test_coverage_by_hand(mini_project):
    result = run("coverage", "--project", "mini", "--source", "cohort:group-1")
    assert set(result) == {"k", "overall", "by_model", "by_stratum", "sensitivity", "n_excluded_cases", "n_draft_labels",
                           "cannot_assess_strategy", "left_out"}
    assert result["cannot_assess_strategy"] == "zero"  # coverage counts cannot assess as not met
    assert [s["name"] for s in result["sensitivity"]] == ["CACS@7", "CACS@8", "CACS@12", "CACS@15", "rubric_accuracy", "Pass@2"]
    # k = 2 (project); r1 hits 2 of 3, r2 hits 1 of 3 (the penalty item counts as a criterion); r3 has no binary criteria
    assert result["k"] == 2
    assert result["by_model"] == {
        "model-a": {"rubric_accuracy": pytest.approx(200 / 3), "pass_at_k": 100.0, "cacs": 50.0, "n_responses": 1},
        "model-b": {"rubric_accuracy": pytest.approx(100 / 3), "pass_at_k": 0.0, "cacs": 0.0, "n_responses": 1},
    }
    assert result["overall"] == {"rubric_accuracy": pytest.approx(50.0), "pass_at_k": 50.0, "cacs": 25.0, "n_responses": 2}
    assert result["by_stratum"]["difficulty"]["high"]["model-a"]["cacs"] == 50.0
    assert set(result["by_stratum"]["task_themes"]) == {"emergency"}
    assert result["by_stratum"]["specialties"]["cardiology"]["model-b"]["n_responses"] == 1
    k1 = run("coverage", "--project", "mini", "--source", "cohort:group-1", "--k", "1", "--sensitivity", "0,3")
    assert [s["name"] for s in k1["sensitivity"]] == ["CACS@0", "CACS@3", "rubric_accuracy", "Pass@1"]
    # CACS@1: r1 (2-1+1)/(3-1+1) = 2/3, r2 1/3 -> 50 %
    assert k1["overall"]["cacs"] == pytest.approx(50.0) and k1["overall"]["pass_at_k"] == 100.0


def test_calibrate_k_from_the_physician_answer(mini_project):
    assert run("calibrate_k", "--project", "mini", "--source", "cohort:group-1") == {
        "k": 2, "mean_hits": 2.0, "n_responses": 1, "n_excluded_cases": 0, "n_draft_labels": 0, "cannot_assess_strategy": "zero",
        "left_out": NOTHING_LEFT_OUT}


def test_scores_weighted_by_hand(mini_project):
    result = run("scores", "--project", "mini", "--source", "cohort:group-1")
    assert set(result) == {"cannot_assess_strategy", "responses", "by_model", "n_excluded_cases", "n_draft_labels", "left_out"}
    # r1: 2 + 3 met, penalty not met -> 5/5; r2: only the penalty (-2) met -> clamp(-2/5) = 0; r3: 1 + 1 of 2
    assert result["responses"] == {"r1": 1.0, "r2": 0.0, "r3": 1.0, "r4": 1.0}
    assert result["by_model"] == {"model-a": {"mean_score": 1.0, "n": 2}, "model-b": {"mean_score": 0.0, "n": 1},
                                  "physician": {"mean_score": 1.0, "n": 1}}


@pytest.mark.parametrize("strategy, r3", [("skip", 0.75), ("zero", 0.375)])
def test_scores_of_a_judge_with_invalid_output(mini_project, strategy, r3):
    result = run("scores", "--project", "mini", "--source", "judge:judge-a", "--cannot-assess", strategy)
    # r1: ecg met (2) of P = 5 -> 0.4; r2: all not met -> 0; r3: tone 0.75, length invalid (no value)
    assert result["responses"] == {"r1": pytest.approx(0.4), "r2": 0.0, "r3": pytest.approx(r3)}


BIAS_KEYS = {"judges", "targets", "scores", "bias", "self_bias", "n_excluded_cases", "n_draft_labels", "scale", "range", "criterion",
             "n_criteria", "counts", "mu", "sd", "samples", "n_judges", "warnings", "item_coverage", "left_out_judges",
             "cannot_assess_strategy", "left_out"}


def test_bias_matrix_by_hand(mini_project, second_judge):
    """The mini project mixes binary and ordinal criteria: pooled on [0, 1], against the cohort decision."""
    result = run("bias_matrix", "--project", "mini", "--condition", "anonymized", "--reference", "cohort:group-1",
                 "--scale", "unit", "--human", "decision")
    assert set(result) == BIAS_KEYS | {"human_bias", "mean_human_bias", "human_scores", "human", "reference", "panel",
                                       "per_criterion"}
    assert (result["scale"], result["range"], result["criterion"], result["human"]) == ("unit", [0.0, 1.0], "all", "decision")
    assert result["n_judges"] == {"model-a": 2, "model-b": 2} and result["samples"] == {"judge-a": 1, "judge-b": 1}
    assert len(result["warnings"]) == 2 and "fewer than three judges score model-a, model-b" in result["warnings"][1]
    assert result["warnings"][0].startswith("the cells rest on different items: the judges scored judge-a 7, judge-b 6 of 7")
    assert result["sd"] == [[None, None], [None, None]]  # one sample each: no Monte Carlo spread
    assert result["judges"] == ["judge-a", "judge-b"] and result["targets"] == ["model-a", "model-b"]
    # judge-a: model-a (1 + 0 + 0 + 0.75) / 4 (length has no value), model-b 0; judge-b: 2/3, 1/3
    assert result["scores"] == [[0.4375, 0.0], [pytest.approx(2 / 3), pytest.approx(1 / 3)]]
    d = 0.4375 - 2 / 3
    assert result["bias"] == [[pytest.approx(d), pytest.approx(-1 / 3)], [pytest.approx(-d), pytest.approx(1 / 3)]]
    assert [sum(col) for col in zip(*result["bias"])] == [pytest.approx(0), pytest.approx(0)]
    assert result["self_bias"] == {"judge-b": pytest.approx(-d)}  # judge-b's own model is model-a
    # group-1 decisions over the criteria the judges score (length has no judge value anywhere, so it
    # is left out on both sides): model-a (ecg 1 + call 1 + abx 0 + tone 1) / 4 = 0.75, model-b 1/3
    assert result["human_scores"] == {"model-a": 0.75, "model-b": pytest.approx(1 / 3)}
    hum = [[0.4375 - 0.75, -1 / 3], [2 / 3 - 0.75, 0.0]]
    assert result["human_bias"] == [[pytest.approx(x, abs=1e-12) for x in row] for row in hum]
    assert result["mean_human_bias"] == pytest.approx(sum(map(sum, hum)) / 4)
    assert result["mu"] == [[0.4375, 0.0], [pytest.approx(2 / 3), pytest.approx(1 / 3)]]  # one sample: μ = S
    plain = run("bias_matrix", "--project", "mini", "--condition", "anonymized", "--scale", "unit")
    assert set(plain) == BIAS_KEYS | {"per_criterion"}


@pytest.mark.parametrize("args, message", [
    (["agreement", "--project", "nope", "--a", "cohort:group-1", "--b", "gold"], "unknown project 'nope'"),
    (["agreement", "--project", "mini", "--a", "cohort:nobody", "--b", "gold"], "unknown cohort 'nobody'"),
    (["agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "gold", "--cannot-assess", "maybe"],
     "unknown cannot-assess strategy"),
    (["coverage", "--project", "mini", "--source", "judge:nobody"], "unknown judge 'nobody'"),
    (["scores", "--project", "mini", "--source", "crowd:x"], "unknown project 'crowd'"),
    (["reliability", "--project", "mini", "--source", "gold"], "reliability needs a cohort or a judge"),
    (["calibrate_k", "--project", "mini", "--source", "judge:judge-a"], "no human-authored responses"),
    (["bias_matrix", "--project", "mini", "--condition", "attributed"], "no attributed judges"),
])
def test_bad_arguments_give_one_line_errors(mini_project, args, message):
    with pytest.raises(CommandError, match=message) as info:
        call_command(*args, "--json", stdout=StringIO())
    assert "\n" not in str(info.value)


def test_exit_status_and_stderr_from_the_command_line(tmp_path):
    env = {"DJANGO_SETTINGS_MODULE": "evalsite.settings.test", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
           "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], check=True, env=env, capture_output=True)
    done = subprocess.run([sys.executable, "manage.py", "agreement", "--project", "nope", "--a", "gold", "--b", "gold", "--json"],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == ["CommandError: unknown project 'nope'"]




def test_a_judge_without_judgments_gives_empty_figures_not_a_crash(mini_project):
    from grading.models import Judge

    Judge.objects.create(project=mini_project, name="idle", model="x")
    result = run("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "judge:idle")
    assert result["n_decisions"] == 0 and result["mf1"] is None
    assert (result["matched_responses"], result["unmatched_responses"]) == (0, 4)
    assert result["case_level"]["n"] == 0
    with pytest.raises(CommandError, match="judge:idle decided no binary criterion"):
        call_command("coverage", "--project", "mini", "--source", "judge:idle", "--json", stdout=StringIO())
    assert run("scores", "--project", "mini", "--source", "judge:idle") == {
        "cannot_assess_strategy": "skip", "responses": {}, "by_model": {}, "n_excluded_cases": 0, "n_draft_labels": 0,
        "left_out": NOTHING_LEFT_OUT}
    assert run("reliability", "--project", "mini", "--source", "judge:idle")["n_units"] == 0


def test_the_sensitivity_block_on_a_constructed_ranking():
    """Five models, 16 binary criteria, k = 10: CACS@10 ties D and E at 0; CACS@7 separates them."""
    import pandas as pd
    from scipy import stats

    from grading.metrics import threshold_sensitivity

    hits = {"A": 15, "B": 12, "C": 10, "D": 8, "E": 7}
    df = pd.DataFrame({"model": list(hits), "hits": list(hits.values()), "n_criteria": [16] * 5})
    result = threshold_sensitivity(df, k=10, ks=[7, 15])
    by_name = {alt.name: alt for alt in result.alternatives}
    assert list(by_name) == ["CACS@7", "CACS@15", "rubric_accuracy", "Pass@10"]
    cacs10 = [max(0, s - 9) / 7 for s in hits.values()]
    cacs7 = [max(0, s - 6) / 10 for s in hits.values()]
    assert by_name["CACS@7"].comparison.spearman_rho == pytest.approx(stats.spearmanr(cacs10, cacs7)[0])
    assert by_name["CACS@7"].comparison.top3_overlap == 1.0
    cacs15 = [max(0, s - 14) / 2 for s in hits.values()]
    assert by_name["CACS@15"].comparison.spearman_rho == pytest.approx(stats.spearmanr(cacs10, cacs15)[0])


@pytest.mark.parametrize("value", ["7,x", "-1"])
def test_a_bad_sensitivity_list_is_named(mini_project, value):
    with pytest.raises(CommandError, match="--sensitivity takes whole numbers"):
        run("coverage", "--project", "mini", "--source", "cohort:group-1", "--sensitivity", value)


def test_scores_with_a_length_penalty_by_hand(mini_project):
    plain = run("scores", "--project", "mini", "--source", "judge:judge-a")["responses"]
    result = run("scores", "--project", "mini", "--source", "judge:judge-a", "--length-penalty", "5,9,0.2")
    # words: r1 8 -> 0.2 * (8 - 5) / (9 - 5) = 0.15; r2 4 -> 0 (free); r3 6 -> 0.05; never below 0
    assert result["responses"] == {"r1": pytest.approx(max(0, plain["r1"] - 0.15)), "r2": pytest.approx(plain["r2"]),
                                   "r3": pytest.approx(max(0, plain["r3"] - 0.05))}
    assert result["length_penalty"] == {"free": 5, "cap": 9, "penalty_at_cap": 0.2, "exponent": 1.0, "unit": "words"}
    chars = run("scores", "--project", "mini", "--source", "judge:judge-a", "--length-penalty", "30,40,0.5,2",
                "--length-unit", "characters")
    # r1 has 46 characters (past the cap: the whole 0.5), r3 38: 0.5 * (8 / 10) ** 2 = 0.32; r2 26: none
    assert chars["responses"]["r3"] == pytest.approx(max(0, plain["r3"] - 0.32))
    assert chars["responses"]["r1"] == pytest.approx(max(0, plain["r1"] - 0.5))
    assert "length_penalty" not in run("scores", "--project", "mini", "--source", "judge:judge-a")
    with pytest.raises(CommandError, match="--length-penalty is FREE,CAP,PENALTY"):
        run("scores", "--project", "mini", "--source", "judge:judge-a", "--length-penalty", "5,9")
    with pytest.raises(CommandError, match="cap_words must exceed free_words"):
        run("scores", "--project", "mini", "--source", "judge:judge-a", "--length-penalty", "9,5,0.2")


def test_a_panel_shows_its_members_agreement_and_votes(mini_project, second_judge):
    """Issue 14: agreement with a panel as B gives the members' mean agreement (the ensemble vote's)
    and the vote counts per criterion (case criteria pooled by kind)."""
    import pandas as pd

    from grading.metrics import ensemble_vote
    from grading.models import Judge

    Judge.objects.create(project=mini_project, name="pair", backend=Judge.PANEL,
                         settings={"members": ["judge-a", "judge-b"], "vote": "majority"})
    result = run("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "judge:pair")
    panel = result["panel"]
    assert panel["members"] == ["judge-a", "judge-b"] and panel["vote"] == "majority"
    # binary votes on r1 and r2 (judge-a's missing outputs count as not met, its invalid r2/ecg too)
    a = {"r1": ("met", "not_met", "not_met"), "r2": ("not_met", "not_met", "not_met")}
    b = {"r1": ("met", "met", "not_met"), "r2": ("met", "not_met", "not_met")}
    assert panel["votes_by_criterion"]["(case criteria, binary)"] == {"met": 4, "not_met": 8}
    votes = pd.DataFrame([(f"{r}/{k}", member, v) for member, table in (("a", a), ("b", b)) for r, row in table.items()
                          for k, v in enumerate(row)], columns=["item", "voter", "vote"])
    expected = ensemble_vote(votes, rule="majority", positive="met", negative="not_met")
    assert panel["mean_agreement"] == pytest.approx(expected.mean_agreement) and panel["n_items"] == 6
    assert "panel" not in run("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "judge:judge-a")
