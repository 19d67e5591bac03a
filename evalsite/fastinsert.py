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
import threading
from collections.abc import Iterable, Sequence

from django.db import connection

BATCH_ROWS = 5000


def insert_rows(table: str, columns: Sequence[str], rows: Iterable[tuple], *, references_checked: bool = False) -> int:
    if connection.vendor == "postgresql":
        connection.ensure_connection()
        return _copy_rows(connection.connection, _copy_sql(table, columns), rows, references_checked=references_checked)
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    count = 0
    with connection.cursor() as cursor:
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


def _copy_sql(table: str, columns: Sequence[str]) -> str:
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    return f"COPY {connection.ops.quote_name(table)} ({cols}) FROM STDIN"


def _copy_rows(raw, sql: str, rows: Iterable[tuple], *, references_checked: bool) -> int:
    """COPY ``rows`` on the psycopg connection ``raw`` (any thread), FK triggers skipped when
    the caller checked the references and the role may."""
    count = 0
    with raw.cursor() as cursor:
        replica = references_checked and _raw_replica_role(cursor)
        try:
            with cursor.copy(sql) as stream:
                for row in rows:
                    stream.write_row(row)
                    count += 1
        finally:
            if replica:
                cursor.execute("SET LOCAL session_replication_role = origin")
    return count


def lock_key_share(table: str, where: str, params: Sequence) -> None:
    """Lock rows against deletion (and key changes) until the transaction ends (PostgreSQL)."""
    if connection.vendor != "postgresql":
        return  # SQLite serializes writers: nobody can delete while the import holds the lock
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {connection.ops.quote_name(table)} WHERE {where} FOR KEY SHARE", params)


class PendingInsert:
    """An ``insert_rows`` running in a background thread on the *same* PostgreSQL connection
    (psycopg 3 connections may be shared between threads), so that the server inserts one
    file's rows while Python validates the next. The caller must not use the connection
    until ``wait()`` returns; ``wait()`` re-raises the thread's error.
    """

    def __init__(self, table: str, columns: Sequence[str], rows: list[tuple], *, references_checked: bool):
        self.count = 0
        self.error: BaseException | None = None
        if connection.vendor != "postgresql":  # SQLite connections stay in their thread
            self.count = insert_rows(table, columns, rows, references_checked=references_checked)
            self._thread = None
            return
        connection.ensure_connection()
        raw, sql = connection.connection, _copy_sql(table, columns)

        def copy() -> None:
            try:
                self.count = _copy_rows(raw, sql, rows, references_checked=references_checked)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller in wait()
                self.error = exc

        self._thread = threading.Thread(target=copy, name=f"copy-{table}", daemon=True)
        self._thread.start()

    def wait(self) -> int:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.error is not None:
            raise self.error
        return self.count


def _raw_replica_role(cursor) -> bool:
    cursor.execute("SAVEPOINT evalsite_replica")
    try:
        cursor.execute("SET LOCAL session_replication_role = replica")
    except Exception:  # noqa: BLE001 - no privilege: keep the triggers
        cursor.execute("ROLLBACK TO SAVEPOINT evalsite_replica")
        return False
    cursor.execute("RELEASE SAVEPOINT evalsite_replica")
    return True
