"""Decision buttons post "verdict:…", "option:…" or (adjudication only) "value:…"; one parser
(annotation.vocabulary.choice_parse) turns them into a decision for the checker review and the
adjudication forms alike."""
import pytest

from annotation.vocabulary import DecisionError, choice_parse


def test_choices_parse_into_decisions():
    assert choice_parse("") == {}
    assert choice_parse("verdict:not_met") == {"verdict": "not_met"}
    assert choice_parse("option:a:b") == {"option_label": "a:b"}
    assert choice_parse("value:7.5", values=True) == {"value": 7.5}


@pytest.mark.parametrize("raw, values", [("verdict:maybe", False), ("option:", False), ("value:7.5", False),
                                         ("value:x", True), ("met", False)])
def test_anything_else_is_refused_naming_the_choice(raw, values):
    with pytest.raises(DecisionError, match="choose one of the offered decisions") as exc:
        choice_parse(raw, values=values)
    assert exc.value.field == "choice"
