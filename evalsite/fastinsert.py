"""Bulk row insertion for large imports: PostgreSQL COPY through psycopg 3, and a plain
``executemany`` elsewhere. Both skip model instantiation, which dominates ``bulk_create``
at a few hundred thousand rows. Rows are tuples already in database form (JSON as text).

With ``references_checked=True`` the caller promises that every foreign key in the rows was
looked up in this transaction and is locked against deletion (``lock_key_share``) before it
commits, after checking the rows are still there if it locks them only at the end. On
PostgreSQL the per-row foreign-key triggers are then skipped for the COPY
(``session_replication_role = replica``, which needs a role allowed to set it; without that
privilege the insert simply runs with the triggers). Unique constraints are indexes, not
triggers, and are enforced either way. At 250,000 rows the triggers cost more than the COPY.
"""
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from django.db import DatabaseError as DjangoDatabaseError
from django.db import connection

try:
    from psycopg import Error as DatabaseError
except ImportError:  # an install without PostgreSQL support: no COPY, nothing to catch
    DatabaseError = ()  # type: ignore[assignment,misc]

BATCH_ROWS = 5000


def insert_rows(table: str, columns: Sequence[str], rows: Iterable[tuple], *, references_checked: bool = False) -> int:
    """Insert ``rows`` (tuples in the order of ``columns``); returns how many."""
    with RowWriter(table, columns, references_checked=references_checked) as out:
        for row in rows:
            out.write(row)
    return out.count


def _executemany(table: str, columns: Sequence[str], rows: list[tuple]) -> None:
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    sql = f"INSERT INTO {connection.ops.quote_name(table)} ({cols}) VALUES ({', '.join(['%s'] * len(columns))})"
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _copy_sql(table: str, columns: Sequence[str]) -> str:
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    return f"COPY {connection.ops.quote_name(table)} ({cols}) FROM STDIN"


def lock_key_share(table: str, where: str, params: Sequence) -> None:
    """Lock rows against deletion (and key changes) until the transaction ends (PostgreSQL)."""
    if connection.vendor != "postgresql":
        return  # SQLite serializes writers: nobody can delete while the import holds the lock
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {connection.ops.quote_name(table)} WHERE {where} FOR KEY SHARE", params)


@contextmanager
def references_checked() -> Iterator[None]:
    """Statements run in the block (inside a transaction) skip the per-row foreign-key triggers on
    PostgreSQL where the role may, on the caller's promise as for ``insert_rows(references_checked=True)``:
    every row they write references rows of this transaction or rows locked (``lock_key_share``).
    For an ``INSERT ... SELECT`` of hundreds of thousands of rows, whose deferred checks would
    otherwise run one by one at COMMIT."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        allowed = _replica_role_allowed(cursor.cursor)
        if allowed:
            cursor.execute("SET LOCAL session_replication_role = replica")
    yield
    if allowed:  # after an error the transaction is rolled back, and the setting with it
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL session_replication_role = origin")


class InsertFailed(Exception):
    """The database refused rows of a bulk insert (a constraint, a value out of range); the
    message is the database's. The transaction must be rolled back."""


class RowWriter:
    """Rows inserted one at a time as the caller produces them (a context manager, used inside
    a transaction).

    On PostgreSQL the rows go into a COPY that the server consumes while Python goes on
    validating the next lines, so the two cores work at once; elsewhere they are inserted in
    batches. A COPY holds the connection: ``pause()`` ends the running one so the caller may
    query (to create a user a later row needs, say), and the next ``write`` starts another.
    Leaving the block on an exception abandons the COPY in progress; rows already inserted
    stay until the caller's transaction rolls back. A refused row raises ``InsertFailed``.
    ``references_checked`` as for ``insert_rows``.
    """

    def __init__(self, table: str, columns: Sequence[str], *, references_checked: bool = False):
        self.table, self.columns, self.references_checked = table, tuple(columns), references_checked
        self.count = 0
        self._postgres = connection.vendor == "postgresql"
        self._batch: list[tuple] = []
        self._copy_cm = self._copy = self._cursor = None
        self._replica_allowed: bool | None = None  # asked once per writer

    def __enter__(self) -> "RowWriter":
        if not connection.in_atomic_block:
            raise RuntimeError("RowWriter runs inside a transaction (transaction.atomic)")
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.pause()
        elif self._copy_cm is not None:
            try:  # tell the server the COPY failed; the caller's error is the one that matters
                self._copy_cm.__exit__(exc_type, exc, tb)
            except Exception:  # noqa: BLE001, S110 - the transaction is rolled back either way
                pass
            self._copy_cm = self._copy = None
            self._cursor.close()

    def write(self, row: tuple) -> None:
        self.count += 1
        if not self._postgres:
            self._batch.append(row)
            if len(self._batch) >= BATCH_ROWS:
                self._flush_batch()
            return
        try:
            if self._copy is None:
                self._start()
            self._copy.write_row(row)
        except DatabaseError as exc:
            raise InsertFailed(str(exc).strip()) from exc

    def _start(self) -> None:
        connection.ensure_connection()
        self._cursor = connection.connection.cursor()
        if self.references_checked:
            if self._replica_allowed is None:
                self._replica_allowed = _replica_role_allowed(self._cursor)
            if self._replica_allowed:
                self._cursor.execute("SET LOCAL session_replication_role = replica")
        self._copy_cm = self._cursor.copy(_copy_sql(self.table, self.columns))
        self._copy = self._copy_cm.__enter__()

    def pause(self) -> None:
        """Finish the rows written so far, so the connection is free until the next ``write``."""
        if not self._postgres:
            self._flush_batch()
            return
        if self._copy_cm is None:
            return
        try:
            self._copy_cm.__exit__(None, None, None)
            if self._replica_allowed and self.references_checked:
                self._cursor.execute("SET LOCAL session_replication_role = origin")
        except DatabaseError as exc:
            raise InsertFailed(str(exc).strip()) from exc
        finally:
            self._copy_cm = self._copy = None
            self._cursor.close()

    def _flush_batch(self) -> None:
        if self._batch:
            try:
                _executemany(self.table, self.columns, self._batch)
            except DjangoDatabaseError as exc:
                raise InsertFailed(str(exc).strip()) from exc
            self._batch = []


def _replica_role_allowed(cursor) -> bool:
    """Whether this role may skip foreign-key triggers (``session_replication_role``): asked of
    PostgreSQL 15+ directly, tried inside a savepoint on older servers."""
    if cursor.connection.info.server_version >= 150000:
        cursor.execute("SELECT has_parameter_privilege('session_replication_role', 'SET')")
        return bool(cursor.fetchone()[0])
    cursor.execute("SAVEPOINT evalsite_replica")
    try:
        cursor.execute("SET LOCAL session_replication_role = replica")
    except DatabaseError:  # no privilege: keep the triggers
        cursor.execute("ROLLBACK TO SAVEPOINT evalsite_replica")
        cursor.execute("RELEASE SAVEPOINT evalsite_replica")
        return False
    cursor.execute("SET LOCAL session_replication_role = origin")
    cursor.execute("RELEASE SAVEPOINT evalsite_replica")
    return True


ANALYZED_TABLES = ("annotation_case", "annotation_criterion", "annotation_response", "annotation_label",
                   "grading_judgment", "grading_adjudication")
SQLITE_ANALYSIS_LIMIT = 1000  # rows looked at per index: approximate statistics in milliseconds


def tables_analyze(tables: Sequence[str] = ANALYZED_TABLES) -> None:
    """Refresh the query planner's statistics after a bulk import.

    Without them SQLite (which keeps none until ANALYZE runs) reads a response's labels through
    the project index, every label of the project, instead of the response index: 37 ms instead
    of 0.3 ms per adjudication or side-by-side page at 2,750 responses. PostgreSQL's autovacuum
    would catch up eventually; doing it now makes the first pages after an import fast too."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"ANALYZE {', '.join(tables)}")
        elif connection.vendor == "sqlite":
            cursor.execute(f"PRAGMA analysis_limit = {SQLITE_ANALYSIS_LIMIT}")
            for table in tables:
                cursor.execute(f"ANALYZE {table}")
