"""Bulk row insertion for large imports: PostgreSQL COPY through psycopg 3, and a plain
``executemany`` elsewhere. Both skip model instantiation, which dominates ``bulk_create``
at a few hundred thousand rows. Rows are tuples already in database form (JSON as text).

With ``references_checked=True`` the caller promises that every foreign key in the rows was
looked up in this transaction and is locked against deletion (``lock_key_share``). On
PostgreSQL the per-row foreign-key triggers are then skipped for the COPY
(``session_replication_role = replica``, which needs a role allowed to set it; without that
privilege the insert simply runs with the triggers). Unique constraints are indexes, not
triggers, and are enforced either way. At 250,000 rows the triggers cost more than the COPY.
"""
from collections.abc import Iterable, Sequence

from django.db import DatabaseError, connection, transaction

BATCH_ROWS = 5000


def insert_rows(table: str, columns: Sequence[str], rows: Iterable[tuple], *, references_checked: bool = False) -> int:
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    count = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            skip_triggers = references_checked and _replica_role(cursor)
            try:
                with cursor.copy(f"COPY {connection.ops.quote_name(table)} ({cols}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
                        count += 1
            finally:
                if skip_triggers:
                    cursor.execute("SET LOCAL session_replication_role = origin")
            return count
        sql = f"INSERT INTO {connection.ops.quote_name(table)} ({cols}) VALUES ({', '.join(['%s'] * len(columns))})"
        batch: list[tuple] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= BATCH_ROWS:
                cursor.executemany(sql, batch)
                count += len(batch)
                batch.clear()
        if batch:
            cursor.executemany(sql, batch)
            count += len(batch)
    return count


def _replica_role(cursor) -> bool:
    try:
        with transaction.atomic():  # a savepoint: a refused SET must not abort the import
            cursor.execute("SET LOCAL session_replication_role = replica")
        return True
    except DatabaseError:
        return False


def lock_key_share(table: str, where: str, params: Sequence) -> None:
    """Lock rows against deletion (and key changes) until the transaction ends (PostgreSQL)."""
    if connection.vendor != "postgresql":
        return  # SQLite serializes writers: nobody can delete while the import holds the lock
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {connection.ops.quote_name(table)} WHERE {where} FOR KEY SHARE", params)
