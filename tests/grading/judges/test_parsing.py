"""Strict parsing of judge answers and the evidence check (no database)."""
import json

import pytest

from grading.judges.parsing import Outcome, evidence_apply, evidence_valid_quotes, output_parse

TONE = [{"label": "poor", "value": 0}, {"label": "ok", "value": 0.5}, {"label": "good", "value": 1},
        {"label": "n/a", "value": 0, "na": True}]


def binary(text):
    return output_parse(text=text, kind="binary", options=[])


def test_bare_json_is_accepted():
    out = binary('{"explanation": "Mentions an ECG.", "criteria_met": true, "evidence": ["An ECG"]}')
    assert (out.valid, out.verdict, out.explanation, out.evidence) == (True, "met", "Mentions an ECG.", ["An ECG"])


@pytest.mark.parametrize("text", [
    '```json\n{"explanation": "no", "criteria_met": false}\n```',
    '```\n{"explanation": "no", "criteria_met": false}\n```',
    'Here is my grade:\n```json\n{"explanation": "no", "criteria_met": false}\n```\nThanks.',
])
def test_fenced_json_is_accepted(text):
    out = binary(text)
    assert out.valid and out.verdict == "not_met"


@pytest.mark.parametrize("text, problem", [
    ("", "empty output"),
    ("I think the answer is fine.", "not one JSON object"),
    ('The grade is {"explanation": "x", "criteria_met": true} as shown', "not one JSON object"),
    ('[{"explanation": "x", "criteria_met": true}]', "not one JSON object"),
    ('{"explanation": "x"}', "criteria_met"),
    ('{"criteria_met": true}', "explanation"),
    ('{"explanation": "x", "criteria_met": "true"}', "criteria_met"),
    ('{"explanation": "x", "criteria_met": 1}', "criteria_met"),
    ('{"explanation": "x", "criteria_met": true, "evidence": "one quote"}', "evidence"),
    ('```json\n{"explanation": "a", "criteria_met": true}\n```\n```json\n{"explanation": "b", "criteria_met": false}\n```',
     "not one JSON object"),
])
def test_garbage_and_schema_violations_are_invalid(text, problem):
    out = binary(text)
    assert out.valid is False and out.verdict is None
    assert problem in out.problem


def test_option_answers_follow_the_label_and_its_value():
    out = output_parse(text=json.dumps({"explanation": "warm", "option": "good"}), kind="ordinal", options=TONE)
    assert (out.valid, out.option_label, out.value) == (True, "good", 1.0)
    relaxed = output_parse(text=json.dumps({"explanation": "warm", "option": " Good "}), kind="ordinal", options=TONE)
    assert relaxed.option_label == "good"
    unknown = output_parse(text=json.dumps({"explanation": "?", "option": "excellent"}), kind="ordinal", options=TONE)
    assert unknown.valid is False and "not among the options" in unknown.problem
    binary_answer = output_parse(text=json.dumps({"explanation": "?", "criteria_met": True}), kind="ordinal", options=TONE)
    assert binary_answer.valid is False


def test_quotes_are_checked_after_whitespace_normalization():
    response = "Call emergency services   now.\nAn ECG\tis needed."
    quotes = ["emergency services now.", "An ECG is\nneeded.", "an ecg is needed", "Take antibiotics", "   "]
    assert evidence_valid_quotes(quotes=quotes, response_text=response) == ["emergency services now.", "An ECG is\nneeded."]


def test_missing_evidence_caps_binary_at_not_met_and_flags():
    met = Outcome(valid=True, verdict="met", evidence=["not in the text"])
    capped = evidence_apply(outcome=met, response_text="Call 911.", min_quotes=1, kind="binary", options=[])
    assert (capped.verdict, capped.evidence_capped) == ("not_met", True)
    enough = evidence_apply(outcome=Outcome(valid=True, verdict="met", evidence=["Call 911."]), response_text="Call 911.",
                            min_quotes=1, kind="binary", options=[])
    assert (enough.verdict, enough.evidence_capped) == ("met", False)
    no_rule = evidence_apply(outcome=met, response_text="Call 911.", min_quotes=0, kind="binary", options=[])
    assert no_rule == met


def test_missing_evidence_caps_ordinal_just_below_the_top():
    top = Outcome(valid=True, option_label="good", value=1.0, evidence=[])
    capped = evidence_apply(outcome=top, response_text="text", min_quotes=2, kind="ordinal", options=TONE)
    assert (capped.option_label, capped.value, capped.evidence_capped) == ("ok", 0.5, True)
    middle = Outcome(valid=True, option_label="ok", value=0.5, evidence=[])
    kept = evidence_apply(outcome=middle, response_text="text", min_quotes=2, kind="ordinal", options=TONE)
    assert (kept.option_label, kept.evidence_capped) == ("ok", False) and kept == middle


def test_an_answer_the_cap_does_not_change_is_not_flagged():
    # issue 25: 819 answers of one judge were flagged evidence_capped although they were not met already
    not_met = Outcome(valid=True, verdict="not_met", evidence=[])
    kept = evidence_apply(outcome=not_met, response_text="Call 911.", min_quotes=1, kind="binary", options=[])
    assert (kept.verdict, kept.evidence_capped) == ("not_met", False) and kept == not_met
    nominal = Outcome(valid=True, option_label="good", value=1.0, evidence=[])
    assert evidence_apply(outcome=nominal, response_text="text", min_quotes=2, kind="nominal", options=TONE) == nominal


def test_invalid_outputs_are_not_touched_by_the_evidence_rule():
    bad = Outcome(valid=False, problem="empty output")
    assert evidence_apply(outcome=bad, response_text="x", min_quotes=3, kind="binary", options=[]) == bad
