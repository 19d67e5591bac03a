"""Calibration that lasts (issue 13, point 4): the ridge + quantile map on a small known
distribution, and ``calibrate`` fitting on a seeded split, storing the other items as the
source ``judge:NAME@calibrated`` that every report and the export read."""
import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from grading.bundles import bundle_import
from grading.metrics import fit_ridge_calibration, split_by_size
from grading.models import Judge, Judgment
from tests.bundles import write_bundle


def test_the_calibration_map_on_a_known_distribution():
    # the judge scores one point too high (and cites badly when it does); humans use 0..3
    features = [[1, 0], [2, 0], [3, 1], [4, 1], [2, 0], [3, 1]]
    human = [0, 1, 2, 3, 1, 2]
    model = fit_ridge_calibration(features, human, levels=[0, 1, 2, 3])
    assert model([[1, 0], [2, 0], [3, 1], [4, 1]]).tolist() == [0.0, 1.0, 2.0, 3.0]  # ranks map onto the human scores
    assert model([[9, 1]]).tolist() == [3.0] and model([[-5, 0]]).tolist() == [0.0]  # never off the scale
    cal, rest = split_by_size(list(range(10)), size=4, seed=0)
    assert len(cal) == 4 and len(rest) == 6 and not set(cal) & set(rest)
    assert split_by_size(list(range(10)), size=4, seed=0)[0].tolist() == cal.tolist()  # seeded


HUMAN = [0, 1, 2, 3, 4] * 8  # 40 responses


def shifted_bundle(directory):
    options = [{"label": f"level {v}", "value": v} for v in range(5)]
    project = {"slug": "shift", "name": "Shift", "cohorts": [{"name": "docs"}],
               "rubric": [{"criterion_id": "quality", "text": "Quality 0-4", "kind": "ordinal", "options": options}],
               "judges": [{"name": "j", "backend": "replay", "model": "m-j", "condition": "anonymized"}]}
    responses = [{"response_id": f"r{i}", "case_id": "c1", "model": f"m{i % 3}", "text": f"Answer {i}."}
                 for i in range(len(HUMAN))]
    labels = [{"response_id": f"r{i}", "criterion_id": "quality", "cohort": "docs", "annotator": "d1",
               "option": f"level {h}"} for i, h in enumerate(HUMAN)]
    judgments = [{"response_id": f"r{i}", "criterion_id": "quality", "judge": "j", "judge_model": "m-j",
                  "condition": "anonymized", "sample": 0, "option": f"level {min(h + 1, 4)}", "explanation": "",
                  "evidence": [], "raw": "{}"} for i, h in enumerate(HUMAN)]
    return write_bundle(directory, {"project": project, "cases": [{"case_id": "c1", "prompt": "Q"}], "responses": responses,
                                    "labels": labels, "judgments": judgments})


def run(*args):
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_calibrate_stores_a_source_that_reports_and_exports_read(db, tmp_path):
    bundle_import(path=shifted_bundle(tmp_path / "shift"))
    result = run("calibrate", "--project", "shift", "--source", "judge:j", "--reference", "cohort:docs",
                 "--criterion", "quality", "--seed", "3")
    assert (result["n_calibration"], result["n_holdout"]) == (20, 20)  # fewer than 400 items: half
    assert result["source"] == "judge:j@calibrated" and result["levels"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert "ridge regression" in result["method"] and "quantile" in result["method"]
    assert result["qwk_after"] > result["qwk_before"]
    assert sum(result["distributions"]["calibrated"]) == 20 and result["distributions"]["raw"][0] == 0  # raw never says 0

    derived = Judge.objects.get(project__slug="shift", name="j@calibrated")
    assert derived.backend == Judge.CALIBRATED and Judgment.objects.filter(judge=derived).count() == 20
    again = run("calibrate", "--project", "shift", "--source", "judge:j", "--reference", "cohort:docs",
                "--criterion", "quality", "--seed", "3", "--calibration-size", "30")
    assert (again["n_calibration"], again["n_holdout"]) == (30, 10)
    assert Judgment.objects.filter(judge=derived).count() == 10  # replaced, never added to

    scores = run("scores", "--project", "shift", "--source", "judge:j@calibrated")
    assert len(scores["responses"]) == 10
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    listed = client.get("/api/projects/shift/decisions/", {"source": "judge:j@calibrated"}).json()
    assert listed["count"] == 10 and {d["option"] for d in listed["results"]} <= {f"level {v}" for v in range(5)}
    from annotation.models import Project
    from grading.bundles import gold_export

    gold_export(project=Project.objects.get(slug="shift"), out_dir=tmp_path / "out")
    lines = [json.loads(line) for line in (tmp_path / "out" / "judgments.jsonl").read_text().splitlines()]
    assert sum(1 for line in lines if line["judge"] == "j@calibrated") == 10


@pytest.mark.parametrize("args, message", [
    (["--source", "cohort:docs", "--reference", "cohort:docs", "--criterion", "quality"], "is not a judge of its own"),
    (["--source", "judge:j", "--reference", "cohort:docs"], "has no traits"),
    (["--source", "judge:j", "--reference", "cohort:docs", "--criterion", "nope"], "has no criterion 'nope'"),
])
def test_bad_calibrations_are_refused(db, tmp_path, args, message):
    bundle_import(path=shifted_bundle(tmp_path / "shift"))
    with pytest.raises(Exception, match=message):
        run("calibrate", "--project", "shift", *args)
    assert not Judge.objects.filter(name__endswith="@calibrated").exists()


def test_sizes_follow_the_default_rule():
    from grading.reports.calibrated import DEFAULT_SIZE

    assert DEFAULT_SIZE == 200 and np.unique(split_by_size(list(range(500)), size=200)[0]).size == 200
