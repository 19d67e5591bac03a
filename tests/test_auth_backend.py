"""The login backend reads a session's user with one plain statement (evalsite.auth_backends) and
gives what Django's ModelBackend gives: the same user, field for field; nobody for an unknown or
malformed id; nobody for an inactive user."""
from django.contrib.auth import BACKEND_SESSION_KEY, get_user_model
from django.contrib.auth.backends import ModelBackend
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from evalsite.auth_backends import UserBackend


def test_the_session_user_is_the_one_django_reads_field_for_field(db):
    user = get_user_model().objects.create_user(username="reader", password="pw-long-enough-1", email="r@example.org",
                                                first_name="Rosalind", is_staff=True)
    get_user_model().objects.filter(pk=user.pk).update(last_login=timezone.now())
    with CaptureQueriesContext(connection) as queries:
        mine = UserBackend().get_user(str(user.pk))
    assert len(queries) == 1
    theirs = ModelBackend().get_user(user.pk)
    fields = [f.attname for f in get_user_model()._meta.concrete_fields]
    assert [getattr(mine, f) for f in fields] == [getattr(theirs, f) for f in fields]
    assert mine.check_password("pw-long-enough-1") and mine.get_session_auth_hash() == theirs.get_session_auth_hash()
    assert mine._state.db == "default" and not mine._state.adding


def test_no_user_for_an_unknown_malformed_or_inactive_id(db):
    user = get_user_model().objects.create_user(username="gone", password="pw-long-enough-1", is_active=False)
    backend = UserBackend()
    assert backend.get_user(user.pk) is None  # inactive: Django's rule, user_can_authenticate
    assert backend.get_user(user.pk + 1000) is None
    assert backend.get_user("not a number") is None


def test_a_logged_in_browser_is_recognised_and_a_deactivated_one_is_logged_out(db, client):
    user = get_user_model().objects.create_user(username="annie", password="pw-long-enough-1")
    answer = client.post(reverse("login"), {"username": "annie", "password": "pw-long-enough-1"})
    assert answer.status_code == 302 and client.session[BACKEND_SESSION_KEY] == "evalsite.auth_backends.UserBackend"
    assert client.get("/").status_code == 200
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    assert client.get("/").status_code == 302  # to the login page
