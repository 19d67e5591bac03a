"""Agreement across two separate imports of the same study (aligned by model and
normalized texts, SPEC §3), and report caching that goes stale by itself when a label or
a judgment changes."""
from dataclasses import replace

import pytest

from annotation.models import Label
from annotation.services import label_save
from grading.bundles import bundle_import
from grading.models import Judgment
from grading.reports import registry
from grading.reports.agreement import AGREEMENT
from grading.reports.coverage import COVERAGE
from tests.bundles import bundle_parts, write_bundle


def agreement_report(**data) -> dict:
    return registry.report_get("agreement").answer(**data)


coverage_report = COVERAGE.answer


def copy_of_group_2(tmp_path, *, extra_response: bool = False):
    """The mini study as a second project: new ids, reshuffled responses, texts with other
    case, punctuation and spacing, and only group-2's labels."""
    parts = bundle_parts()
    parts["project"].update(slug="mini-copy", name="Mini study, group 2 import", cohorts=[{"name": "group-2"}], judges=[])
    parts["project"]["rubric"] = [dict(c, criterion_id="x-" + c["criterion_id"]) for c in parts["project"]["rubric"]]
    for case in parts["cases"]:
        case["case_id"] = "x-" + case["case_id"]
        if "prompt" in case:
            case["prompt"] = "  CHEST pain for two hours -- what should I do "
        for criterion in case.get("criteria", []):
            criterion["criterion_id"] = "x-" + criterion["criterion_id"]
            criterion["text"] = criterion["text"].upper() + "."
    for response in parts["responses"]:
        response["response_id"] = "x-" + response["response_id"]
        response["case_id"] = "x-" + response["case_id"]
    parts["responses"].reverse()
    if extra_response:
        parts["responses"].append({"response_id": "x-r9", "case_id": "x-c1", "model": "model-z", "text": "Unpaired."})
    parts["labels"] = [
        dict(label, response_id="x-" + label["response_id"], criterion_id="x-" + label["criterion_id"])
        for label in parts["labels"] if label["cohort"] == "group-2"
    ]
    if extra_response:
        parts["labels"].append({"response_id": "x-r9", "criterion_id": "x-c1-ecg", "cohort": "group-2",
                                "annotator": "ann3", "verdict": "met"})
    parts["judgments"] = []
    bundle_import(path=write_bundle(tmp_path / "copy", parts))


def test_two_imports_align_like_one_project(mini_project, tmp_path):
    copy_of_group_2(tmp_path)
    local = agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")["summary"]
    across = agreement_report(project="mini", a="cohort:group-1", b="mini-copy:cohort:group-2")["summary"]
    assert across["mf1"] == pytest.approx(68 / 77)
    assert (across["matched_responses"], across["unmatched_responses"]) == (4, 0)
    for key in ("n_decisions", "mf1", "cohen_kappa", "krippendorff_alpha", "by_model", "case_level", "ordinal"):
        assert across[key] == local[key], key


def test_unpaired_rows_are_counted(mini_project, tmp_path):
    copy_of_group_2(tmp_path, extra_response=True)
    across = agreement_report(project="mini", a="cohort:group-1", b="mini-copy:cohort:group-2")["summary"]
    assert (across["matched_responses"], across["unmatched_responses"]) == (4, 1)
    assert across["n_decisions"] == 9


def test_result_is_cached_until_a_label_changes(mini_project, monkeypatch):
    calls = []
    real = AGREEMENT.compute
    monkeypatch.setitem(registry._REPORTS, "agreement", replace(AGREEMENT, compute=lambda **kw: calls.append(1) or real(**kw)))
    first = agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")
    again = agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")
    assert len(calls) == 1 and again == first

    label = Label.objects.select_related("response", "criterion", "cohort", "annotator").get(
        annotator__username="ann3", response__external_id="r2", criterion__external_id="c1-ecg"
    )
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, verdict="not_met", replace=True)
    changed = agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")
    assert len(calls) == 2
    assert first["summary"]["mf1"] == pytest.approx(68 / 77) and changed["summary"]["mf1"] == 1.0


def test_result_is_recomputed_when_a_judgment_is_added(mini_project):
    before = coverage_report(project="mini", source="judge:judge-a")
    judgment = Judgment.objects.get(response__external_id="r1", criterion__external_id="c1-ecg")
    Judgment.objects.create(judge=judgment.judge, response=judgment.response,
                            criterion=judgment.criterion.__class__.objects.get(external_id="c1-call"),
                            rubric_version=judgment.rubric_version, sample=0, condition=judgment.condition, verdict="met")
    after = coverage_report(project="mini", source="judge:judge-a")
    assert before["by_model"]["model-a"]["rubric_accuracy"] == pytest.approx(100 / 3)
    assert after["by_model"]["model-a"]["rubric_accuracy"] == pytest.approx(200 / 3)


def test_deleting_a_label_in_the_admin_makes_the_result_stale(mini_project, client):
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    admin = get_user_model().objects.create_superuser(username="boss", password="pw-12345")
    client.force_login(admin)
    before = agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")["summary"]
    label = Label.objects.get(annotator__username="ann3", response__external_id="r2", criterion__external_id="c1-ecg")
    response = client.post(reverse("admin:annotation_label_delete", args=[label.pk]), {"post": "yes"})
    assert response.status_code == 302 and not Label.objects.filter(pk=label.pk).exists()
    after = agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")["summary"]
    assert before["n_decisions"] == 9 and after["n_decisions"] == 8 and after["mf1"] == 1.0


def test_a_command_reads_a_cached_result_once(mini_project, monkeypatch):
    """A report command whose result is cached fetches it once (at full scale a result can be a
    hundred megabytes to fetch and unpickle): it asks whether it is there without reading it."""
    import io

    from django.core.management import call_command

    from grading.reports import cache as report_cache

    call_command("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "cohort:group-2", "--json",
                 stdout=io.StringIO())
    reads, real = [], report_cache.cache

    class Counting:  # the cache, counting the reads that fetch the result
        def __getattr__(self, name):
            return getattr(real, name)

        def get(self, key, *args, **kwargs):
            value = real.get(key, *args, **kwargs)
            if isinstance(value, dict) and "summary" in value:
                reads.append(key)
            return value

    monkeypatch.setattr(report_cache, "cache", Counting())
    out = io.StringIO()
    call_command("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", "cohort:group-2", "--json", stdout=out)
    assert '"mf1"' in out.getvalue()
    assert len(reads) == 1
