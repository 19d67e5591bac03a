"""Tests for demo.bundle_io: canonical line format, zip determinism and validation."""

import json
import zipfile

import pytest

from demo.bundle_io import BundleError, encode_line, validate_bundle, write_bundle, zip_bundle


def _tiny_bundle(out_dir, *, label_overrides=None, evidence=("Rest and fluids.",)):
    project = {
        "slug": "tiny", "name": "Tiny", "description": "", "blind": True, "coverage_k": 1,
        "rubric": [{"criterion_id": "shared", "text": "Is polite", "kind": "binary", "weight": 1.0,
                    "options": [], "tags": [], "min_evidence": 0}],
        "cohorts": [{"name": "group-1"}],
        "judges": [{"name": "j", "backend": "replay", "model": "m", "condition": "anonymized",
                    "temperature": 0.0, "samples": 1}],
    }
    cases = [
        {"case_id": "a", "prompt": "Fièvre?"},
        {"case_id": "b", "messages": [{"role": "user", "content": "Hi"}],
         "criteria": [{"criterion_id": "b-1", "text": "Advises rest", "kind": "binary", "weight": 2.0,
                       "options": [], "tags": [], "min_evidence": 1}]},
    ]
    responses = [
        {"response_id": "a-1", "case_id": "a", "model": "m1", "text": "Bonjour.", "author_kind": "model"},
        {"response_id": "b-1", "case_id": "b", "model": "doc", "text": "Rest  and\nfluids. Call us.",
         "author_kind": "human"},
    ]
    label = {"response_id": "b-1", "criterion_id": "b-1", "cohort": "group-1", "annotator": "u1",
             "role": "annotator", "verdict": "met", "evidence": list(evidence)}
    label.update(label_overrides or {})
    labels = [
        {"response_id": "a-1", "criterion_id": "shared", "cohort": "group-1", "annotator": "u1",
         "role": "annotator", "verdict": "not_met"},
        label,
    ]
    judgments = [{"response_id": "a-1", "criterion_id": "shared", "judge": "j", "judge_model": "m",
                  "condition": "anonymized", "sample": 0, "verdict": None, "explanation": "", "evidence": [],
                  "raw": "garbage"}]
    return write_bundle(out_dir, project=project, cases=cases, responses=responses, labels=labels,
                        judgments=judgments)


def test_write_bundle_counts_and_canonical_lines(tmp_path):
    counts = _tiny_bundle(tmp_path / "b")
    assert counts == {"cases": 2, "criteria": 2, "responses": 2, "labels": 2, "judgments": 1}
    first = (tmp_path / "b" / "cases.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert first == json.dumps({"case_id": "a", "prompt": "Fièvre?"}, ensure_ascii=False, sort_keys=True)
    assert "Fièvre" in first  # not \u-escaped
    assert encode_line({"b": 1, "a": [None]}) == '{"a": [null], "b": 1}'


def test_validate_accepts_whitespace_normalized_evidence(tmp_path):
    _tiny_bundle(tmp_path / "b")
    assert validate_bundle(tmp_path / "b")["labels"] == 2


@pytest.mark.parametrize(
    ("overrides", "evidence", "message"),
    [
        ({"criterion_id": "shared"}, (), "does not belong"),
        ({"cohort": "group-9"}, (), "not declared"),
        ({"verdict": "yes"}, (), "bad verdict"),
        ({"role": "boss"}, (), "role"),
        ({}, ("Drink coffee.",), "not in the response text"),
    ],
)
def test_validate_rejects_broken_references(tmp_path, overrides, evidence, message):
    _tiny_bundle(tmp_path / "b", label_overrides=overrides, evidence=evidence)
    with pytest.raises(BundleError, match=message):
        validate_bundle(tmp_path / "b")


def test_zip_is_deterministic_and_flat(tmp_path):
    _tiny_bundle(tmp_path / "b")
    first = zip_bundle(tmp_path / "b", tmp_path / "one.zip").read_bytes()
    second = zip_bundle(tmp_path / "b", tmp_path / "two.zip").read_bytes()
    assert first == second
    with zipfile.ZipFile(tmp_path / "one.zip") as archive:
        assert archive.namelist() == sorted(
            ["cases.jsonl", "judgments.jsonl", "labels.jsonl", "project.json", "responses.jsonl"]
        )
