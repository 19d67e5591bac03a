"""Text normalization and source-order pairing of two cohorts' rows."""

import pandas as pd

from grading.metrics import align_rows, normalize_text


def test_normalize_text():
    assert normalize_text("  Chest\tPAIN?\n  (acute) ") == "chest pain acute"
    assert normalize_text("Patient’s BP: 140/90 mmHg.") == "patients bp 14090 mmhg"
    assert normalize_text("Straße") == normalize_text("STRASSE")
    assert normalize_text("ﬁne\u00a0print") == "fine print"


def test_align_pairs_duplicates_in_source_order_and_counts_the_rest():
    left = pd.DataFrame(
        {
            "model": ["m1", "m1", "m1", "m2", "m1"],
            "case_text": ["Chest pain.", "chest  pain", "Fever", "Fever", "Cough"],
            "criterion_text": ["Asks onset", "asks onset!", "Gives dose", "Gives dose", "Asks age"],
        }
    )
    right = pd.DataFrame(
        {
            "model": ["m2", "m1", "m1", "m1", "m1"],
            "case_text": ["fever", "CHEST PAIN", "Chest pain", "chest pain", "fever"],
            "criterion_text": ["gives dose", "Asks onset", "asks onset", "asks onset", "Gives dose."],
        }
    )
    result = align_rows(left, right)
    # left rows 0 and 1 share keys → right rows 1 and 2 (first with first); right 3 is extra
    assert result.pairs.values.tolist() == [[0, 1], [1, 2], [2, 4], [3, 0]]
    assert result.matched == 4
    assert (result.left_total, result.right_total) == (5, 5)
    assert (result.left_unmatched, result.right_unmatched) == (1, 1)


def test_model_must_match_exactly():
    left = pd.DataFrame({"model": ["gpt"], "case_text": ["x"], "criterion_text": ["y"]})
    right = pd.DataFrame({"model": ["claude"], "case_text": ["x"], "criterion_text": ["y"]})
    result = align_rows(left, right)
    assert result.matched == 0
    assert result.left_unmatched == 1 and result.right_unmatched == 1
