"""HealthBench's pairwise physician protocol (issue 14, point 2), worked by hand: three physicians
and a grader on three binary items, one of them labelled by one physician only (no pair).

    item            p1        p2        p3        grader
    r1 / c-a        met       met       not met   met
    r1 / c-b        not met   met       -         met
    r2 / c-a        -         -         met       met

p1's pairs (truth = the other's label, prediction = p1's): (met, met), (not met, met), (met, not met)
-> F1 met 2·1/(2·1 + 1 + 1) = 0.5, F1 not met 0 -> MF1 0.25 over n = 3; p2 the same (0.25, 3);
p3: (met, not met) twice -> MF1 0 over 2. The grader against all six labels: TP 4, FP 2 -> F1 met
0.8, F1 not met 0 -> MF1 0.4; above every physician: percentile 100.
"""
import io
import json

import pytest
from django.core.management import call_command

from grading.bundles import bundle_import
from grading.metrics.pairwise import percentile
from tests.bundles import write_bundle

LABELS = {("r1", "c-a"): {"p1": "met", "p2": "met", "p3": "not_met"}, ("r1", "c-b"): {"p1": "not_met", "p2": "met"},
          ("r2", "c-a"): {"p3": "met"}}


def bundle(directory):
    rubric = [{"criterion_id": "c-a", "text": "Advises emergency care", "tags": ["emergency:triage"]},
              {"criterion_id": "c-b", "text": "Gives the dose", "tags": ["emergency:dosing", "communication"]}]
    project = {"slug": "hb", "name": "HB", "rubric": rubric, "cohorts": [{"name": "docs"}],
               "judges": [{"name": "g", "backend": "replay", "model": "m-g", "condition": "anonymized"}]}
    responses = [{"response_id": r, "case_id": "c1", "model": "m", "text": "Go to the ER."} for r in ("r1", "r2")]
    labels = [{"response_id": r, "criterion_id": c, "cohort": "docs", "annotator": who, "verdict": v}
              for (r, c), raters in LABELS.items() for who, v in raters.items()]
    judgments = [{"response_id": r, "criterion_id": c, "judge": "g", "judge_model": "m-g", "condition": "anonymized",
                  "sample": 0, "verdict": "met", "explanation": "", "evidence": [], "raw": ""} for r, c in LABELS]
    return write_bundle(directory, {"project": project, "cases": [{"case_id": "c1", "prompt": "Chest pain"}],
                                    "responses": responses, "labels": labels, "judgments": judgments})


def pairwise(*args):
    out = io.StringIO()
    call_command("pairwise_agreement", "--project", "hb", "--source", "cohort:docs", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_protocol_by_hand(db, tmp_path):
    bundle_import(path=bundle(tmp_path / "hb"))
    result = pairwise("--grader", "judge:g", "--min-n", "0")
    assert result["annotators"] == {"p1": {"mf1": 0.25, "n": 3}, "p2": {"mf1": 0.25, "n": 3}, "p3": {"mf1": 0.0, "n": 2}}
    assert result["weighted_mean_mf1"] == pytest.approx((0.25 * 3 + 0.25 * 3 + 0 * 2) / 8)
    assert result["grader"] == {"mf1": pytest.approx(0.4), "n": 6, "percentile": 100.0}
    assert pairwise("--min-n", "2")["weighted_mean_mf1"] == pytest.approx(0.25)  # p3 has n = 2 <= 2: left out
    assert "grader" not in pairwise("--min-n", "2")


def test_tags_and_themes_by_hand(db, tmp_path):
    bundle_import(path=bundle(tmp_path / "hb"))
    result = pairwise("--grader", "judge:g", "--min-n", "0", "--by", "tag")
    triage = result["by_tag"]["emergency:triage"]
    # r1/c-a only (r2/c-a has one physician): p1 and p2 (met, met), (not met, met) -> MF1 1/3 over 2; p3 0 over 2
    assert triage["annotators"] == {"p1": {"mf1": pytest.approx(1 / 3), "n": 2}, "p2": {"mf1": pytest.approx(1 / 3), "n": 2},
                                    "p3": {"mf1": 0.0, "n": 2}}
    assert triage["weighted_mean_mf1"] == pytest.approx(2 / 9)
    assert triage["grader"]["mf1"] == pytest.approx(3 / 7) and triage["grader"]["n"] == 4  # TP 3, FP 1
    dosing = result["by_tag"]["emergency:dosing"]
    assert dosing["weighted_mean_mf1"] == 0.0 and dosing["grader"]["mf1"] == pytest.approx(1 / 3)
    assert result["by_tag"]["communication"] == dosing
    # a theme: the n-weighted mean of its tags' figures
    assert result["by_theme"]["emergency"] == {"weighted_mean_mf1": pytest.approx((2 / 9 * 6 + 0 * 2) / 8),
                                               "grader_mf1": pytest.approx((3 / 7 * 4 + 1 / 3 * 2) / 6)}
    assert result["by_theme"]["communication"]["grader_mf1"] == pytest.approx(1 / 3)


def test_the_percentile_counts_ties_half():
    assert percentile(0.25, [0.25, 0.25, 0.0]) == pytest.approx(100 * (1 + 0.5 * 2) / 3)
    assert percentile(0.0, [0.25, 0.5]) == 0.0 and percentile(None, [0.1]) is None and percentile(0.3, []) is None


def test_only_a_cohort_is_compared(db, tmp_path):
    bundle_import(path=bundle(tmp_path / "hb"))
    with pytest.raises(Exception, match="is not a cohort"):
        call_command("pairwise_agreement", "--project", "hb", "--source", "judge:g", "--json", stdout=io.StringIO())
