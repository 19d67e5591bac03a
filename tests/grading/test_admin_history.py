"""Histories are append-only in the admin too: adjudication history rows can be read, never
added, changed or deleted there (the shared ReadOnlyMixin of annotation.admin)."""
from grading.adjudication.services import adjudication_record
from grading.models import AdjudicationHistory


def test_adjudication_history_is_read_only_in_the_admin(admin_client, mini_project):
    response = mini_project.responses.order_by("position").first()
    criterion = response.case.rubric_version.criteria.order_by("position").first()
    adjudication_record(response=response, criterion=criterion, user=None, verdict="met", note="checked")
    row = AdjudicationHistory.objects.get()
    assert admin_client.get("/admin/grading/adjudicationhistory/").status_code == 200
    assert admin_client.get("/admin/grading/adjudicationhistory/add/").status_code == 403
    page = admin_client.get(f"/admin/grading/adjudicationhistory/{row.pk}/change/").content.decode()
    assert 'name="_save"' not in page
    assert admin_client.post(f"/admin/grading/adjudicationhistory/{row.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AdjudicationHistory.objects.filter(pk=row.pk).exists()
