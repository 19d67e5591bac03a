"""Tests for the synthetic RULERS study generator (demo.rulers): same bytes for the same
arguments, a compiled rubric the bundle format accepts, verbatim expert quotes, and a judge whose
paraphrased quotes are the invalid citations calibration counts."""
import hashlib

from demo.bundle_io import JSONL_FILES, iter_jsonl, read_project, validate_bundle
from demo.rulers import ITEMS, generate_rulers


def _digests(path):
    return {name: hashlib.sha256((path / name).read_bytes()).hexdigest() for name in ("project.json", *JSONL_FILES)}


def test_same_arguments_same_bytes(tmp_path):
    generate_rulers(tmp_path / "one", n_cases=4)
    generate_rulers(tmp_path / "two", n_cases=4)
    generate_rulers(tmp_path / "other", n_cases=4, seed=6)
    assert _digests(tmp_path / "one") == _digests(tmp_path / "two")
    assert _digests(tmp_path / "one")["responses.jsonl"] != _digests(tmp_path / "other")["responses.jsonl"]


def test_compiled_rubric_labels_and_judge(tmp_path):
    counts = generate_rulers(tmp_path / "b")
    # the judge quotes paraphrases on purpose (invalid citations): the quotes are checked below
    kinds = ("cases", "criteria", "responses", "labels", "judgments")
    assert validate_bundle(tmp_path / "b", check_evidence=False) == {k: counts[k] for k in kinds}
    project = read_project(tmp_path / "b")
    traits = {c["criterion_id"] for c in project["rubric"] if "checklist_of" not in c}
    items = [c for c in project["rubric"] if "checklist_of" in c]
    assert traits == {"safety", "clarity", "empathy"} and len(items) == len(ITEMS) == 9
    assert all(c["checklist_of"] in traits and [o["value"] for o in c["options"]] == [0, 1, 2] for c in items)
    assert project["judges"][0]["settings"] == {"compiled": True} and project["judges"][0]["samples"] == 3
    texts = {r["response_id"]: r["text"] for r in iter_jsonl(tmp_path / "b" / "responses.jsonl")}
    quoted = [q for row in iter_jsonl(tmp_path / "b" / "labels.jsonl") for q in row.get("evidence", [])]
    assert quoted and all(any(q in t for t in texts.values()) for q in quoted)
    judged = [(row["response_id"], q) for row in iter_jsonl(tmp_path / "b" / "judgments.jsonl") for q in row["evidence"]]
    invalid = [q for r, q in judged if q not in texts[r]]
    assert 0.1 * len(judged) < len(invalid) < 0.4 * len(judged)
