"""The sentence bank (issue 12, point 3; RULERS): pinned cuts of hand-made texts, and on every
response of the CHARM100 data the invariants the keyboard quoting relies on: ids run 1..n, each
sentence is its span of the raw text, spans do not overlap, and every range quote is valid
evidence for that response."""
import json

import pytest

from annotation.markdown import quote_in_response
from annotation.sentences import sentence_bank, sentences_quote
from demo.charm100 import VENDORED_SOURCE as CHARM100


def _texts(text):
    return [s.text for s in sentence_bank(text)]


def test_sentences_end_at_stops_but_not_after_abbreviations_or_before_lower_case():
    text = "Take 400 mg. Repeat every 6 hours, e.g. after meals. See Dr. Smith if needed! Vitamin D. Is 2.5 mg/kg right?"
    assert _texts(text) == ["Take 400 mg.", "Repeat every 6 hours, e.g. after meals.", "See Dr. Smith if needed!",
                            "Vitamin D.", "Is 2.5 mg/kg right?"]
    assert _texts('He said "stop." Then he left.') == ['He said "stop."', "Then he left."]
    assert _texts("Wait… Then go.") == ["Wait…", "Then go."]


def test_markdown_blocks_are_cut_and_their_markers_dropped():
    text = ("# Plan\nIt was wrapped\nacross lines. Next one.\n\n- **Rest** for a day\n- Drink water\n"
            "1. First item\n2) Second item\n> Quoted. Yes.\n\n| a | b |\n|---|---|\n| c | d |\n```\ncode line.\n```\n")
    assert _texts(text) == ["Plan", "It was wrapped\nacross lines.", "Next one.", "**Rest** for a day", "Drink water",
                            "First item", "Second item", "Quoted.", "Yes.", "a | b |", "c | d |", "code line."]
    assert _texts("Numbers 1. Then words.") == ["Numbers 1.", "Then words."]
    assert _texts("1. Bare number first") == ["Bare number first"]


def test_empty_and_punctuation_only_texts_have_no_sentences():
    assert sentence_bank("") == [] and sentence_bank(None) == []
    assert sentence_bank("\n\n---\n|---|\n...") == []


def test_a_range_quote_is_the_raw_text_from_the_first_sentence_to_the_last():
    text = "Call now. An ECG is needed.\n\n- Rest **afterwards**.\n- Drink."
    assert sentences_quote(text, 2, 3) == "An ECG is needed.\n\n- Rest **afterwards**."
    assert sentences_quote(text, 4, 4) == "Drink."
    with pytest.raises(ValueError, match="sentences 4-5 are not in the response's 4 sentences"):
        sentences_quote(text, 4, 5)
    with pytest.raises(ValueError):
        sentences_quote(text, 3, 2)


def _charm_texts():
    data = json.loads(CHARM100.read_text(encoding="utf-8"))
    texts = []
    for item in data["items"]:
        submission = item["submission"]
        messages = json.loads(submission) if submission.lstrip().startswith("[") else [{"content": submission}]
        texts.extend(m["content"] for m in messages if isinstance(m.get("content"), str) and m["content"].strip())
    return texts


def test_invariants_on_every_charm100_message():
    texts = _charm_texts()
    assert len(texts) > 100
    for text in texts:
        bank = sentence_bank(text)
        assert [s.id for s in bank] == list(range(1, len(bank) + 1))
        end = 0
        for s in bank:
            assert s.text == text[s.start:s.end] and s.text == s.text.strip() and s.start >= end
            end = s.end
        for first in range(1, len(bank) + 1, 3):
            last = min(len(bank), first + 2)
            assert quote_in_response(quote=sentences_quote(text, first, last), text=text)
