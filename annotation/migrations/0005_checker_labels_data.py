"""The data of the rubric-on-case / checker-label change (columns added by 0004):

- every case points at the rubric it is judged against (its own current version, else the
  project's current version);
- every label-history row carries its label's project;
- checker labels become the cohort's: where a cohort had several checker labels for one
  (response, criterion) (one per checker, or one per reviewed annotator), the most recently
  changed one is kept, the others' history rows move to it and one "merge" row records each
  merged label's state, so no history is lost; checker labels point at no assignment.
"""
from django.db import migrations
from django.db.models import Count, OuterRef, Subquery


def _state(label) -> dict:
    return {"verdict": label.verdict, "option": label.option_label, "value": label.value, "rationale": label.rationale,
            "evidence": list(label.evidence or []), "role": label.role}


def forwards(apps, schema_editor):
    Case = apps.get_model("annotation", "Case")
    RubricVersion = apps.get_model("annotation", "RubricVersion")
    Label = apps.get_model("annotation", "Label")
    LabelHistory = apps.get_model("annotation", "LabelHistory")

    current = RubricVersion.objects.filter(is_current=True)
    Case.objects.update(rubric_version_id=Subquery(current.filter(case_id=OuterRef("pk")).values("pk")[:1]))
    for project_id, version_id in current.filter(case__isnull=True).values_list("project_id", "pk"):
        Case.objects.filter(project_id=project_id, rubric_version__isnull=True).update(rubric_version_id=version_id)

    LabelHistory.objects.update(project_id=Subquery(Label.objects.filter(pk=OuterRef("label_id")).values("project_id")[:1]))

    checker = Label.objects.filter(role="checker")
    duplicated = (
        checker.values("response_id", "criterion_id", "cohort_id").annotate(n=Count("id")).filter(n__gt=1).order_by()
    )
    for key in duplicated:
        labels = list(checker.filter(response_id=key["response_id"], criterion_id=key["criterion_id"],
                                     cohort_id=key["cohort_id"]).order_by("-updated_at", "-id"))
        kept, merged = labels[0], labels[1:]
        for label in merged:
            LabelHistory.objects.filter(label_id=label.pk).update(label_id=kept.pk)
            LabelHistory.objects.create(
                label_id=kept.pk, project_id=kept.project_id, changed_by_id=None, action="merge", old=_state(label),
                new=_state(kept),
                note=f"checker label of user {label.annotator_id} merged into the cohort's checker label (migration 0004)",
            )
            label.delete()
    checker.update(assignment_id=None)


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0004_rubric_on_case_checker_labels"),
    ]

    operations = [
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
