"""Work split over forked processes that read the same database (the gold export's second core).

``fork_allowed()`` says whether the current database connection may be shared that way: not
inside a transaction (a child would not see its rows, nor its snapshot), not an in-memory SQLite
database (a child could not open it), and only where ``os.fork`` exists. ``Forked(work)`` runs
``work()`` in a child process after the parent's connections are closed; ``result()`` waits for
the child and returns what ``work`` returned (a JSON-able dict), or raises ``ForkedError`` with the
child's error. The child never runs the parent's exit handlers, and it closes its own connections
before it ends.

The child never talks over a connection it inherited: ``close_all`` closes only the connections
the parent sees from where it stands, and Django keeps a thread's connections in two places (plain
thread-local storage, and a context variable while an event loop runs in the thread). A parent
that has both (a test process driving Playwright sets an event loop in its main thread; its
earlier connection stays open in the other place) would otherwise hand that open socket to every
child, which then read each other's rows and end each other's session. So the child starts from
an empty set of connections and opens its own; the inherited ones are kept referenced, never
closed or finalized there (that would end the parent's session), until the child leaves by
``os._exit``.
"""
import gc
import os
import signal
import traceback
from collections.abc import Callable

import orjson
from asgiref.local import Local
from django.db import connection, connections

_INHERITED = []  # a child's inherited connection storage, kept alive until the child ends


class ForkedError(RuntimeError):
    """The work of a forked process failed; the message is the child's error."""


def fork_allowed() -> bool:
    if not hasattr(os, "fork") or connection.in_atomic_block:
        return False
    return not (connection.vendor == "sqlite" and connection.is_in_memory_db())


class Forked:
    def __init__(self, work: Callable[[], dict]):
        connections.close_all()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: do the work, send the result down the pipe, end without cleanup
            # Everything inherited is the parent's: out of the cycle collector's sight, so no
            # finalizer of a parent's object (a database connection's, say) ever runs here.
            gc.freeze()
            _forget_inherited_connections()
            os.close(read)
            status = 1
            try:
                try:
                    payload = {"result": work()}
                    status = 0
                except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
                    last = traceback.extract_tb(exc.__traceback__)[-1:]
                    where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
                    payload = {"error": f"{exc.__class__.__name__}: {exc}{where}"}
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(orjson.dumps(payload))
                connections.close_all()
            finally:
                os._exit(status)
        os.close(write)
        self.pid, self._read, self._reaped = pid, read, False

    def result(self) -> dict:
        with os.fdopen(self._read, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        self._reaped = True
        payload = orjson.loads(data) if data else {}
        if "result" not in payload:
            raise ForkedError(payload.get("error") or f"process {self.pid} ended ({os.waitstatus_to_exitcode(status)}) "
                                                      "without a result")
        return payload["result"]

    def kill(self) -> None:
        """Stop the child (the parent failed) and reap it; nothing to do once ``result`` has."""
        if self._reaped:
            return
        os.kill(self.pid, signal.SIGKILL)
        os.close(self._read)
        os.waitpid(self.pid, 0)
        self._reaped = True


def _forget_inherited_connections() -> None:
    """In a child: every alias opens a new connection on first use (see the module's docstring)."""
    _INHERITED.append(connections._connections)
    connections._connections = Local(connections.thread_critical)
