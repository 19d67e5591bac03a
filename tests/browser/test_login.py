"""A real browser logs in through the login form and lands on "My work"."""
from django.contrib.auth import get_user_model


def test_login_lands_on_my_work(page, login, transactional_db):
    get_user_model().objects.create_user(username="doc", password="pw-12345")
    login("doc", "pw-12345")
    assert page.locator("h1").inner_text() == "My work"
    assert "doc" in page.locator("header").inner_text()


def test_wrong_password_is_refused(page, login, transactional_db):
    get_user_model().objects.create_user(username="doc", password="pw-12345")
    login("doc", "wrong")
    assert "didn't match" in page.content()
