"""The session store (evalsite.sessions): it loads what Django's database store loads, a live
session's data, nothing for an expired or unknown key (which it then forgets), in one statement."""
from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore as DjangoSessionStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from evalsite.sessions import SessionStore


@pytest.fixture
def keys(db):
    live = SessionStore()
    live.update({"_auth_user_id": "7", "answer": [1, "two"]})
    live.create()
    expired = SessionStore()
    expired["answer"] = "old"
    expired.create()
    Session.objects.filter(session_key=expired.session_key).update(expire_date=timezone.now() - timedelta(seconds=1))
    return {"live": live.session_key, "expired": expired.session_key, "unknown": "x" * 32}


@pytest.mark.parametrize("which", ["live", "expired", "unknown"])
def test_it_loads_what_djangos_store_loads(keys, which):
    ours, djangos = SessionStore(keys[which]), DjangoSessionStore(keys[which])
    assert ours.load() == djangos.load()
    assert ours.session_key == djangos.session_key  # None for a missing session: the next save makes a new key
    if which == "live":
        assert ours.load() == {"_auth_user_id": "7", "answer": [1, "two"]}


def test_the_site_uses_it_in_one_statement(keys, settings):
    assert settings.SESSION_ENGINE == "evalsite.sessions"
    with CaptureQueriesContext(connection) as queries:
        SessionStore(keys["live"]).load()
    assert len(queries) == 1


def test_the_row_it_reads_is_the_stored_one(keys):
    session = SessionStore(keys["live"])._get_session_from_db()
    stored = Session.objects.get(session_key=keys["live"])
    assert (session.pk, session.session_data, session.expire_date) == (stored.pk, stored.session_data, stored.expire_date)
