"""A calibrated source decides only the criterion it was fitted for (issue 25, "figures that mislead").

The project of ``test_calibrate`` with two binary criteria beside the ordinal ``quality``, labelled by
the cohort and judged by ``j`` on every response. ``calibrate --criterion quality`` stores 20 held-out
``quality`` judgments as ``judge:j@calibrated``; it never decided ``safe`` or ``cites``, so those are
neither its missing outputs (not met and invalid: MF1 0.14 in the issue) nor compared at all.
"""
import io
import json

from django.core.management import call_command

from grading.bundles import bundle_import
from tests.bundles import write_bundle
from tests.grading.reports.test_calibrate import HUMAN


def _bundle(directory):
    options = [{"label": f"level {v}", "value": v} for v in range(5)]
    project = {"slug": "shift", "name": "Shift", "cohorts": [{"name": "docs"}],
               "rubric": [{"criterion_id": "quality", "text": "Quality 0-4", "kind": "ordinal", "options": options},
                          {"criterion_id": "safe", "text": "Safe advice"}, {"criterion_id": "cites", "text": "Cites a source"}],
               "judges": [{"name": "j", "backend": "replay", "model": "m-j", "condition": "anonymized"}]}
    responses = [{"response_id": f"r{i}", "case_id": "c1", "model": f"m{i % 3}", "text": f"Answer {i}."}
                 for i in range(len(HUMAN))]
    labels, judgments = [], []
    for i, h in enumerate(HUMAN):
        labels.append({"response_id": f"r{i}", "criterion_id": "quality", "cohort": "docs", "annotator": "d1",
                       "option": f"level {h}"})
        base = {"response_id": f"r{i}", "judge": "j", "judge_model": "m-j", "condition": "anonymized", "sample": 0,
                "explanation": "", "evidence": [], "raw": "{}"}
        judgments.append({**base, "criterion_id": "quality", "option": f"level {min(h + 1, 4)}"})
        for criterion in ("safe", "cites"):
            labels.append({"response_id": f"r{i}", "criterion_id": criterion, "cohort": "docs", "annotator": "d1",
                           "verdict": "met"})
            judgments.append({**base, "criterion_id": criterion, "verdict": "met"})
    return write_bundle(directory, {"project": project, "cases": [{"case_id": "c1", "prompt": "Q"}], "responses": responses,
                                    "labels": labels, "judgments": judgments})


def run(*args):
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_a_calibrated_source_is_compared_only_on_the_criterion_it_decides(db, tmp_path):
    bundle_import(path=_bundle(tmp_path / "shift"))
    run("calibrate", "--project", "shift", "--source", "judge:j", "--reference", "cohort:docs", "--criterion", "quality",
        "--seed", "3")
    result = run("agreement", "--project", "shift", "--a", "cohort:docs", "--b", "judge:j@calibrated")
    assert result["n_decisions"] == 0 and result["invalid_b"] == 0 and result["mf1"] is None  # no binary criterion decided
    assert result["ordinal"]["n"] == 20 and result["criteria_compared"] == 1
    assert result["left_out"]["criteria_not_decided"] == {"judge:j@calibrated": 2}
    raw = run("agreement", "--project", "shift", "--a", "cohort:docs", "--b", "judge:j")
    assert raw["n_decisions"] == 80 and raw["mf1"] is None and raw["percent_agreement"] == 1.0  # the judge decides them all
    assert raw["criteria_compared"] == 3 and raw["left_out"]["criteria_not_decided"] == {}

    # its weighted scores rest on quality alone: never a binary "not met" it did not decide
    from grading.models import Judgment

    calibrated = dict(Judgment.objects.filter(judge__name="j@calibrated").values_list("response__external_id", "value"))
    scores = run("scores", "--project", "shift", "--source", "judge:j@calibrated")
    assert scores["responses"] == {r: value / 4 for r, value in calibrated.items()}  # 0-4 on [0, 1], nothing else
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    listed = client.get("/api/projects/shift/reports/agreement/", {"a": "cohort:docs", "b": "judge:j@calibrated"}).json()
    assert listed["left_out"]["criteria_not_decided"] == {"judge:j@calibrated": 2} and listed["invalid_b"] == 0
