"""The login backend (``AUTHENTICATION_BACKENDS``): Django's ``ModelBackend``, with the user of a
session read by one plain statement.

Every request of a logged-in browser (each labeling-page save, each API call made with the
session) loads its user after its session; ``ModelBackend.get_user`` builds that one-row query
through the ORM, which costs more than the query does. This backend reads the same row by its
primary key (a statement PostgreSQL prepares once, ``evalsite.statements``), builds the user as
the ORM would and applies Django's own rule (``user_can_authenticate``: an inactive user is not
logged in). Logging in, passwords and permissions are Django's.
"""
import functools

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, connections

from .statements import model_from_row, statement_cursor


@functools.cache
def _user_select(vendor: str) -> tuple[str, tuple[str, ...]]:
    """The statement that reads one user by primary key, and the attribute names of its columns."""
    model = get_user_model()
    ops = connections[DEFAULT_DB_ALIAS].ops
    fields = model._meta.concrete_fields
    columns = ", ".join(ops.quote_name(f.column) for f in fields)
    pk = ops.quote_name(model._meta.pk.column)
    return (f"SELECT {columns} FROM {ops.quote_name(model._meta.db_table)} WHERE {pk} = %s",
            tuple(f.attname for f in fields))


class UserBackend(ModelBackend):
    def get_user(self, user_id):
        model = get_user_model()
        try:
            pk = model._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        db = connections[DEFAULT_DB_ALIAS]
        sql, names = _user_select(db.vendor)
        with statement_cursor() as cursor:
            cursor.execute(sql, [pk])
            row = cursor.fetchone()
        if row is None:
            return None
        user = model_from_row(model, names, row)
        return user if self.user_can_authenticate(user) else None
