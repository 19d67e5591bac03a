"""A cursor for the statements every request runs (the session, the throttle's cache entry, the
label write service's read and write), which PostgreSQL can then parse and plan once.

Django's PostgreSQL cursors bind parameters on the client: the values are written into the SQL
text, so every execution is a new statement for the server to parse and plan. On PostgreSQL this
cursor lets the server bind them (psycopg's ``Cursor``): the text stays the same from one call to
the next, and with ``prepare_threshold`` in the database's OPTIONS (the production settings set
it; unset, as Django leaves it for connection poolers, nothing is prepared) psycopg prepares it
once per connection. A statement written for it names the type of any parameter PostgreSQL cannot
infer (a bare ``%s`` in a select list). Queries through it are logged and counted like any other
(a prepared one's text is not repeated in the log: psycopg does not send it again). Elsewhere it
is Django's own cursor.
"""
from django.db import DEFAULT_DB_ALIAS, connections


def statement_cursor(alias: str = DEFAULT_DB_ALIAS):
    db = connections[alias]
    if db.vendor != "postgresql":
        return db.cursor()
    import psycopg  # lazy: loaded by Django's PostgreSQL backend already; a SQLite deployment never needs it

    db.close_if_health_check_failed()
    db.ensure_connection()
    with db.wrap_database_errors:
        raw = psycopg.Cursor(db.connection)
    db.validate_thread_sharing()  # what Django's own cursor() checks and wraps, in its order
    return db.make_debug_cursor(raw) if db.queries_logged else db.make_cursor(raw)
