"""Create the database cache table (settings.CACHES) with the schema, so every deployment
that migrates has it; report results are cached there."""
from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("grading", "0004_lean_bulk_indexes")]
    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
