"""Every change of a label appends one history row (who, when, old, new); a save that
changes nothing appends none; a stale revision is refused instead of overwriting."""
import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from annotation.models import Cohort, CohortMembership, Criterion, Label, LabelHistory, Response
from annotation.services import label_save


@pytest.fixture
def target(mini_project):
    user = get_user_model().objects.get(username="ann1")
    return {
        "response": Response.objects.get(external_id="r3"),
        "cohort": Cohort.objects.get(project=mini_project, name="group-1"),
        "annotator": user,
        "changed_by": user,
    }


@pytest.mark.django_db
class LabelHistoryTests:
    def test_create_then_edit_then_rationale_each_logged(self, mini_project):
        new_user = get_user_model().objects.create_user("ann9")
        cohort = Cohort.objects.get(project=mini_project, name="group-1")
        kwargs = {"response": Response.objects.get(external_id="r1"), "criterion": Criterion.objects.get(external_id="c1-ecg"),
                  "cohort": cohort, "annotator": new_user, "changed_by": new_user}
        CohortMembership.objects.create(project=mini_project, cohort=cohort, user=new_user, role="annotator")
        label = label_save(**kwargs, verdict="met", expected_revision=0)
        label_save(**kwargs, verdict="not_met", expected_revision=1)
        label_save(**kwargs, verdict="not_met", rationale="No ECG mentioned.", evidence=["Call emergency services now."],
                   expected_revision=2)
        history = list(label.history.order_by("id"))
        assert [h.action for h in history] == ["set", "set", "set"]
        assert history[0].old is None and history[0].new["verdict"] == "met"
        assert (history[1].old["verdict"], history[1].new["verdict"]) == ("met", "not_met")
        assert history[2].old["rationale"] == "" and history[2].new["rationale"] == "No ECG mentioned."
        assert history[2].new["evidence"] == ["Call emergency services now."]
        assert all(h.changed_by == new_user and h.changed_at is not None for h in history)
        assert Label.objects.get(pk=label.pk).revision == 3

    def test_saving_the_same_decision_logs_nothing(self, target):
        tone = Criterion.objects.get(external_id="tone")
        before = LabelHistory.objects.count()
        label = label_save(**target, criterion=tone, option_label="good", replace=True)
        assert LabelHistory.objects.count() == before and label.revision == 1

    def test_option_change_and_checker_override_logged(self, mini_project, target):
        tone = Criterion.objects.get(external_id="tone")
        label_save(**target, criterion=tone, option_label="ok", note="second look", replace=True)
        label = Label.objects.get(response=target["response"], criterion=tone, annotator=target["annotator"])
        entry = label.history.get(action="set")
        assert (entry.old["option"], entry.new["option"], entry.note) == ("good", "ok", "replace (second look)")
        checker = get_user_model().objects.get(username="chk1")
        label_save(response=target["response"], criterion=tone, cohort=target["cohort"], annotator=checker,
                   changed_by=checker, role="checker", option_label="poor", action="override", note="too curt",
                   expected_revision=0)
        override = LabelHistory.objects.get(label__annotator=checker, label__criterion=tone, action="override")
        assert override.action == "override" and override.new["role"] == "checker"

    def test_stale_revision_is_refused_and_nothing_changes(self, target):
        tone = Criterion.objects.get(external_id="tone")
        label = Label.objects.get(response=target["response"], criterion=tone, annotator=target["annotator"])
        label_save(**target, criterion=tone, option_label="ok", expected_revision=label.revision)
        with pytest.raises(ValidationError, match="changed elsewhere"):
            label_save(**target, criterion=tone, option_label="poor", expected_revision=label.revision)
        label.refresh_from_db()
        assert label.option_label == "ok" and list(label.history.values_list("action", flat=True)) == ["import", "set"]

    def test_invalid_decision_is_refused(self, target):
        tone = Criterion.objects.get(external_id="tone")
        with pytest.raises(ValidationError, match="not among the options"):
            label_save(**target, criterion=tone, option_label="superb", replace=True)
        with pytest.raises(ValidationError, match="not in the rubric of this response"):
            label_save(**target, criterion=Criterion.objects.get(external_id="c1-ecg"), verdict="met", replace=True)



@pytest.mark.django_db
def test_a_deleted_users_changes_stay_in_the_history_unattributed(target):
    """Who made a change is not indexed (nothing looks history up by it, and a bundle import writes
    a row per label); the foreign key still holds: deleting the user keeps the rows, unattributed."""
    from django.db import connection

    changer = get_user_model().objects.create_user("changer")  # a checker, say, changing ann1's label
    label = label_save(**{**target, "changed_by": changer}, criterion=Criterion.objects.get(external_id="tone"),
                       option_label="poor", replace=True)
    entries = list(label.history.filter(changed_by=changer).values_list("pk", flat=True))
    assert len(entries) == 1
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, LabelHistory._meta.db_table)
    on_changer = [c for c in constraints.values() if c["columns"] == ["changed_by_id"]]
    assert not any(c["index"] for c in on_changer)
    if connection.vendor == "postgresql":
        assert any(c["foreign_key"] for c in on_changer)
    changer.delete()
    assert list(LabelHistory.objects.filter(pk__in=entries).values_list("changed_by", flat=True)) == [None] * len(entries)
    assert Label.objects.filter(pk=label.pk).exists()
