"""The Django admin's assignment actions: assign a cohort (balanced, project overlap) and reopen."""
from annotation.models import Assignment


def test_admin_assign_action_and_reopen_action(study, login_client):
    from django.contrib.auth import get_user_model

    admin_user = get_user_model().objects.create_superuser("boss", password="pw-12345")
    client = login_client("boss")
    Assignment.objects.filter(project=study.project).delete()
    response = client.post("/admin/annotation/cohort/", {
        "action": "assign_round_robin", "_selected_action": [c.pk for c in study.cohorts],
    })
    assert response.status_code == 302
    assert Assignment.objects.filter(cohort=study.cohorts[0]).count() == 4
    assert Assignment.objects.filter(cohort=study.cohorts[1]).count() == 4
    Assignment.objects.filter(annotator__username="a1").update(status="submitted")
    ids = list(Assignment.objects.filter(annotator__username="a1").values_list("pk", flat=True))
    asked = client.post("/admin/annotation/assignment/", {"action": "reopen", "_selected_action": ids})
    assert asked.status_code == 200 and 'name="reason"' in asked.content.decode()  # the reason first
    assert set(Assignment.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"submitted"}
    refused = client.post("/admin/annotation/assignment/", {"action": "reopen", "_selected_action": ids, "apply": "1",
                                                             "reason": "  "})
    assert "Give the reason" in refused.content.decode()
    assert set(Assignment.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"submitted"}
    client.post("/admin/annotation/assignment/", {"action": "reopen", "_selected_action": ids, "apply": "1",
                                                   "reason": "Criterion 3 needs a second look"})
    assert set(Assignment.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"in_progress"}
    assert set(Assignment.objects.filter(pk__in=ids).values_list("reopen_reason", "reopened_by__username")) == {
        ("Criterion 3 needs a second look", "boss")}
    assert admin_user.is_staff


def test_assignment_change_form_cannot_move_work(admin_client, db):
    """Reassignment goes through the service; the admin change form shows the fields read-only."""
    from django.contrib.admin.sites import site

    from annotation.models import Assignment

    model_admin = site._registry[Assignment]
    assert "annotator" in model_admin.get_readonly_fields(None, obj=Assignment())
    assert model_admin.get_readonly_fields(None, obj=None) == []
