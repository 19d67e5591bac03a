"""After 0005's data: the label history's project becomes required (0005 filled it), with its
index, and a cohort has one checker label per (response, criterion) (0005 merged the others).
A migration of its own so that 0005's data changes are committed first (PostgreSQL refuses to
alter a table with pending trigger events in the same transaction)."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0005_checker_labels_data"),
    ]

    operations = [
        migrations.AlterField(
            model_name="labelhistory",
            name="project",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                    to="annotation.project"),
        ),
        migrations.AddIndex(
            model_name="labelhistory",
            index=models.Index(fields=["project", "id"], name="labelhistory_project_id"),
        ),
        migrations.AddConstraint(
            model_name="label",
            constraint=models.UniqueConstraint(condition=models.Q(("role", "checker")),
                                               fields=("response", "criterion", "cohort"), name="label_unique_checker_decision"),
        ),
    ]
