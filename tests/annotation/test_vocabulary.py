"""The decision vocabulary: a decision shown as every page shows it, and a decision encoded as one
button or form value and read back (``choice_encode`` / ``choice_parse``). No database."""
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.vocabulary import (
    PROVENANCE_WORDS,
    PROVENANCES,
    VERDICT_CHOICES,
    VERDICTS,
    DecisionError,
    choice_encode,
    choice_parse,
    decision_text,
    verdict_caption,
)

verdicts = st.sampled_from(VERDICTS)
options = st.text(min_size=1).filter(lambda s: "\x00" not in s)
values = st.floats(allow_nan=False)  # ±inf and -0.0 included: repr reads back as the same float


@given(verdict=verdicts)
def test_a_verdict_reads_back(verdict):
    assert choice_parse(choice_encode(verdict=verdict)) == {"verdict": verdict}


@given(option=options)
def test_an_option_reads_back_whatever_its_label(option):
    # A label may hold ":" (only the first one separates the kind) or look like a verdict.
    assert choice_parse(choice_encode(option=option)) == {"option_label": option}


@given(value=values)
def test_a_value_reads_back_as_the_same_float(value):
    parsed = choice_parse(choice_encode(value=value), values=True)["value"]
    assert parsed == value and math.copysign(1, parsed) == math.copysign(1, value)


@given(option=options, value=values)
def test_an_option_wins_over_its_value(option, value):
    # An option decision carries its option's value; encoding and display name the option.
    assert choice_parse(choice_encode(option=option, value=value)) == {"option_label": option}
    assert decision_text(option=option, value=value) == option


@pytest.mark.parametrize("empty", [None, "", math.nan])
def test_no_decision_encodes_to_nothing_and_reads_back_as_nothing(empty):
    assert choice_encode(verdict=empty, option=empty, value=None if empty == "" else empty) == ""
    assert choice_parse("") == {}


def test_a_value_choice_is_refused_where_values_are_not_offered():
    with pytest.raises(DecisionError) as exc:
        choice_parse(choice_encode(value=7.5))
    assert exc.value.field == "choice"


@pytest.mark.parametrize("kwargs, shown", [
    ({"verdict": "met"}, "met"),
    ({"verdict": "not_met"}, "not met"),
    ({"verdict": "cannot_assess"}, "cannot assess"),
    ({"option": "good", "value": 1.0}, "good"),
    ({"value": 7.5}, "value 7.5"),
    ({"value": 2.0}, "value 2"),
    ({"value": math.nan, "option": math.nan, "verdict": None}, ""),  # pandas' missing values
    ({"unresolved": True}, "unresolved"),
    ({"invalid": 2}, "invalid"),
    ({"verdict": "not_met", "invalid": 1}, "not met"),  # invalid outputs behind a decision: the decision
    ({}, ""),
    ({"none": "undecided"}, "undecided"),
])
def test_how_a_decision_is_shown(kwargs, shown):
    assert decision_text(**kwargs) == shown


def test_words_and_captions():
    assert VERDICT_CHOICES == [("met", "met"), ("not_met", "not met"), ("cannot_assess", "cannot assess")]
    assert [verdict_caption(v) for v in VERDICTS] == ["Met", "Not met", "Cannot assess"]
    # The stored provenance names are the export's (SPEC §4 gold.jsonl), in the manifest's order.
    assert PROVENANCES == ("agreed", "adjudicated", "single-cohort", "unresolved")
    assert set(PROVENANCE_WORDS) == set(PROVENANCES)


def test_the_models_use_the_vocabulary():
    from annotation.models import Label
    from grading.models import Adjudication

    assert Label._meta.get_field("verdict").choices == VERDICT_CHOICES
    assert Adjudication._meta.get_field("verdict").choices == VERDICT_CHOICES
    # gold's provenance is derived (metrics.decisions.gold_decide), never stored with an adjudication
    assert "provenance" not in {f.name for f in Adjudication._meta.get_fields()}
