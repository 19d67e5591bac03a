"""Tests for the CHARM-100 converter (demo.charm100) and its vendored data."""

import collections
import hashlib
import json

from demo.bundle_io import iter_jsonl, read_project, validate_bundle
from demo.charm100 import VENDORED_SOURCE, convert_charm100

NOTICE_SHA256 = "b0ac1a0b9d5eca2c2d4a9c5d56f11759e8c29cf88d75b524f5f2ba300b08db3c"


def test_vendored_file_matches_notice_and_licence():
    assert hashlib.sha256(VENDORED_SOURCE.read_bytes()).hexdigest() == NOTICE_SHA256
    assert NOTICE_SHA256 in (VENDORED_SOURCE.parent / "NOTICE.md").read_text(encoding="utf-8")
    licence = (VENDORED_SOURCE.parent / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "Copyright (c) 2025 Delip Rao" in licence


def test_counts_and_references(tmp_path):
    counts = convert_charm100(tmp_path / "c")
    assert counts == {"cases": 100, "criteria": 6, "responses": 100, "labels": 600, "judgments": 0}
    assert validate_bundle(tmp_path / "c") == counts


def test_rubric_and_labels(tmp_path):
    convert_charm100(tmp_path / "c")
    project = read_project(tmp_path / "c")
    kinds = {c["criterion_id"]: c["kind"] for c in project["rubric"]}
    assert kinds == {"satisfaction": "ordinal", "helpfulness": "ordinal", "naturalness": "ordinal",
                     "response_length": "nominal", "factual_accuracy": "binary", "specificity": "ordinal"}
    assert sum(c["weight"] for c in project["rubric"]) == 43
    na = [o["label"] for c in project["rubric"] for o in c["options"] if o["na"]]
    assert na == ["N/A - question doesn't require recommendations"]
    labels = list(iter_jsonl(tmp_path / "c" / "labels.jsonl"))
    binary = collections.Counter(row["verdict"] for row in labels if row["criterion_id"] == "factual_accuracy")
    assert binary == {"met": 72, "not_met": 28}
    assert all("option" in row for row in labels if row["criterion_id"] != "factual_accuracy")
    assert sum(1 for row in labels if row.get("option", "").startswith("N/A")) == 9


def test_cases_hold_system_and_user_turns(tmp_path):
    convert_charm100(tmp_path / "c")
    source = json.loads(VENDORED_SOURCE.read_text(encoding="utf-8"))
    first_turns = json.loads(source["items"][0]["submission"])
    case = next(iter_jsonl(tmp_path / "c" / "cases.jsonl"))
    assert [m["role"] for m in case["messages"]] == ["system", "user"]
    assert case["messages"][1]["content"] == first_turns[1]["content"]
    response = next(iter_jsonl(tmp_path / "c" / "responses.jsonl"))
    assert response["text"] == first_turns[2]["content"] and response["author_kind"] == "model"


def test_null_ground_truth_is_skipped(tmp_path):
    source = json.loads(VENDORED_SOURCE.read_text(encoding="utf-8"))
    source["items"][0]["ground_truth"][5] = None
    source["items"][1]["ground_truth"][4] = "N/A"
    (tmp_path / "src.json").write_text(json.dumps(source), encoding="utf-8")
    counts = convert_charm100(tmp_path / "c", source=tmp_path / "src.json")
    assert counts["labels"] == 599
    verdicts = [row["verdict"] for row in iter_jsonl(tmp_path / "c" / "labels.jsonl") if "verdict" in row]
    assert verdicts.count("cannot_assess") == 1
