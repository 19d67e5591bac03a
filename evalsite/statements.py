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
from collections.abc import Sequence

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import DEFERRED


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


def model_from_row(model, columns: Sequence[str], values: Sequence, alias: str = DEFAULT_DB_ALIAS):
    """The instance Django's ORM would build from a row read by a plain statement: ``values`` are
    the raw values of ``columns`` (attribute names of ``model``'s concrete fields, in any order),
    converted by the converters the ORM's compiler applies to the same columns (the backend's,
    then the field's; a foreign key's are those of the field it points to), and handed to
    ``from_db`` as a query would hand them (names and values in the model's field order, the
    fields not in ``columns`` deferred). The converters of each (model, columns) are looked up
    once per connection: a request that builds thirty labels pays for the conversion, not for
    finding it."""
    db = connections[alias]
    plans = db.__dict__.setdefault("_evalsite_row_plans", {})
    key = (model, tuple(columns))
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = _row_plan(db, model, key[1])
    names, fields = plan
    if len(values) != len(columns):
        raise ValueError(f"{len(values)} values for {len(columns)} columns of {model.__name__}")
    row = []
    for i, column, converters in fields:
        if i < 0:
            row.append(DEFERRED)
            continue
        value = values[i]
        for converter in converters:
            value = converter(value, column, db)
        row.append(value)
    return model.from_db(alias, names, row)


def _row_plan(db, model, columns: tuple[str, ...]) -> tuple[list[str], tuple]:
    """The names of ``columns`` in the model's field order, and for each concrete field of
    ``model``, in that order: where its value is in a row of ``columns`` (-1 when the row does not
    have it), its column as a query selects it and its converters."""
    where = {name: i for i, name in enumerate(columns)}
    unknown = set(where) - {f.attname for f in model._meta.concrete_fields}
    if unknown or len(where) != len(columns):
        problem = f"no column(s) {sorted(unknown)}" if unknown else "a column named twice"
        raise ValueError(f"{model.__name__} has {problem}: {list(columns)}")
    fields = []
    for field in model._meta.concrete_fields:
        column = field.get_col(model._meta.db_table)  # as the compiler selects it (a key: its target's type)
        converters = tuple(db.ops.get_db_converters(column) + column.get_db_converters(db)) \
            if field.attname in where else ()
        fields.append((where.get(field.attname, -1), column, converters))
    return [f.attname for f in model._meta.concrete_fields if f.attname in where], tuple(fields)
