"""Screening (``grading.qc.qc_screen``) worked by hand on the ``qc`` study (table in conftest.py)
and on ``mini``; re-screening; and that excluded cases drop out of cached reports."""
import pytest
from django.core.exceptions import ValidationError

from annotation.models import AuditEvent, CaseQuality
from grading.qc import qc_reinstate, qc_screen
from grading.reports.agreement import AGREEMENT
from grading.reports.coverage import COVERAGE
from tests.grading.qc.conftest import SCREENING

agreement_report, coverage_report = AGREEMENT.answer, COVERAGE.answer


def quality(project) -> dict:
    return {q.case.external_id: q for q in CaseQuality.objects.filter(project=project).select_related("case")}


def test_screening_flags_the_cases_at_or_above_the_threshold(qc_project, manager):
    result = qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING, threshold_pct=50, user=manager)
    assert set(result) == {"threshold", "n_cases", "flagged", "by_case"}
    assert result["threshold"] == 50.0
    assert result["n_cases"] == 5  # q6 has no response of a screening model
    assert result["flagged"] == ["q4", "q1", "q2"]  # case order, q2 exactly at the threshold
    assert result["by_case"] == {"q4": 100.0, "q1": pytest.approx(200 / 3), "q2": 50.0, "q3": 25.0, "q5": 25.0}
    rows = quality(qc_project)
    assert set(rows) == {"q4", "q1", "q2", "q3", "q5"}
    assert {c for c, q in rows.items() if q.flagged} == {c for c, q in rows.items() if q.excluded} == {"q4", "q1", "q2"}
    q1 = rows["q1"]
    assert (q1.screen_accuracy_pct, q1.screen_threshold_pct) == (pytest.approx(200 / 3), 50.0)
    assert (q1.screen_source, q1.screen_models) == ("cohort:group-1", SCREENING)
    event = AuditEvent.objects.get(project=qc_project, action="qc_screen")
    assert event.actor == manager
    assert event.after == {"flagged": 3, "excluded": 3, "n_cases": 5, "threshold_pct": 50.0, "source": "cohort:group-1",
                           "models": SCREENING}


def test_only_the_named_models_count(qc_project):
    # m-d alone: q4 0/3, q5 2/2, q6 1/4
    result = qc_screen(project=qc_project, source="cohort:group-1", models="m-d", threshold_pct=50)
    assert result["by_case"] == {"q4": 0.0, "q5": 100.0, "q6": 25.0}
    assert result["flagged"] == ["q5"]
    # m-a and m-c: q5's m-c response has no decision, so only m-a's 0/2 counts there
    result = qc_screen(project=qc_project, source="cohort:group-1", models=["m-a", "m-c", "m-a"], threshold_pct=75)
    assert result["by_case"] == {"q4": 100.0, "q1": 75.0, "q2": 50.0, "q3": 25.0, "q5": 0.0}
    assert result["flagged"] == ["q4", "q1"]
    assert quality(qc_project)["q1"].screen_models == ["m-a", "m-c"]


def test_rescreening_unflags_and_brings_cases_back(qc_project):
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING, threshold_pct=50)
    result = qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING, threshold_pct=60)
    assert result["flagged"] == ["q4", "q1"]
    q2 = quality(qc_project)["q2"]
    assert (q2.flagged, q2.excluded, q2.screen_threshold_pct) == (False, False, 60.0)
    assert AuditEvent.objects.filter(project=qc_project, action="qc_screen").count() == 2


def test_a_new_screening_excludes_a_reinstated_case_that_is_still_flagged(qc_project, manager):
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING)
    case = quality(qc_project)["q1"].case
    qc_reinstate(case=case, user=manager, note="Rubric is hard after all")
    assert quality(qc_project)["q1"].excluded is False
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING)
    assert quality(qc_project)["q1"].excluded is True


def test_screening_the_mini_study(mini_project):
    # c1 under group-1: r1 (model-a) met 2 of 3, r2 (model-b) 1 of 3 -> mean 50; c2 has no binary criterion
    result = qc_screen(project=mini_project, source="cohort:group-1", models=["model-a", "model-b"])
    assert result == {"threshold": 50.0, "n_cases": 1, "flagged": ["c1"], "by_case": {"c1": 50.0}}
    result = qc_screen(project=mini_project, source="cohort:group-1", models=["model-b"], threshold_pct=50)
    assert result["by_case"] == {"c1": pytest.approx(100 / 3)} and result["flagged"] == []
    # judge-a: r1 met 1 of 3 (ECG), r2 none (its one output is unparseable, the rest missing: not met)
    result = qc_screen(project=mini_project, source="judge:judge-a", models=["model-a", "model-b"], threshold_pct=10)
    assert result["by_case"] == {"c1": pytest.approx((100 / 3 + 0) / 2)} and result["flagged"] == ["c1"]


@pytest.mark.parametrize("kwargs, message", [
    ({"models": ["m-a", "m-x"]}, r"unknown model 'm-x' in project 'qc' \(models: m-a, m-b, m-c, m-d\)"),
    ({"models": ["physician"]}, "unknown model 'physician'"),  # human-authored: not a screening model
    ({"models": []}, "name at least one screening model"),
    ({"models": " , "}, "name at least one screening model"),
    ({"threshold_pct": 101}, "threshold must be a percentage from 0 to 100"),
    ({"threshold_pct": float("nan")}, "threshold must be a finite number"),
    ({"threshold_pct": "high"}, "threshold must be a number"),
    ({"source": "cohort:nope"}, "unknown cohort 'nope' in project 'qc'"),
    ({"source": "mini:cohort:group-1"}, "unknown source 'mini:cohort:group-1'; use cohort:NAME, judge:NAME or gold"),
    ({"source": "no-such-project:cohort:x"}, "unknown source 'no-such-project:cohort:x'; use cohort:NAME"),
])
def test_bad_arguments_are_named(qc_project, mini_project, kwargs, message):
    arguments = {"source": "cohort:group-1", "models": SCREENING, **kwargs}
    with pytest.raises((ValueError, LookupError), match=message):
        qc_screen(project=qc_project, **arguments)
    assert not CaseQuality.objects.filter(project=qc_project).exists()


def test_reinstating_needs_a_flagged_case_and_a_note(qc_project, manager):
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING)
    rows = quality(qc_project)
    with pytest.raises(ValidationError, match="a note is required to reinstate"):
        qc_reinstate(case=rows["q1"].case, user=manager, note="  ")
    with pytest.raises(ValidationError, match="case 'q3' is not flagged"):
        qc_reinstate(case=rows["q3"].case, user=manager, note="keep")
    qc_reinstate(case=rows["q1"].case, user=manager, note="Screening responses copied the reference")
    q1 = quality(qc_project)["q1"]
    assert (q1.flagged, q1.excluded) == (True, False)
    event = AuditEvent.objects.get(project=qc_project, action="qc_reinstate")
    assert (event.target, event.actor, event.before["excluded"], event.after["excluded"]) == ("q1", manager, True, False)
    assert event.note == "Screening responses copied the reference"
    with pytest.raises(ValidationError, match="already reinstated"):
        qc_reinstate(case=rows["q1"].case, user=manager, note="again")


def test_excluded_cases_drop_out_of_cached_reports(qc_project, manager):
    before = coverage_report(project="qc", source="cohort:group-1")  # computed and cached
    assert before["overall"]["n_responses"] == 15
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING, threshold_pct=50)
    assert coverage_report(project="qc", source="cohort:group-1")["overall"]["n_responses"] == 15 - 2 - 3 - 3
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING, threshold_pct=60)  # q2 is back
    assert coverage_report(project="qc", source="cohort:group-1")["overall"]["n_responses"] == 15 - 2 - 3
    qc_reinstate(case=quality(qc_project)["q4"].case, user=manager, note="keep")
    assert coverage_report(project="qc", source="cohort:group-1")["overall"]["n_responses"] == 15 - 3


def test_a_rescreen_that_swaps_excluded_cases_refreshes_the_cached_report(qc_project):
    # m-a alone at 50: q4 100, q1 100, q2 50, q3 50, q5 0 -> excluded q4 q1 q2 q3 (left: q5, q6)
    qc_screen(project=qc_project, source="cohort:group-1", models=["m-a"])
    first = coverage_report(project="qc", source="cohort:group-1")
    assert sorted(first["by_model"]) == ["m-a", "m-b", "m-d"] and first["by_model"]["m-a"]["rubric_accuracy"] == 0.0
    # m-b alone: q1 50, q2 50, q3 25, q5 50; q4 keeps its flag -> excluded q4 q1 q2 q5 (left: q3, q6).
    # The same number of rows and of excluded cases: only the rows' update time tells the cache.
    qc_screen(project=qc_project, source="cohort:group-1", models=["m-b"])
    second = coverage_report(project="qc", source="cohort:group-1")
    assert sorted(second["by_model"]) == ["m-a", "m-b", "m-c", "m-d"]
    assert second["by_model"]["m-a"]["rubric_accuracy"] == 50.0


def test_the_mini_agreement_report_loses_the_excluded_case(mini_project):
    assert agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")["summary"]["n_decisions"] == 9
    qc_screen(project=mini_project, source="cohort:group-1", models=["model-a", "model-b"])  # flags c1
    after = agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")
    assert after["summary"]["n_decisions"] == 0 and after["n_excluded_cases"] == 1
