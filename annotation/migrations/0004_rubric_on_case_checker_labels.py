"""The case's rubric version, the project on label history and the project's admin-change stamp,
as new nullable columns. The data follows in 0005 and the constraints in 0006, each in a
migration (a transaction) of its own: PostgreSQL does not create an index or alter a table
whose rows the same transaction changed while their foreign-key checks are still pending.
"""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0003_label_cohort_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="data_changed_at",
            field=models.DateTimeField(
                blank=True, editable=False, null=True,
                help_text="Last admin edit of the project's data; part of the report cache key (see grading.selectors.fingerprint).",
            ),
        ),
        migrations.AddField(
            model_name="case",
            name="rubric_version",
            field=models.ForeignKey(blank=True, editable=False, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                    related_name="judged_cases", to="annotation.rubricversion"),
        ),
        migrations.AddField(
            model_name="labelhistory",
            name="project",
            field=models.ForeignKey(db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                    to="annotation.project"),
        ),
    ]
