"""The database cache's table unlogged (PostgreSQL). What it holds (report results, the API
throttles' histories) may be lost in a crash, which empties an unlogged table; in exchange a write
to it (the throttle writes one on every API request, in a transaction of its own) produces no WAL
and waits for no flush to disk when it commits."""
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.db import BaseDatabaseCache
from django.db import migrations, router


def cache_tables(connection) -> list[str]:
    """The tables of the database caches configured for this database that exist (as
    ``createcachetable`` finds them)."""
    existing = set(connection.introspection.table_names())
    found = []
    for alias in settings.CACHES:
        cache = caches[alias]
        if isinstance(cache, BaseDatabaseCache) and router.allow_migrate_model(connection.alias, cache.cache_model_class):
            if cache._table in existing:
                found.append(cache._table)
    return found


def persistence(keyword: str):
    def change(apps, schema_editor):
        connection = schema_editor.connection
        if connection.vendor != "postgresql":
            return
        for table in cache_tables(connection):
            schema_editor.execute(f"ALTER TABLE {connection.ops.quote_name(table)} SET {keyword}")
    return change


class Migration(migrations.Migration):
    dependencies = [("grading", "0013_adjudication_provenance")]
    operations = [migrations.RunPython(persistence("UNLOGGED"), persistence("LOGGED"))]
