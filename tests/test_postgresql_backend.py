"""The PostgreSQL engine (evalsite.postgresql): a connection that worked a moment ago skips
Django's ``SELECT 1`` health check; one the server ended is still replaced before the request uses
it, and any other connection is checked as Django checks it."""
import select

import pytest
from django.db import connection

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the PostgreSQL engine")


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def wrapper(db):
    """A second connection to the test database, as a production web process holds it: kept
    across requests, health-checked, its health checks counted, on a stand-in clock."""
    other = connection.copy()
    other.settings_dict["CONN_HEALTH_CHECKS"] = True
    other.settings_dict["CONN_MAX_AGE"] = 60
    other.clock = Clock()
    checks = []
    is_usable = other.is_usable
    other.is_usable = lambda: checks.append(1) or is_usable()
    other.checks = checks
    yield other
    other.close()


def request(wrapper, sql="SELECT pg_backend_pid()"):
    """One request's life as Django's request signals give it to a connection."""
    wrapper.close_if_unusable_or_obsolete()  # request_started
    try:
        with wrapper.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchone()[0]
    finally:
        wrapper.close_if_unusable_or_obsolete()  # request_finished


def test_the_settings_select_it():
    assert connection.settings_dict["ENGINE"] == "evalsite.postgresql"
    from django.db import connections

    assert type(connections["default"]).__module__ == "evalsite.postgresql.base"


def test_a_connection_used_a_moment_ago_is_not_checked(wrapper):
    pid = request(wrapper)  # opens the connection: nothing to check
    wrapper.clock.now += 0.5
    assert request(wrapper) == pid
    wrapper.clock.now += 0.9
    assert request(wrapper) == pid
    assert wrapper.checks == []


def test_a_connection_idle_for_longer_is_checked_as_django_checks_it(wrapper):
    pid = request(wrapper)
    wrapper.clock.now += 1.0
    assert request(wrapper) == pid
    assert wrapper.checks == [1]
    wrapper.clock.now += 0.2  # the checked request worked: the next one follows it closely
    assert request(wrapper) == pid
    assert wrapper.checks == [1]


def test_a_request_that_used_no_database_does_not_make_it_recent(wrapper):
    request(wrapper)
    wrapper.clock.now += 0.8
    wrapper.close_if_unusable_or_obsolete()  # a request that never used the connection
    wrapper.close_if_unusable_or_obsolete()
    wrapper.clock.now += 0.8
    request(wrapper)
    assert wrapper.checks == [1]


def test_a_connection_the_server_ended_is_replaced_before_the_request_uses_it(wrapper):
    pid = request(wrapper)
    with connection.cursor() as cursor:  # an administrator's termination (a restart says the same)
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert cursor.fetchone()[0] is True
    poll = select.poll()
    poll.register(wrapper.connection.pgconn.socket, select.POLLIN)
    assert poll.poll(10_000), "the server's goodbye did not arrive within 10 s"
    wrapper.clock.now += 0.1
    new = request(wrapper)  # no error: the dead connection was closed and a new one opened
    assert new != pid
    assert wrapper.checks == [1]


def test_a_database_error_is_checked_as_the_request_ends(wrapper):
    """Django checks a connection whose request failed as that request ends; the connection it
    keeps is then known to work, and the next request close behind needs no second check."""
    pid = request(wrapper)
    with pytest.raises(Exception, match="no_such_table"):
        request(wrapper, "SELECT * FROM no_such_table")
    assert wrapper.checks == [1]
    wrapper.clock.now += 0.1
    assert request(wrapper) == pid
    assert wrapper.checks == [1]
