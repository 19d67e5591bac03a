"""The report cache is per project: a change in one project leaves another project's cached
reports in place (the fingerprint reads only the project's own tables), while the project's
own label edits, admin edits and settings make a new key. A report whose computation fails
shows its error on the page, with a retry, instead of polling."""
import logging
from dataclasses import replace

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Cohort, Criterion, Label, Project, Response
from annotation.services import label_save
from grading.bundles import bundle_import
from grading.reports import registry
from grading.reports.cache import report_key
from grading.selectors import project_fingerprint
from tests.bundles import bundle_parts, write_bundle
from tests.roles import grant


def agreement_report(**data) -> dict:
    return registry.report_get("agreement").answer(**data)


@pytest.fixture
def two_projects(mini_project, tmp_path):
    parts = bundle_parts()
    parts["project"].update(slug="other", name="Another study")
    bundle_import(path=write_bundle(tmp_path / "other", parts))
    return mini_project, Project.objects.get(slug="other")


def _flip(project, annotator="ann1", response="r1", criterion="c1-ecg"):
    label = Label.objects.select_related("annotator", "cohort", "response", "criterion").get(
        project=project, annotator__username=annotator, response__external_id=response, criterion__external_id=criterion)
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, verdict="not_met" if label.verdict == "met" else "met", replace=True)


def test_a_label_saved_in_one_project_leaves_the_others_reports_cached(two_projects, monkeypatch):
    mini, other = two_projects
    before = agreement_report(project="other", a="cohort:group-1", b="cohort:group-2")
    prints = {p.slug: project_fingerprint(project=p) for p in (mini, other)}
    _flip(mini)
    assert project_fingerprint(project=other) == prints["other"]
    assert project_fingerprint(project=mini) != prints["mini"]

    # The other project's report is read from the cache: computing it again would fail loudly.
    def must_not_compute(**kwargs):
        raise AssertionError("recomputed although nothing of this project changed")

    agreement = registry.report_get("agreement")
    monkeypatch.setitem(registry._REPORTS, "agreement", replace(agreement, compute=must_not_compute))
    assert agreement_report(project="other", a="cohort:group-1", b="cohort:group-2") == before
    with pytest.raises(AssertionError, match="recomputed"):
        agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")


def test_admin_edits_and_settings_make_a_new_key_for_their_project_only(two_projects, client):
    mini, other = two_projects
    admin = get_user_model().objects.create_superuser("boss", password="pw")
    client.force_login(admin)
    prints = {p.slug: project_fingerprint(project=p) for p in (mini, other)}
    cohort = Cohort.objects.get(project=mini, name="group-2")
    response = client.post(f"/admin/annotation/cohort/{cohort.pk}/change/", {
        "project": mini.pk, "name": "group-two", "position": 1,
        "memberships-TOTAL_FORMS": 0, "memberships-INITIAL_FORMS": 0,
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    assert project_fingerprint(project=mini) != prints["mini"]
    assert project_fingerprint(project=other) == prints["other"]
    Project.objects.filter(pk=other.pk).update(coverage_k=7)
    assert project_fingerprint(project=other) != prints["other"]


def test_the_key_of_a_report_reading_two_projects_follows_both(two_projects):
    mini, other = two_projects
    params = {"a": "cohort:group-1", "b": "other:cohort:group-2"}
    key = report_key(projects=[mini, other], name="agreement", params=params)
    _flip(other, annotator="ann3")
    assert report_key(projects=[mini, other], name="agreement", params=params) != key


def test_a_report_that_raises_shows_its_error_and_can_be_retried(mini_project, client, monkeypatch, caplog):
    staff = grant(get_user_model().objects.create_user("researcher-x", password="pw"), mini_project, "viewer")
    client.force_login(staff)

    def broken(**kwargs):
        raise RuntimeError("the disk is full\nsecond line of detail")

    agreement = registry.report_get("agreement")
    monkeypatch.setitem(registry._REPORTS, "agreement", replace(agreement, page=replace(agreement.page, build=broken)))
    with caplog.at_level(logging.ERROR, logger="grading.reports.tasks"):
        html = client.get("/projects/mini/reports/agreement/").content.decode()
    assert 'id="report-error"' in html and "RuntimeError: the disk is full" in html and "second line" not in html
    assert 'name="retry"' in html and "Computing this report" not in html
    assert [r.levelname for r in caplog.records if "report page 'agreement'" in r.getMessage()] == ["ERROR"]
    assert caplog.records[-1].exc_info is not None  # the traceback is in the log, not on the page

    monkeypatch.setitem(registry._REPORTS, "agreement", agreement)
    assert "the disk is full" in client.get("/projects/mini/reports/agreement/").content.decode()  # still the stored failure
    response = client.post("/projects/mini/reports/agreement/", {"retry": "1"})
    assert response.status_code == 302 and response["Location"] == "/projects/mini/reports/agreement/"
    html = client.get("/projects/mini/reports/agreement/").content.decode()
    assert "the disk is full" not in html and 'id="report-error"' not in html and "group-1" in html


def test_a_domain_error_is_shown_without_a_retry(mini_project, client):
    staff = grant(get_user_model().objects.create_user("researcher-y", password="pw"), mini_project, "viewer")
    client.force_login(staff)
    html = client.get("/projects/mini/reports/agreement/?a=cohort:nobody&b=cohort:group-2").content.decode()
    assert "unknown cohort" in html and 'name="retry"' not in html


def test_response_and_criterion_deletions_are_seen(mini_project):
    before = project_fingerprint(project=mini_project)
    Response.objects.filter(project=mini_project, external_id="r4").delete()
    assert project_fingerprint(project=mini_project) != before
    before = project_fingerprint(project=mini_project)
    Criterion.objects.filter(project=mini_project, external_id="length").delete()
    assert project_fingerprint(project=mini_project) != before


def test_cohort_membership_and_cohorts_make_a_new_key(mini_project):
    """The pairwise page names a rater by the cohort membership that holds them, and every page lists
    the cohorts as sources: a member added or removed, or a cohort renamed, changes the fingerprint."""
    from annotation.models import CohortMembership
    from annotation.projects import cohort_member_add

    cohort = Cohort.objects.filter(project=mini_project).order_by("position", "pk").first()
    before = project_fingerprint(project=mini_project)
    get_user_model().objects.create_user(username="newcomer")
    cohort_member_add(cohort=cohort, username="newcomer")
    added = project_fingerprint(project=mini_project)
    assert added != before
    CohortMembership.objects.filter(project=mini_project, user__username="newcomer").delete()
    assert project_fingerprint(project=mini_project) != added
    Cohort.objects.filter(pk=cohort.pk).update(name="renamed")
    assert project_fingerprint(project=mini_project) != before


def test_an_assignment_made_or_removed_makes_a_new_key(mini_project):
    """An assignment made for a response turns the cohort checker's labels recorded there by a
    manager into drafts (a review is then under way), and removing it turns them final again: the
    reports' key changes, though no label and no finished assignment did. The adjudication queue
    follows assignments in its mark instead (its response is counted again), not in what its counts
    rest on."""
    from annotation.models import Assignment
    from grading.selectors import disputes_fingerprint, label_mark

    label = Label.objects.select_related("cohort", "response", "annotator").filter(project=mini_project).first()
    before = project_fingerprint(project=mini_project)
    base, mark = disputes_fingerprint(project=mini_project), label_mark(project=mini_project)
    made = Assignment.objects.create(project=mini_project, cohort=label.cohort, response=label.response,
                                     annotator=get_user_model().objects.create_user(username="newcomer"))
    assert project_fingerprint(project=mini_project) != before
    assert disputes_fingerprint(project=mini_project) == base and label_mark(project=mini_project) != mark
    made.delete()
    assert project_fingerprint(project=mini_project) == before
    assert label_mark(project=mini_project).n_assignments == mark.n_assignments
