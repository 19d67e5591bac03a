"""The full-scale bench study (issue 26) at a tiny scale: the generator gives the promised shape,
and ``bench.full`` measures a child process and flags a figure over its target. No durations
are asserted."""
import collections
import sys

import pytest

from bench.full import Figures, calibration_seconds, measured
from bench.generate_bundle import FULL_CASES, full_cases, generate_full_bundle
from demo.bundle_io import iter_jsonl, read_project, validate_bundle

SCALE = 0.002  # 5 of the 2,500 cases


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("full") / "bundle"
    return out, generate_full_bundle(out, scale=SCALE, seed=1)


def test_scale_is_a_fraction_of_the_cases():
    assert full_cases(1.0) == FULL_CASES and full_cases(0.1) == 250 and full_cases(1e-9) == 1
    for bad in (0, -0.1, 1.5):
        with pytest.raises(ValueError):
            full_cases(bad)


def test_tiny_full_bundle_has_the_promised_shape(tiny):
    out, counts = tiny
    validate_bundle(out)
    project = read_project(out)
    pairs = 5 * 11 * 30
    assert (counts["cases"], counts["responses"], counts["criteria"]) == (5, 55, 150)
    assert project["overlap"] == 2 and [c["name"] for c in project["cohorts"]] == ["group-1", "group-2"]
    assert sorted(j["samples"] for j in project["judges"]) == [1, 1, 3]
    assert counts["judgments"] == pairs * 5  # three judges, one with three samples

    labels = list(iter_jsonl(out / "labels.jsonl"))
    per_item = collections.Counter((r["response_id"], r["criterion_id"], r["cohort"], r["role"]) for r in labels)
    assert {n for (_, _, _, role), n in per_item.items() if role == "annotator"} == {2}  # overlap 2
    checked = {(r["response_id"], r["cohort"]) for r in labels if r["role"] == "checker"}
    assert 0 < len(checked) < 0.3 * 2 * 55  # a checker on about 10% of the responses
    assert counts["labels"] == pairs * 4 + len(checked) * 30

    for case in iter_jsonl(out / "cases.jsonl"):  # strata on every case
        meta = case["metadata"]
        assert meta["difficulty"] in ("low", "medium", "high") and meta["register"] in ("lay", "professional")
        assert meta["task_themes"] and meta["specialties"]

    adjudicated = list(iter_jsonl(out / "adjudications.jsonl"))
    assert counts["adjudications"] == len(adjudicated) > 0
    keys = [(a["response_id"], a["criterion_id"]) for a in adjudicated]
    assert len(set(keys)) == len(keys)
    by_item = collections.defaultdict(set)
    for r in labels:
        by_item[r["response_id"], r["criterion_id"]].add(r["verdict"])
    assert all(len(by_item[key]) > 1 for key in keys)  # a disputed item always has labels that differ


def test_same_seed_same_bytes(tiny, tmp_path):
    out, _ = tiny
    generate_full_bundle(tmp_path / "again", scale=SCALE, seed=1)
    for name in ("labels.jsonl", "judgments.jsonl", "adjudications.jsonl", "project.json"):
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes()


def test_measured_child_gives_exit_code_output_and_peak_rss():
    """bench.full's measurement of a child process (the end-to-end run takes minutes: not a unit test)."""
    run = measured([sys.executable, "-c", "import sys; b = bytearray(64 * 2**20); print('ok'); sys.exit(3)"], env=None)
    assert (run.returncode, run.stdout.strip()) == (3, "ok")
    assert run.peak_rss_mb >= 64 and run.cpu_seconds > 0


def test_figures_say_which_miss_their_target(capsys):
    figures = Figures()
    figures.add("fast", 0.5, "s", target=1.0)
    figures.add("slow", 2.0, "s", target=1.0)
    figures.add("not applicable", "n/a", "s", target=1.0)
    assert [m["name"] for m in figures.misses()] == ["slow"]
    printed = capsys.readouterr().out.splitlines()
    assert "MISS" in printed[1] and "MISS" not in printed[0] + printed[2]
    assert all("load " in line for line in printed)


def test_calibration_is_the_loop_time_on_the_clock_it_is_given():
    """The machine's speed printed with the figures: the loop's time, read on the clock at its start
    and its end (a stand-in clock here, so nothing depends on this machine's speed)."""
    readings = iter([100.0, 102.5])
    assert calibration_seconds(steps=1000, clock=lambda: next(readings)) == 2.5
