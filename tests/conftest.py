"""Shared fixtures: a user factory and the small test bundle imported into the database, and what
keeps every test independent of the others (``make test`` runs them in a random order, in two
processes): each test has its own folders for job files and rate-limit state and an empty cache,
and the run names its random seed at the start and at the end so a failure can be replayed."""
import pytest

from tests.bundles import write_bundle


def _seed_line(config) -> str | None:
    seed = getattr(config.option, "randomly_seed", None)
    if seed is None or hasattr(config, "workerinput"):  # pytest-randomly off, or an xdist worker
        return None
    return f"Using --randomly-seed={seed} (replay this order: make test PYTEST_ARGS=--randomly-seed={seed})"


def pytest_sessionstart(session):
    line = _seed_line(session.config)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if line and reporter is not None:
        reporter.write_line(line)


def pytest_terminal_summary(terminalreporter, config):
    line = _seed_line(config)
    if line:
        terminalreporter.write_line(line)


def _sql_flush_deleting_rows(original):
    """PostgreSQL's flush as one ``DELETE`` per table instead of one ``TRUNCATE`` of every table: a
    TRUNCATE gives each table (and its indexes) new files, which costs a second or more however few
    rows a test left, after every transactional test (``transactional_db``, every live-server test).
    The foreign keys Django makes are deferred, so the tables empty in any order within the flush's
    transaction. A flush that resets sequences or cascades to tables outside the list keeps TRUNCATE."""
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return original(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return ["SET CONSTRAINTS ALL DEFERRED;",
                *(f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};" for table in tables)]
    return sql_flush


@pytest.fixture(scope="session", autouse=True)
def _flush_deletes_rows_on_postgresql():
    from django.db import connections

    if connections["default"].vendor != "postgresql":
        yield
        return
    from django.db.backends.postgresql.operations import DatabaseOperations

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DatabaseOperations, "sql_flush", _sql_flush_deleting_rows(DatabaseOperations.sql_flush))
        yield


# PostgreSQL keeps a deleted or rolled-back row until a VACUUM, and this machine's server runs no
# autovacuum: every test's rows stay in the tables' files, so each later scan, and each flush
# above, reads more of them (a count of an empty table of judgments took 35 ms after a thousand
# tests, 0.4 ms after a VACUUM). Each process vacuums its test database after every
# VACUUM_EVERY tests that used it (about 0.1-0.4 s each time).
VACUUM_EVERY = 20
_DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"}
_used_database = [0]


@pytest.fixture(autouse=True)
def _vacuum_now_and_then(request, django_db_blocker):
    yield  # torn down after the test's own database fixtures: its transaction is over, its flush done
    if not (_DATABASE_FIXTURES & set(request.fixturenames) or request.node.get_closest_marker("django_db")):
        return
    _used_database[0] += 1
    if _used_database[0] % VACUUM_EVERY:
        return
    from django.db import connections

    connection = connections["default"]
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("VACUUM")


@pytest.fixture(autouse=True)
def _test_of_its_own(settings, tmp_path):
    """Nothing a test leaves behind reaches another: job files and the file-based rate-limit state
    go under this test's tmp_path instead of the shared var/ (two xdist workers, or two checkouts,
    would share it; a folder a module's fixture chose is left alone), and the local-memory cache
    starts empty (cached reports are keyed by ids that the next test's database hands out again)."""
    from pathlib import Path

    from django.core.cache import cache

    shared = Path(settings.VAR_DIR)
    for name, folder in (("EVALSITE_JOBS_DIR", "jobs"), ("EVALSITE_RATE_LIMIT_DIR", "ratelimits")):
        if Path(getattr(settings, name)).is_relative_to(shared):
            setattr(settings, name, tmp_path / folder)
    cache.clear()


@pytest.fixture(autouse=True)
def _celery_app_stays_the_sites():
    """A test that creates a Celery app (a broker test's client) must not leave it as this thread's
    current app: the site's shared tasks resolve through it, so every later test of the process
    would send them to a broker instead of running them eagerly (``set_as_current=False``)."""
    from celery import current_app

    from evalsite.celery import app

    yield
    left = current_app._get_current_object()
    app.set_current()  # one offender, one error: the tests after it run as they would
    assert left is app, f"this test left the Celery app {left.main!r} current"


@pytest.fixture
def mini_bundle(tmp_path):
    return write_bundle(tmp_path / "bundle")


@pytest.fixture
def mini_project(db, mini_bundle):
    from annotation.models import Project
    from grading.bundles import bundle_import

    bundle_import(path=mini_bundle)
    return Project.objects.get(slug="mini")
