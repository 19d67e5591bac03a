"""The session store (``SESSION_ENGINE``): Django's database sessions, read with one plain statement.

Every request of a logged-in browser (each labeling-page save, each API call made with the
session) loads its session before anything else; Django's ``db`` store builds that one-row query
through the ORM, which costs several times what the query does. This store reads the same row the
same way (the key, not expired; a statement PostgreSQL prepares once, ``evalsite.statements``) and
leaves everything else (saving, creating, deleting, the async variants) to Django's.
"""
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connections, router
from django.utils import timezone

from .statements import statement_cursor


class SessionStore(DatabaseSessionStore):
    def _get_session_from_db(self):
        alias = router.db_for_read(self.model)
        db = connections[alias]
        with statement_cursor(alias) as cursor:
            cursor.execute(
                f"SELECT session_data FROM {db.ops.quote_name(self.model._meta.db_table)}"
                " WHERE session_key = %s AND expire_date > %s",
                [self.session_key, db.ops.adapt_datetimefield_value(timezone.now())],
            )
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        # The row as Django's query gives it, its expiry deferred (the caller reads the data only).
        return self.model.from_db(alias, ["session_key", "session_data"], [self.session_key, row[0]])
