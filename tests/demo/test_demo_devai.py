"""Tests for the DevAI converter (demo.devai) and its vendored data."""

import collections
import hashlib
import json
import shutil

from demo.bundle_io import iter_jsonl, read_project, validate_bundle
from demo.devai import AGENTS, VENDORED_SOURCE, convert_devai


def _source_entries(kind):
    """(agent, satisfied) for every requirement entry in the vendored judgment files."""
    sub = "human_as_a_judge" if kind == "human" else "agent_as_a_judge/gray_box"
    rows = []
    for agent in AGENTS:
        for path in sorted((VENDORED_SOURCE / "benchmark" / "judgment" / agent / sub).glob("*.json")):
            rows += [(agent, r.get("satisfied")) for r in json.loads(path.read_text())["requirements"]]
    return rows


def test_vendored_files_match_sha256sums():
    lines = (VENDORED_SOURCE / "SHA256SUMS").read_text().splitlines()
    assert len(lines) == 387
    for line in lines:
        digest, name = line.split(maxsplit=1)
        assert hashlib.sha256((VENDORED_SOURCE / name).read_bytes()).hexdigest() == digest, name


def test_counts_match_the_source(tmp_path):
    counts = convert_devai(tmp_path / "d")
    human, gray = _source_entries("human"), _source_entries("gray")
    assert (counts["cases"], counts["responses"]) == (55, 165)
    assert counts["labels"] == len(human) == 1098
    assert counts["judgments"] == len(gray)
    assert counts["criteria"] == 366
    assert validate_bundle(tmp_path / "d") == counts


def test_verdicts_match_the_source(tmp_path):
    convert_devai(tmp_path / "d")
    models = {r["response_id"]: r["model"] for r in iter_jsonl(tmp_path / "d" / "responses.jsonl")}
    for file_name, kind in (("labels.jsonl", "human"), ("judgments.jsonl", "gray")):
        got = collections.Counter((models[r["response_id"]], r["verdict"]) for r in iter_jsonl(tmp_path / "d" / file_name))
        expected = collections.Counter((a, {True: "met", False: "not_met"}[s]) for a, s in _source_entries(kind))
        assert got == expected


def test_cases_and_criteria(tmp_path):
    convert_devai(tmp_path / "d")
    project = read_project(tmp_path / "d")
    assert project["slug"] == "devai" and project["judges"][0]["backend"] == "replay"
    cases = {c["case_id"]: c for c in iter_jsonl(tmp_path / "d" / "cases.jsonl")}
    first = cases["devai-01"]
    assert first["prompt"].startswith("Hey! Could you help me set up a system to classify images")
    assert first["metadata"]["task_themes"] == ["Classification", "Computer Vision", "Supervised Learning"]
    assert first["metadata"]["category"] == "deep learning"
    r1 = first["criteria"][1]
    assert r1["criterion_id"] == "devai-01-R1" and "requires:devai-01-R0" in r1["tags"]
    assert len(cases["devai-52"]["criteria"]) == 5  # the judged version of task 52
    tags = {c["tags"][0] for case in cases.values() for c in case["criteria"]}
    assert "Performence Metrics" not in tags and None not in tags


def test_missing_agent_verdict_becomes_invalid_judgment(tmp_path):
    source = tmp_path / "src"
    shutil.copytree(VENDORED_SOURCE, source)
    path = source / "benchmark/judgment/OpenHands/agent_as_a_judge/gray_box/01_Image_Classification_ResNet18_Fashion_MNIST_DL.json"
    data = json.loads(path.read_text())
    del data["requirements"][0]["satisfied"]
    path.write_text(json.dumps(data))
    convert_devai(tmp_path / "d", source=source)
    invalid = [j for j in iter_jsonl(tmp_path / "d" / "judgments.jsonl") if j["verdict"] is None]
    assert [(j["response_id"], j["criterion_id"]) for j in invalid] == [("devai-01-openhands", "devai-01-R0")]
    assert invalid[0]["raw"] == '{"requirement_id": 0}'
