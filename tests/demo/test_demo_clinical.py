"""Tests for the synthetic clinical study generator (demo.clinical) and the bench CLI."""

import collections
import hashlib
import json

import pytest

from bench.generate_bundle import generate_bench_bundle
from bench.generate_bundle import main as bench_main
from demo.bundle_io import JSONL_FILES, iter_jsonl, read_project, validate_bundle
from demo.clinical import DEFAULT_JUDGES, DEFAULT_MODELS, generate_clinical

FILES = ("project.json", *JSONL_FILES)


def _digests(path):
    return {name: hashlib.sha256((path / name).read_bytes()).hexdigest() for name in FILES}


@pytest.fixture(scope="module")
def default_bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("clinical") / "bundle"
    summary = generate_clinical(out)
    return out, summary


def test_same_seed_gives_identical_bytes(tmp_path):
    generate_clinical(tmp_path / "one", n_cases=12, seed=3)
    generate_clinical(tmp_path / "two", n_cases=12, seed=3)
    generate_clinical(tmp_path / "other", n_cases=12, seed=4)
    assert _digests(tmp_path / "one") == _digests(tmp_path / "two")
    assert _digests(tmp_path / "one")["responses.jsonl"] != _digests(tmp_path / "other")["responses.jsonl"]


def test_default_counts(default_bundle):
    out, summary = default_bundle
    n_responses = 40 * len(DEFAULT_MODELS) + 8
    assert summary["cases"] == 40
    assert summary["criteria"] == 40 * 30
    assert summary["responses"] == n_responses
    assert summary["judgments"] == n_responses * 30 * sum(j.samples for j in DEFAULT_JUDGES)
    # overlap 3 in each of 2 cohorts, plus checkers on some responses
    annotator_labels = n_responses * 30 * 3 * 2
    assert annotator_labels < summary["labels"] < annotator_labels + n_responses * 30 * 2
    assert validate_bundle(out) == {k: summary[k] for k in ("cases", "criteria", "responses", "labels", "judgments")}


def test_labels_follow_overlap_and_checker_rules(default_bundle):
    out, _ = default_bundle
    per_item = collections.Counter()
    checker_per_response = collections.Counter()
    members = collections.defaultdict(set)
    for label in iter_jsonl(out / "labels.jsonl"):
        members[label["cohort"]].add((label["annotator"], label["role"]))
        if label["role"] == "annotator":
            per_item[(label["response_id"], label["criterion_id"], label["cohort"])] += 1
        else:
            checker_per_response[(label["response_id"], label["cohort"])] += 1
    assert set(per_item.values()) == {3}
    assert set(checker_per_response.values()) == {30}
    assert members["group-1"] == {(f"g1-ann{i}", "annotator") for i in range(1, 5)} | {("g1-check", "checker")}
    assert members["group-2"] == {(f"g2-ann{i}", "annotator") for i in range(1, 4)} | {("g2-check", "checker")}


def test_evidence_quotes_are_verbatim_substrings(default_bundle):
    out, _ = default_bundle
    texts = {r["response_id"]: r["text"] for r in iter_jsonl(out / "responses.jsonl")}
    quoted = 0
    for name in ("labels.jsonl", "judgments.jsonl"):
        for row in iter_jsonl(out / name):
            for quote in row.get("evidence") or ():
                assert quote in texts[row["response_id"]]
                quoted += 1
    assert quoted > 100


def test_cases_responses_and_judge_look_like_the_spec(default_bundle):
    out, summary = default_bundle
    project = read_project(out)
    assert project["blind"] is True and project["rubric"] == []
    assert project["judges"][0]["backend"] == "replay"
    assert project["coverage_k"] == summary["coverage_k"]
    cases = list(iter_jsonl(out / "cases.jsonl"))
    assert any("messages" in c for c in cases) and any("prompt" in c for c in cases)
    assert any("reference_answer" in c for c in cases)
    for case in cases:
        meta = case["metadata"]
        assert 1 <= len(meta["task_themes"]) <= 3 and 1 <= len(meta["specialties"]) <= 2
        assert meta["difficulty"] in {"low", "medium", "high"} and meta["register"] in {"lay", "professional"}
        weights = [c["weight"] for c in case["criteria"]]
        assert len(weights) == 30 and min(weights) < 0 and max(weights) > 0
        assert all(-3 <= w <= 3 and w != 0 for w in weights)
    responses = list(iter_jsonl(out / "responses.jsonl"))
    humans = [r for r in responses if r["author_kind"] == "human"]
    assert len(humans) == 8 and {r["model"] for r in humans} == {"physician"}
    assert all(r["model"] not in r["response_id"] for r in responses)  # blind ids
    assert all(r["text"].startswith("#") and "**" in r["text"] for r in responses)
    judgments = list(iter_jsonl(out / "judgments.jsonl"))
    invalid = [j for j in judgments if j["verdict"] is None]
    assert 0 < len(invalid) < 0.03 * len(judgments)
    assert all(j["raw"] for j in judgments if j["verdict"] is not None)


def test_guidelines_guidance_and_example_tags(default_bundle):
    out, _ = default_bundle
    project = read_project(out)
    assert project["guidelines"].startswith("# Labelling guide") and "Penalty items" in project["guidelines"]
    criteria = [c for case in iter_jsonl(out / "cases.jsonl") for c in case["criteria"]]
    guided = [c for c in criteria if c.get("guidance")]
    # every penalty and every item that needs a quote says how to apply it; plain items have none
    assert all(c.get("guidance") for c in criteria if c["weight"] < 0 or c["min_evidence"])
    assert 0.2 * len(criteria) < len(guided) < len(criteria)
    assert all("Evidence required" in c["guidance"] for c in criteria if c["min_evidence"])
    case = next(iter_jsonl(out / "cases.jsonl"))
    assert case["metadata"]["example_tags"] == [f"theme:{t.replace(' ', '_')}" for t in case["metadata"]["task_themes"]]


def test_judges_of_both_conditions_and_samples(default_bundle):
    out, _ = default_bundle
    judges = {j["name"]: j for j in read_project(out)["judges"]}
    by_model = collections.defaultdict(set)
    for j in judges.values():
        by_model[j["model"]].add(j["condition"])
    assert all(conditions == {"attributed", "anonymized"} for conditions in by_model.values()) and len(by_model) == 3
    samples = collections.defaultdict(set)
    own, other = collections.Counter(), collections.Counter()
    models = {r["response_id"]: r["model"] for r in iter_jsonl(out / "responses.jsonl")}
    for row in iter_jsonl(out / "judgments.jsonl"):
        samples[row["judge"]].add(row["sample"])
        if row["judge"] == "gpt-4o-judge-attributed":
            (own if models[row["response_id"]] == "gpt-4o" else other)[row["verdict"]] += 1
    assert samples["claude-judge"] == {0, 1, 2} and judges["claude-judge"]["samples"] == 3
    assert all(samples[name] == {0} for name in judges if name != "claude-judge")
    # the attributed gpt-4o judge leans towards gpt-4o's answers (gpt-4o is a strong model too: compare loosely)
    assert own["met"] / sum(own.values()) > other["met"] / sum(other.values())


def test_low_agreement_cases_disagree_more(default_bundle):
    out, summary = default_bundle
    low = set(summary["low_agreement_cases"])
    assert len(low) == 6
    votes = collections.defaultdict(list)
    for label in iter_jsonl(out / "labels.jsonl"):
        if label["role"] == "annotator" and label["cohort"] == "group-1":
            votes[(label["response_id"], label["criterion_id"])].append(label["verdict"])
    disagree = {True: [], False: []}
    for (response_id, _), verdicts in votes.items():
        disagree[response_id.rsplit("-r", 1)[0] in low].append(len(set(verdicts)) > 1)
    rate = {k: sum(v) / len(v) for k, v in disagree.items()}
    assert rate[True] > 2 * rate[False]


def test_bench_parameters_give_exact_counts(tmp_path):
    counts = generate_bench_bundle(tmp_path / "bench")
    assert counts["responses"] == 2750
    assert counts["labels"] == 165000
    assert counts["judgments"] == 82500
    per_cohort = collections.Counter(row["cohort"] for row in iter_jsonl(tmp_path / "bench" / "labels.jsonl"))
    assert per_cohort == {"group-1": 82500, "group-2": 82500}
    assert validate_bundle(tmp_path / "bench", check_evidence=False)["labels"] == 165000


def test_bench_cli_prints_one_json_line(tmp_path, capsys):
    assert bench_main(["--out", str(tmp_path / "b"), "--cases", "3", "--models", "2", "--zip"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert (result["cases"], result["responses"], result["judgments"]) == (3, 6, 180)
    assert (tmp_path / "b.zip").exists()


def test_rejects_impossible_arguments(tmp_path):
    with pytest.raises(ValueError, match="overlap"):
        generate_clinical(tmp_path / "x", n_cases=2, overlap=4)
    with pytest.raises(ValueError, match="n_criteria"):
        generate_clinical(tmp_path / "x", n_cases=2, n_criteria=80)


def test_bytes_do_not_depend_on_the_process_hash_seed(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-m", "demo.clinical", "--out", str(tmp_path / hash_seed), "--cases", "6"],
                       cwd=root, env=env, check=True, capture_output=True)
    assert _digests(tmp_path / "1") == _digests(tmp_path / "2")
