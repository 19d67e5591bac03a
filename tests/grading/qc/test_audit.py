"""The seeded audit sample (``qc_audit_sample``) and the audit outcomes (``qc_audit_record``) on
the ``qc`` study (six cases q4, q1, q2, q3, q5, q6 in case order; conftest.py)."""
import pytest
from django.core.exceptions import ValidationError

from annotation.models import AuditEvent, Case, CaseQuality
from grading.qc import qc_audit_record, qc_audit_sample, qc_counts, qc_screen
from grading.reports.coverage import COVERAGE
from tests.grading.qc.conftest import SCREENING

coverage_report = COVERAGE.answer

ORDER = ["q4", "q1", "q2", "q3", "q5", "q6"]


def sampled(project) -> list[str]:
    rows = CaseQuality.objects.filter(project=project, audit_sampled=True).order_by("case__position")
    return list(rows.values_list("case__external_id", flat=True))


def test_the_sample_is_reproducible_and_changes_with_the_seed(qc_project):
    first = qc_audit_sample(project=qc_project, share=0.5, seed=7)
    assert set(first) == {"cases", "share", "seed", "n_eligible"}
    assert (first["share"], first["seed"], first["n_eligible"]) == (0.5, 7, 6)
    assert len(first["cases"]) == 3  # round(0.5 * 6)
    assert first["cases"] == sorted(first["cases"], key=ORDER.index)  # in case order
    assert qc_audit_sample(project=qc_project, share=0.5, seed=7)["cases"] == first["cases"]
    draws = {tuple(qc_audit_sample(project=qc_project, share=0.5, seed=seed)["cases"]) for seed in range(8)}
    assert len(draws) > 1  # 20 possible samples of 3 out of 6: eight seeds do not all draw the same one
    assert sampled(qc_project) == sorted({c for draw in draws for c in draw}, key=ORDER.index)  # earlier marks stay
    assert AuditEvent.objects.filter(project=qc_project, action="qc_audit_sample").count() == 10


def test_the_sample_size_is_rounded_and_at_least_one(qc_project):
    assert len(qc_audit_sample(project=qc_project)["cases"]) == 1  # round(0.2 * 6) = 1
    assert len(qc_audit_sample(project=qc_project, share=0.01)["cases"]) == 1
    assert qc_audit_sample(project=qc_project, share=1)["cases"] == ORDER


def test_the_sample_avoids_excluded_cases(qc_project):
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING)  # excludes q4, q1, q2
    for seed in range(10):
        result = qc_audit_sample(project=qc_project, share=0.5, seed=seed)
        assert result["n_eligible"] == 3
        assert len(result["cases"]) == 2 and set(result["cases"]) <= {"q3", "q5", "q6"}
    assert qc_audit_sample(project=qc_project, share=1)["cases"] == ["q3", "q5", "q6"]


@pytest.mark.parametrize("kwargs, message", [
    ({"share": 0}, "share must be more than 0 and at most 1"),
    ({"share": 1.5}, "share must be more than 0 and at most 1"),
    ({"share": "a lot"}, "share must be a number"),
    ({"seed": 1.5}, "seed must be a whole number"),
    ({"seed": True}, "seed must be a whole number"),
])
def test_bad_sample_arguments_are_named(qc_project, kwargs, message):
    with pytest.raises(ValueError, match=message):
        qc_audit_sample(project=qc_project, **kwargs)
    assert not CaseQuality.objects.filter(project=qc_project).exists()


def test_outcomes_need_a_drawn_case_and_a_note_for_revise_and_remove(qc_project, manager):
    qc_audit_sample(project=qc_project, share=1)
    q3 = Case.objects.get(project=qc_project, external_id="q3")
    with pytest.raises(ValidationError, match="a note is required to revise a case"):
        qc_audit_record(case=q3, outcome="revise", note="", user=manager)
    with pytest.raises(ValidationError, match="a note is required to remove a case"):
        qc_audit_record(case=q3, outcome="remove", note="   ", user=manager)
    with pytest.raises(ValidationError, match="outcome 'keep' is not one of pass, revise, remove"):
        qc_audit_record(case=q3, outcome="keep", note="x", user=manager)
    row = qc_audit_record(case=q3, outcome="pass", note="", user=manager)
    assert (row.audit_outcome, row.audit_by, row.excluded) == ("pass", manager, False) and row.audit_at is not None
    row = qc_audit_record(case=q3, outcome="revise", note="Criterion 2 is ambiguous", user=manager)
    assert (row.audit_outcome, row.audit_note, row.excluded) == ("revise", "Criterion 2 is ambiguous", False)
    events = list(AuditEvent.objects.filter(project=qc_project, action="qc_audit").order_by("pk"))
    assert [(e.target, e.before["outcome"], e.after["outcome"]) for e in events] == [("q3", None, "pass"), ("q3", "pass", "revise")]


def test_an_undrawn_case_has_no_outcome(qc_project, manager):
    q3 = Case.objects.get(project=qc_project, external_id="q3")
    with pytest.raises(ValidationError, match="case 'q3' was not drawn for audit"):
        qc_audit_record(case=q3, outcome="pass", note="", user=manager)


def test_removing_excludes_the_case_from_reports_and_later_samples(qc_project, manager):
    assert coverage_report(project="qc", source="cohort:group-1")["overall"]["n_responses"] == 15
    qc_audit_sample(project=qc_project, share=1)
    q3 = Case.objects.get(project=qc_project, external_id="q3")
    row = qc_audit_record(case=q3, outcome="remove", note="Prompt is not a clinical question", user=manager)
    assert row.excluded is True
    assert coverage_report(project="qc", source="cohort:group-1")["overall"]["n_responses"] == 15 - 3
    assert "q3" not in qc_audit_sample(project=qc_project, share=1)["cases"]
    counts = qc_counts(project=qc_project)
    assert (counts["cases"], counts["sampled"], counts["excluded"], counts["pending"]) == (6, 6, 1, 5)
    assert counts["outcomes"] == {"pass": 0, "revise": 0, "remove": 1}
    event = AuditEvent.objects.get(project=qc_project, action="qc_audit")
    assert (event.before["excluded"], event.after["excluded"], event.note) == (False, True, "Prompt is not a clinical question")
    # a removal taken back: the case is in again (it is not flagged by a screening)
    assert qc_audit_record(case=q3, outcome="pass", note="", user=manager).excluded is False
    assert coverage_report(project="qc", source="cohort:group-1")["overall"]["n_responses"] == 15


def test_a_removed_flagged_case_stays_out_when_the_screening_unflags_it(qc_project, manager):
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING, threshold_pct=20)  # flags all five
    CaseQuality.objects.filter(case__external_id="q3").update(audit_sampled=True)
    q3 = Case.objects.get(project=qc_project, external_id="q3")
    qc_audit_record(case=q3, outcome="remove", note="Duplicate of q2", user=manager)
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING, threshold_pct=90)
    row = CaseQuality.objects.get(case=q3)
    assert (row.flagged, row.excluded) == (False, True)
