# The backend column widens from 10 to 32 characters and loses its fixed choices: the registry
# of judge backends (grading.judges.backends) is the list; stored values are unchanged.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('grading', '0011_data_job_heartbeat'),
    ]

    operations = [
        migrations.AlterField(
            model_name='judge',
            name='backend',
            field=models.CharField(default='replay', help_text="A registered judge backend's name (grading.judges.backends); forms, the API and the importer accept only registered names.", max_length=32),
        ),
    ]
