"""The site's cache backend (evalsite.cache): Django's database cache with a one-statement ``get``
and ``set``. It answers what Django's answers for the same calls, keeps the table within
MAX_ENTRIES + 1 entries as Django's does (it culls when a new key comes in, Django's on every set),
and a throttled API request spends two statements on it."""
import pytest
from django.core.cache.backends.db import DatabaseCache as DjangoDatabaseCache
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext, override_settings

from evalsite.cache import DatabaseCache

OURS, DJANGOS = "evalsite_test_cache", "evalsite_test_cache_django"


def _rows(table: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT cache_key FROM {table} ORDER BY cache_key")
        return [key for (key,) in cursor.fetchall()]


@pytest.fixture
def tables(transactional_db):
    """Both backends on tables of their own, outside any transaction (as a request uses them)."""
    settings = {name: {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": name}
                for name in (OURS, DJANGOS)}
    with override_settings(CACHES=settings):
        call_command("createcachetable", verbosity=0)
    yield
    with connection.cursor() as cursor:
        for name in (OURS, DJANGOS):
            cursor.execute(f"DROP TABLE {name}")


def _pair(**options):
    return DatabaseCache(OURS, {"OPTIONS": options}), DjangoDatabaseCache(DJANGOS, {"OPTIONS": options})


def test_it_answers_what_djangos_answers(tables):
    ours, djangos = _pair()
    for cache in (ours, djangos):
        cache.set("kept", {"history": [1.5, 2.5]}, 60)
        cache.set("kept", {"history": [3.5]}, 60)  # overwritten
        cache.set("gone", "x", 0)  # expired at once
        cache.set("forever", [1], None)
    for key in ("kept", "gone", "forever", "never-set"):
        assert ours.get(key, "default") == djangos.get(key, "default")
    assert ours.get("kept") == {"history": [3.5]} and ours.get("gone", "default") == "default"
    assert _rows(OURS) == _rows(DJANGOS) == [":1:forever", ":1:kept"]  # the expired entry was deleted on reading


def test_the_table_stays_within_max_entries_as_djangos_does(tables):
    ours, djangos = _pair(MAX_ENTRIES=3, CULL_FREQUENCY=2)
    for i in range(8):
        for cache in (ours, djangos):
            cache.set(f"k{i}", i, 60)
            cache.set(f"k{i}", i + 100, 60)  # a key that is there: the table does not grow
            assert len(_rows(cache._table)) <= 4
            assert cache.get(f"k{i}") == i + 100
    assert len(_rows(OURS)) < 8  # entries were culled


def test_a_get_and_a_set_of_a_key_that_is_there_are_one_statement_each(tables):
    ours, _ = _pair()
    ours.set("k", [1.0], 60)
    with CaptureQueriesContext(connection) as queries:
        ours.set("k", [1.0, 2.0], 60)
        assert ours.get("k") == [1.0, 2.0]
    assert len(queries) == 2, [q["sql"] for q in queries.captured_queries]


class Pickled:
    """A value that counts how often it is pickled."""
    times = 0

    def __reduce__(self):
        Pickled.times += 1
        return (Pickled, ())


def test_a_new_key_is_encoded_once_and_inserted_after_the_count(tables):
    """A report's result can pickle to a hundred megabytes: a new key's value is encoded once for
    the update that finds nothing and the insert after it; the insert counts the table first."""
    ours, _ = _pair()
    Pickled.times = 0
    with CaptureQueriesContext(connection) as queries:
        ours.set("new", Pickled(), 60)
    assert Pickled.times == 1
    statements = [q["sql"].split()[0].upper() for q in queries.captured_queries]
    assert statements == ["UPDATE", "SELECT", "INSERT"], statements
    assert isinstance(ours.get("new"), Pickled)
    ours.set("new", [2], 60)  # there now: one update
    assert ours.get("new") == [2] and _rows(OURS) == [":1:new"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite stores a key of any length")
def test_a_write_the_database_refuses_is_dropped_as_djangos_is(tables):
    """A key longer than the column (Django warns of it) fails its insert: the cache goes on
    without the entry, as Django's does, and no error reaches the caller."""
    from django.core.cache.backends.base import CacheKeyWarning

    long_key = "k" * 300
    for cache in _pair():
        with pytest.warns(CacheKeyWarning):
            cache.set(long_key, [1], 60)
        with pytest.warns(CacheKeyWarning):
            assert cache.get(long_key, "default") == "default"
    assert _rows(OURS) == _rows(DJANGOS) == []


def test_inside_a_transaction_a_set_is_djangos(tables):
    """Django's set guards its write with a savepoint, so a failed write leaves the caller's
    transaction usable; inside one, the set is Django's."""
    ours, _ = _pair()
    with transaction.atomic():
        ours.set("k", "v", 60)
        ours.set("k", "w", 60)
        assert ours.get("k") == "w"
    assert ours.get("k") == "w"


def test_a_throttled_batch_spends_two_statements_on_the_cache(tables, client):
    """Through the batch API with the database cache, as the production settings have it: the
    user throttle reads its history and writes it back, one statement each."""
    from annotation.selectors import criteria_for_response
    from tests.annotation.conftest import build_study, first_assignment

    build_study(n_cases=1, n_criteria=3, with_ordinal=False)
    assignment = first_assignment("a1")
    criteria = criteria_for_response(response=assignment.response)
    with override_settings(CACHES={"default": {"BACKEND": "evalsite.cache.DatabaseCache", "LOCATION": OURS}}):
        client.force_login(assignment.annotator)
        counts = []
        for verdict in ("met", "not_met"):
            body = [{"criterion": c.pk, "verdict": verdict, "revision": 0 if verdict == "met" else 1} for c in criteria]
            with CaptureQueriesContext(connection) as queries:
                answer = client.post(f"/api/assignments/{assignment.pk}/labels/", body, content_type="application/json")
            assert answer.status_code == 200, answer.content
            counts.append(sum(OURS in (q["sql"] or "") for q in queries.captured_queries))
    assert counts[1] == 2, counts  # the first request of a user also creates its entry


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_the_cache_table_is_unlogged_on_postgresql(tables):
    """Losing cached reports and throttle histories in a crash is acceptable; a WAL flush on every
    API request for them is not (grading migration 0014)."""
    import importlib

    migration = importlib.import_module("grading.migrations.0014_cache_table_unlogged")

    def persistence() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SELECT relpersistence FROM pg_class WHERE relname = %s", [OURS])
            return cursor.fetchone()[0]

    with override_settings(CACHES={"default": {"BACKEND": "evalsite.cache.DatabaseCache", "LOCATION": OURS}}):
        with connection.schema_editor() as editor:
            migration.persistence("UNLOGGED")(None, editor)
        assert persistence() == "u"
        ours, _ = _pair()
        ours.set("k", 1, 60)
        assert ours.get("k") == 1
        with connection.schema_editor() as editor:
            migration.persistence("LOGGED")(None, editor)
        assert persistence() == "p"
