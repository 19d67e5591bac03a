"""The set-up of the label-saving load test (``bench.load_labels``): a throw-away PostgreSQL database,
production settings on loopback, one blind project with a session per annotator, and the machine's
CPU pressure while the load runs."""
from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path
from urllib.parse import urlsplit

from bench.services import PG_ADMIN_URL, drop_database, fresh_database

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def loopback_only(url: str) -> None:
    host = urlsplit(url).hostname or ""
    if host not in LOOPBACK:
        raise SystemExit(f"load_labels runs against loopback only, not {host!r}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_pressure_total() -> int | None:
    """Microseconds some task waited for a CPU (Linux PSI), to show how contended the run was."""
    try:
        first = Path("/proc/pressure/cpu").read_text().splitlines()[0]
        return int(first.rsplit("total=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None


def cpu_pressure_since(before: int | None, seconds: float) -> str | None:
    after = cpu_pressure_total()
    if before is None or after is None or not seconds:
        return None
    return f"{100 * (after - before) / 1e6 / seconds:.0f}% of the time some task waited for a CPU"


class BenchDatabase:
    """A PostgreSQL database that exists only for the duration of the run (``bench.services``)."""

    def __init__(self, name: str):
        loopback_only(PG_ADMIN_URL)
        self.name = name
        self.url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name

    def __enter__(self):
        if fresh_database(self.name) is None:
            raise SystemExit(f"load_labels needs PostgreSQL at {PG_ADMIN_URL.rsplit('/', 1)[0]}")
        return self

    def __exit__(self, *exc):
        drop_database(self.name)


def bench_environment(database_url: str) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "evalsite.settings.production",
        "SECRET_KEY": os.environ.get("BENCH_SECRET_KEY", secrets.token_urlsafe(40)),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "ERROR",
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback: no TLS proxy in front here
    }


def seed(*, annotators: int, items: int, criteria: int) -> list[dict]:
    """One blind project and, per annotator, a session, a CSRF secret and its (assignment, criteria)."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from rest_framework.authtoken.models import Token

    from annotation.assignments import assignments_create
    from annotation.models import Assignment, Case, Cohort, CohortMembership, Project, Response
    from annotation.rubrics import rubrics_freeze
    from annotation.selectors import criteria_for_response

    project = Project.objects.create(slug="load", name="Load test", blind=True, overlap=1)
    n_responses = annotators * items
    n_cases = max(1, n_responses // 10)
    cases = Case.objects.bulk_create(
        Case(project=project, external_id=f"case-{i}", position=i, prompt=f"Case {i}") for i in range(n_cases)
    )
    rubrics_freeze(project=project, scopes=[
        (case, [{"criterion_id": f"case-{i}-c{j}", "text": f"Criterion {j}"} for j in range(criteria)])
        for i, case in enumerate(cases)
    ])
    Response.objects.bulk_create(
        Response(project=project, case=cases[i % n_cases], external_id=f"r{i}", position=i, model="model-x",
                 text="Call emergency services now. An ECG is needed.")
        for i in range(n_responses)
    )
    cohort = Cohort.objects.create(project=project, name="cohort")
    User = get_user_model()
    users = User.objects.bulk_create(User(username=f"load{i:03d}") for i in range(annotators))
    CohortMembership.objects.bulk_create(
        CohortMembership(project=project, cohort=cohort, user=user, role="annotator") for user in users
    )
    assignments_create(cohort=cohort)
    clients = []
    for user in User.objects.filter(username__startswith="load").order_by("username"):
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        work = [
            {"assignment": a.pk, "criteria": [c.pk for c in criteria_for_response(response=a.response)]}
            for a in Assignment.objects.filter(annotator=user).select_related("response").order_by("position")
        ]
        token = Token.objects.create(user=user).key  # for the API mode
        clients.append({"user_id": user.pk, "session": session.session_key, "csrf": secrets.token_hex(16), "work": work,
                        "token": token})
    return clients
