"""Helpers for the report tests: extra judges and judgments on the ``mini`` project."""
import pytest

from annotation.models import Criterion, Response
from grading.models import Judge, Judgment


def add_judgments(judge: Judge, rows: list[tuple]) -> None:
    """rows: (response external id, criterion external id, sample, verdict, option, value, valid)."""
    responses = {r.external_id: r for r in Response.objects.filter(project=judge.project)}
    criteria = {c.external_id: c for c in Criterion.objects.filter(project=judge.project)}
    Judgment.objects.bulk_create(
        Judgment(
            judge=judge, response=responses[r], criterion=criteria[c], rubric_version=criteria[c].rubric_version,
            sample=s, condition=judge.condition, verdict=v, option_label=o, value=x, valid=ok,
        )
        for r, c, s, v, o, x, ok in rows
    )


@pytest.fixture
def second_judge(mini_project):
    """judge-b, whose own model is model-a (a target), anonymized, on r1 and r2."""
    judge = Judge.objects.create(project=mini_project, name="judge-b", backend="replay", model="model-a", condition="anonymized")
    add_judgments(judge, [
        ("r1", "c1-ecg", 0, "met", None, None, True),
        ("r1", "c1-call", 0, "met", None, None, True),
        ("r1", "c1-abx", 0, "not_met", None, None, True),
        ("r2", "c1-ecg", 0, "met", None, None, True),
        ("r2", "c1-call", 0, "not_met", None, None, True),
        ("r2", "c1-abx", 0, "not_met", None, None, True),
    ])
    return judge


@pytest.fixture(autouse=True)
def empty_cache():
    """The local-memory cache outlives each test's rolled-back database; start clean."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def staff_client(client, db, mini_project):
    """A staff user with the viewer role in ``mini`` (``is_staff`` alone grants nothing), logged in."""
    from django.contrib.auth import get_user_model

    from tests.roles import grant

    user = get_user_model().objects.create_user(username="researcher", password="pw-12345", is_staff=True)
    grant(user, mini_project, "viewer")
    client.force_login(user)
    return client
