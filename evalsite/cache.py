"""The site's cache backend: Django's database cache, with a ``get`` and a ``set`` of one plain
statement each.

The cache holds report results (``grading.reports.cache``) and DRF's throttle histories
(``REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]``, ``evalsite.api_auth``): every API request reads
its caller's history and writes it back. Django's ``DatabaseCache.set`` spends six statements on
that write (count the table, then in a transaction of its own select the key and update or insert
it), half of a batch save's statements, and its count scans a table that every request rewrites.
Here a ``set`` of a key that is there is one UPDATE; a new key is inserted as Django's ``set``
inserts it (the table counted, and culled when full, first), with the value encoded once for
both attempts; a write inside a transaction, where Django's savepoint keeps a failed write from
breaking it, is Django's own ``set``. The table grows only by those inserts, so it is bounded as
Django's is. A ``get`` reads one key and asks the database whether it expired (as
Django's ``has_key`` does) instead of converting the timestamp through the ORM; an expired entry
is deleted, as Django's ``get`` does. Every other operation is Django's.
"""
import base64
import pickle
from datetime import datetime, timezone

from django.conf import settings
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.db import DatabaseCache as DjangoDatabaseCache
from django.db import DatabaseError, connections, router
from django.utils.timezone import now as tz_now

from .statements import statement_cursor

VENDORS = ("postgresql", "sqlite")


class DatabaseCache(DjangoDatabaseCache):
    def get(self, key, default=None, version=None):
        connection = connections[router.db_for_read(self.cache_model_class)]
        if connection.vendor not in VENDORS:
            return super().get(key, default, version)
        key = self.make_and_validate_key(key, version=version)
        with statement_cursor(connection.alias) as cursor:
            cursor.execute(
                f"SELECT value, expires < %s FROM {connection.ops.quote_name(self._table)} WHERE cache_key = %s",
                [connection.ops.adapt_datetimefield_value(tz_now()), key],
            )
            row = cursor.fetchone()
        if row is None:
            return default
        if row[1]:
            self._base_delete_many([key])
            return default
        return pickle.loads(base64.b64decode(connection.ops.process_clob(row[0]).encode()))

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        key = self.make_and_validate_key(key, version=version)
        connection = connections[router.db_for_write(self.cache_model_class)]
        if connection.vendor not in VENDORS or connection.in_atomic_block:
            self._base_set("set", key, value, timeout)
            return
        # Encoded once, whether the key is there or not: a full-scale report's result pickles to a
        # hundred megabytes, which took 1.8 s to encode (the stability report's first computation).
        encoded = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
        expires = self._expires(connection, timeout)
        replaced = self._replace(connection, key, encoded, expires)
        if replaced is None:
            self._base_set("set", key, value, timeout)
        elif not replaced:
            self._insert(connection, key, encoded, expires)

    def _expires(self, connection, timeout):
        timeout = self.get_backend_timeout(timeout)
        expires = datetime.max if timeout is None else \
            datetime.fromtimestamp(timeout, tz=timezone.utc if settings.USE_TZ else None)
        return connection.ops.adapt_datetimefield_value(expires.replace(microsecond=0))

    def _replace(self, connection, key, encoded, expires) -> bool | None:
        """Overwrite the entry if it is there; False when it is not, None when the statement failed."""
        try:
            with statement_cursor(connection.alias) as cursor:
                cursor.execute(
                    f"UPDATE {connection.ops.quote_name(self._table)} SET value = %s, expires = %s WHERE cache_key = %s",
                    [encoded, expires, key],
                )
                return cursor.rowcount == 1
        except DatabaseError:
            return None

    def _insert(self, connection, key, encoded, expires) -> None:
        """A new entry, as Django's ``set`` makes one: the table culled first when it holds more
        than MAX_ENTRIES; a key another process inserted meanwhile is overwritten; a write the
        database refuses leaves the cache without the entry, as Django's does."""
        table = connection.ops.quote_name(self._table)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM {table}")
            count = cursor.fetchone()[0]
            if count > self._max_entries:
                self._cull(connection.alias, cursor, tz_now().replace(microsecond=0), count)
            try:
                cursor.execute(
                    f"INSERT INTO {table} (cache_key, value, expires) VALUES (%s, %s, %s)"
                    " ON CONFLICT (cache_key) DO UPDATE SET value = excluded.value, expires = excluded.expires",
                    [key, encoded, expires],
                )
            except DatabaseError:
                pass
