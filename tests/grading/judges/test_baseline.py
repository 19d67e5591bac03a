"""The offline baseline judge: lexical coverage, negation, determinism, evidence that passes the check."""
from grading.judges.baseline import baseline_judge, key_terms
from grading.judges.parsing import evidence_valid_quotes
from grading.models import Judge, Judgment


def judge(criterion, response, kind="binary", options=()):
    return baseline_judge(criterion_text=criterion, response_text=response, kind=kind, options=list(options))


def test_key_terms_drop_rubric_verbs_and_stop_words():
    assert key_terms("Recommends an ECG") == (["ecg"], False)
    assert key_terms("Advises calling emergency services") == (["call", "emergency", "servic"], False)
    assert key_terms("Does not recommend antibiotics") == (["antibiotic"], True)


def test_coverage_decides_and_quotes_are_verbatim():
    out = judge("Advises calling emergency services", "Call emergency services now. An ECG is needed.")
    assert (out.valid, out.verdict) == (True, "met")
    assert out.evidence == ["Call emergency services now."]
    assert evidence_valid_quotes(quotes=out.evidence, response_text="Call emergency services now. An ECG is needed.") == out.evidence
    assert judge("Advises calling emergency services", "Rest at home.").verdict == "not_met"
    assert "Baseline" in out.explanation


def test_negated_mentions_do_not_count():
    assert judge("Recommends antibiotics", "Rest and take antibiotics.").verdict == "met"
    assert judge("Recommends antibiotics", "Do not take antibiotics for this.").verdict == "not_met"
    assert judge("Recommends antibiotics", "You should avoid antibiotics.").verdict == "not_met"
    negated = judge("Does not recommend antibiotics", "You should avoid antibiotics.")
    assert negated.verdict == "met" and "negated" in negated.explanation


def test_ordinal_maps_coverage_and_nominal_cannot_be_assessed():
    scale = [{"label": "poor", "value": 0}, {"label": "ok", "value": 0.5}, {"label": "good", "value": 1},
             {"label": "n/a", "value": 0, "na": True}]
    full = judge("Warm tone", "A warm tone throughout.", kind="ordinal", options=scale)
    assert (full.option_label, full.value) == ("good", 1.0)
    none = judge("Warm tone", "Nothing relevant.", kind="ordinal", options=scale)
    assert (none.option_label, none.value) == ("poor", 0.0)
    assert judge("Length is right", "x", kind="nominal", options=[{"label": "short", "value": 0}]).verdict == "cannot_assess"


def test_baseline_run_is_offline_deterministic_and_labelled(mini_project, run_judge):
    baseline = Judge.objects.create(project=mini_project, name="lexical", backend=Judge.BASELINE)
    first, summary = run_judge(baseline)
    assert (first.status, first.done_calls, first.calls_made, first.cost_usd, first.invalid_count) == ("finished", 11, 0, 0, 0)
    keys = ("response__external_id", "criterion__external_id", "verdict")
    rows = {(r, c): v for r, c, v in Judgment.objects.filter(run=first).values_list(*keys)}
    assert rows[("r1", "c1-ecg")] == "met" and rows[("r2", "c1-ecg")] == "not_met" and rows[("r2", "c1-abx")] == "met"
    assert rows[("r1", "c1-call")] == "met"  # min_evidence 1 is satisfied by its verbatim quote
    second, _ = run_judge(baseline)
    again = {(r, c): v for r, c, v in Judgment.objects.filter(run=second).values_list(*keys)}
    assert again == rows
