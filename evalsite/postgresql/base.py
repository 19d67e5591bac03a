"""Django's PostgreSQL backend, without a health-check round trip for a connection that worked a
moment ago.

With ``CONN_HEALTH_CHECKS`` (production) Django sends ``SELECT 1`` before the first statement of
every request that reuses a connection: one more round trip to the database server in each
labeling-page save, which on a busy machine costs as much as a statement (the server process has
to be woken for it). Here the check is left out when the connection finished a request without a
database error less than ``RECENTLY_USED`` seconds ago and the server has sent nothing since. An
idle session's server sends nothing unless it is ending the session: a restart, an administrator's
``pg_terminate_backend`` and an idle timeout each send an error and close the socket, which the
check sees at no cost (a poll of the socket, no round trip), so such a connection is still
replaced before the request uses it. Only a connection lost silently (a network dropped without a
word) within that second is found by its first statement instead. Any other connection gets
Django's ``SELECT 1``, as before. The settings select this engine for PostgreSQL.
"""
import select
import time

from django.db.backends.postgresql import base

# A second: what connection pools call the validation bypass window (HikariCP's is 0.5 s).
RECENTLY_USED = 1.0


class DatabaseWrapper(base.DatabaseWrapper):
    clock = staticmethod(time.monotonic)  # tests give a stand-in

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.good_at: float | None = None  # when a request last finished with this connection working

    def close_if_unusable_or_obsolete(self):
        # Called as each request starts and ends. A connection its request used (``health_check_done``:
        # checked or opened during it) without an error it could not recover from worked until now.
        used = self.connection is not None and self.health_check_done and not self.errors_occurred
        super().close_if_unusable_or_obsolete()
        if self.connection is None:
            self.good_at = None
        elif used:
            self.good_at = self.clock()

    def close_if_health_check_failed(self):
        # Called at every cursor: Django's own cheap conditions come first.
        if (
            self.connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and self.pool is None
            and self.good_at is not None
            and self.clock() - self.good_at < RECENTLY_USED
            and self.server_silent()
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def server_silent(self) -> bool:
        """Whether the idle connection's socket is open with nothing to read (no round trip)."""
        try:
            if self.connection.closed or self.connection.broken:
                return False
            poll = select.poll()
            poll.register(self.connection.pgconn.socket, select.POLLIN | select.POLLPRI)
            return not poll.poll(0)
        except Exception:  # noqa: BLE001 - a socket that cannot be polled is one to check the slow way
            return False
