"""fastinsert.RowWriter on the real databases: rows stream in, a pause frees the connection and
puts the foreign-key triggers back, an error abandons only the rows of its savepoint, a refused
row is reported as InsertFailed, and a role that may not skip the triggers still inserts; statements
of a ``references_checked`` block (an import's history rows) leave no foreign-key check for COMMIT."""
import pytest
from django.db import IntegrityError, connection, transaction

from evalsite.fastinsert import InsertFailed, RowWriter, insert_rows, references_checked


@pytest.fixture
def table(db):
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE fastinsert_probe (id integer PRIMARY KEY, name text NOT NULL)")
    yield "fastinsert_probe"


def _rows():
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, name FROM fastinsert_probe ORDER BY id")
        return cursor.fetchall()


def _setting(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW {name}")
        return cursor.fetchone()[0]


def test_rows_written_around_a_pause_all_arrive(table):
    with RowWriter(table, ("id", "name"), references_checked=True) as out:
        out.write((1, "a"))
        out.write((2, "tab\there, newline\nthere, backslash \\"))
        out.pause()
        assert _rows()[:1] == [(1, "a")]  # the connection is free, the rows are in
        if connection.vendor == "postgresql":
            assert _setting("session_replication_role") == "origin"
        out.write((3, "c"))
    assert out.count == 3
    assert _rows() == [(1, "a"), (2, "tab\there, newline\nthere, backslash \\"), (3, "c")]
    if connection.vendor == "postgresql":
        assert _setting("session_replication_role") == "origin"


def test_an_error_inside_abandons_the_rows_of_its_savepoint_only(table):
    insert_rows(table, ("id", "name"), [(1, "kept")])
    with pytest.raises(ValueError):
        with transaction.atomic(), RowWriter(table, ("id", "name")) as out:
            out.write((2, "gone"))
            out.pause()
            out.write((3, "gone too"))
            raise ValueError("a bad line")
    assert _rows() == [(1, "kept")]
    insert_rows(table, ("id", "name"), [(4, "after")])  # the connection goes on working
    assert _rows() == [(1, "kept"), (4, "after")]


def test_a_refused_row_is_insert_failed(table):
    with pytest.raises(InsertFailed, match="(?i)unique|duplicate"):
        with transaction.atomic(), RowWriter(table, ("id", "name")) as out:
            for i in range(3):
                out.write((i, "x"))
            out.write((1, "the same id again"))
    assert _rows() == []


def test_it_refuses_to_run_outside_a_transaction(transactional_db):
    assert not connection.in_atomic_block
    with pytest.raises(RuntimeError, match="inside a transaction"):
        with RowWriter("fastinsert_never_created", ("id",)):
            pass


def _as_new_role(*, may_set_replica_role: bool) -> None:
    """Go on as a fresh role that owns nothing (created inside the test, so rolled back)."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE ROLE evalsite_probe_role NOLOGIN")
        cursor.execute("GRANT ALL ON fastinsert_probe TO evalsite_probe_role")
        if may_set_replica_role:
            cursor.execute("GRANT SET ON PARAMETER session_replication_role TO evalsite_probe_role")
        cursor.execute("SET LOCAL ROLE evalsite_probe_role")


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_role_that_may_not_skip_triggers_inserts_with_them(table):
    _as_new_role(may_set_replica_role=False)
    out = RowWriter(table, ("id", "name"), references_checked=True)
    with out:
        out.write((1, "a"))
        out.pause()
        out.write((2, "b"))
    assert out._replica_allowed is False
    assert _rows() == [(1, "a"), (2, "b")]
    assert _setting("session_replication_role") == "origin"
    with connection.cursor() as cursor:
        cursor.execute("RESET ROLE")


@pytest.mark.skipif("connection.vendor != 'postgresql' or connection.pg_version < 150000")
def test_a_role_granted_the_setting_skips_them(table):
    _as_new_role(may_set_replica_role=True)
    out = RowWriter(table, ("id", "name"), references_checked=True)
    with out:
        out.write((1, "a"))
    assert out._replica_allowed is True
    assert _rows() == [(1, "a")] and _setting("session_replication_role") == "origin"
    with connection.cursor() as cursor:
        cursor.execute("RESET ROLE")


@pytest.fixture
def parent_and_child(db):
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE fastinsert_parent (id integer PRIMARY KEY)")
        cursor.execute("CREATE TABLE fastinsert_child (id integer PRIMARY KEY, parent_id integer"
                       " REFERENCES fastinsert_parent (id) DEFERRABLE INITIALLY DEFERRED)")


def _insert_orphan(child_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO fastinsert_child (id, parent_id) SELECT %s, 999", [child_id])


def _check_deferred() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # runs the checks deferred so far, as COMMIT would
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_statements_of_a_references_checked_block_queue_no_foreign_key_checks(parent_and_child):
    """Inside the block an INSERT ... SELECT leaves no deferred check for COMMIT (the caller vouches for
    its references; here, to show it, one that is wrong); outside it the same row is checked."""
    with references_checked():
        assert _setting("session_replication_role") == "replica"
        _insert_orphan(1)
    assert _setting("session_replication_role") == "origin"
    _check_deferred()  # nothing was queued
    with pytest.raises(IntegrityError, match="(?i)foreign key"):
        with transaction.atomic():
            _insert_orphan(2)
            _check_deferred()


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_references_checked_block_of_a_role_that_may_not_keeps_the_checks(parent_and_child):
    with connection.cursor() as cursor:
        cursor.execute("CREATE ROLE evalsite_probe_role NOLOGIN")
        cursor.execute("GRANT ALL ON fastinsert_parent, fastinsert_child TO evalsite_probe_role")
        cursor.execute("SET LOCAL ROLE evalsite_probe_role")
    with references_checked():
        assert _setting("session_replication_role") == "origin"
    with pytest.raises(IntegrityError, match="(?i)foreign key"):
        with transaction.atomic(), references_checked():
            _insert_orphan(3)
            _check_deferred()
    with connection.cursor() as cursor:
        cursor.execute("RESET ROLE")


@pytest.mark.skipif("connection.vendor == 'postgresql'")
def test_a_references_checked_block_elsewhere_changes_nothing(parent_and_child):
    with references_checked():
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO fastinsert_parent (id) VALUES (1)")
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM fastinsert_parent")
        assert cursor.fetchall() == [(1,)]
