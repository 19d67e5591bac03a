"""The role matrix (issue 10): every URL pattern of the site, requested by every kind of user.

Principals: anonymous, a user without any role, an ``is_staff`` user without any role, an annotator
of each cohort and the checker of the first (the bundles' own, members in both projects, with no
project role), a viewer, an adjudicator and a manager of project ``mini``, the manager of the
second project ``other`` only ("outsider"), and a superuser. Besides its status, every answer to
a principal who must not see them is searched for another annotator's rationale, a judge's output
and a source model (both projects are blind): ``SECRETS``. Each URL is requested in up to three variants: ``own`` (a
URL of ``mini`` with ``mini``'s objects), ``other`` (the same URL for ``other`` and its objects)
and ``mixed`` (``mini``'s slug with an object id of ``other``). The expected status follows one
rule, written out in ``expected`` below:

- anonymous: pages redirect to the site's login page (``/accounts/login/``), the API answers 401/403;
- a user without a role in the project (also ``is_staff``): 404, the project's existence is not revealed;
- a role that does not allow the URL's action: 403; an allowed role and superusers: the page's own
  status (200, or 302 after a form post); an object of another project under one's own slug: 404;
- labeling and review URLs belong to cohort members (annotators, checkers), not to roles: 404 for
  every principal here, superusers included (``test_cohort_urls_reach_their_members`` shows the
  same URLs do answer their owners);
- a GET of a POST-only URL: 405 for every signed-in user.

Every refused request (anything but the allowed status) must leave every row of the
``annotation`` and ``grading`` apps as it was. ``test_every_url_pattern_is_in_the_matrix`` fails
when a URL pattern is added without a row here, so no new view escapes the check.

The data is built once for the module inside a transaction that is rolled back at the end, and
each test runs in a savepoint of its own. Work that views queue with ``transaction.on_commit``
(judge runs, data jobs) therefore never runs: nothing is judged, nothing leaves the machine.
Report pages show a stub result (``report_page_stub``); their figures are tests/grading/reports'.
"""
import re
from html import unescape
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection, transaction
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.bundles import write_bundle
from tests.role_matrix_data import SECRETS, _mini_parts, _other_parts, _project_objects, report_page_stub
from tests.role_matrix_rows import HTMX, MATRIX, Url, judge_form, upload
from tests.roles import grant

# Each test in a transaction rolled back after it, inside the module's own (see ``site``).
pytestmark = pytest.mark.django_db

PRINCIPALS = ("anonymous", "nobody", "staff", "annotator1", "annotator2", "checker", "viewer", "adjudicator", "manager",
              "outsider", "superuser")
ROLES = {"viewer": "viewer", "adjudicator": "adjudicator", "manager": "manager"}  # principal -> role in mini
OTHER_ROLES = {"outsider": "manager"}  # principal -> role in the other project only
# Cohort members of both projects (the bundles' own annotators and checker): no project role anywhere.
MEMBERS = {"annotator1": "ann1", "annotator2": "ann3", "checker": "chk1"}
# Who may do what, as issue 10 states it (deliberately not read from annotation.access, which it checks).
ALLOWED = {
    "view": {"viewer", "adjudicator", "manager"},
    "inspect": {"adjudicator", "manager"},
    "adjudicate": {"adjudicator", "manager"},
    "export": {"adjudicator", "manager"},
    "manage": {"manager"},
}
LOGIN = "/accounts/login/"

# URL patterns that are not in the matrix, each with the reason.
SKIPPED_NAMESPACES = {"admin": "the Django admin: its ModelAdmin classes ask annotation.access themselves (annotation/admin.py)"}
SKIPPED = {
    "login": "the site's login page, public by nature",
    "logout": "signs the current user out; no project data",
    "password_change": "the user's own account, not a project's",
    "password_change_done": "the user's own account, not a project's",
    "password_reset": "account recovery, public by nature",
    "password_reset_done": "account recovery, public by nature",
    "password_reset_confirm": "account recovery, public by nature",
    "password_reset_complete": "account recovery, public by nature",
    "api-schema": "the OpenAPI description of the endpoints; it holds no project data",
    "api-docs": "the API's documentation page (Swagger UI of api-schema); no project data",
    "api-token": "the user's own API token (tests/test_hardening.py), not a project's",
}


# --- the data -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(django_db_setup, django_db_blocker, tmp_path_factory):
    """Both projects, their objects and the principals' sessions, built once and rolled back at the
    end; the ``django_db`` mark runs each test in a savepoint of its own inside."""
    from grading.bundles import bundle_import

    jobs_dir = tmp_path_factory.mktemp("jobs")
    with (django_db_blocker.unblock(), override_settings(EVALSITE_JOBS_DIR=jobs_dir), pytest.MonkeyPatch.context() as patch,
          transaction.atomic()):
        patch.setattr("grading.reports.tasks.report_page_compute", report_page_stub)
        cache.clear()
        bundle_import(path=write_bundle(tmp_path_factory.mktemp("mini"), _mini_parts()))
        bundle_import(path=write_bundle(tmp_path_factory.mktemp("other"), _other_parts()))
        User = get_user_model()
        starter = User.objects.create_user("starter", password="pw")
        users = {
            "nobody": User.objects.create_user("nobody", password="pw"),
            "staff": User.objects.create_user("staffer", password="pw", is_staff=True),
            "viewer": User.objects.create_user("viewer", password="pw", is_staff=True),
            "adjudicator": User.objects.create_user("adjudicator", password="pw", is_staff=True),
            "manager": User.objects.create_user("manager", password="pw", is_staff=True),
            "superuser": User.objects.create_superuser("root", password="pw"),
            "outsider": User.objects.create_user("outsider", password="pw"),
            **{principal: User.objects.get(username=name) for principal, name in MEMBERS.items()},
        }
        mini, other = _project_objects("mini", starter, jobs_dir), _project_objects("other", starter, jobs_dir)
        for principal, role in ROLES.items():
            grant(users[principal], mini.project, role)
        for principal, role in OTHER_ROLES.items():
            grant(users[principal], other.project, role)
        for project in (mini.project, other.project):
            grant(starter, project, "manager")
        sessions = {}
        for principal, user in users.items():
            client = Client()
            client.force_login(user)
            sessions[principal] = client.cookies[settings.SESSION_COOKIE_NAME].value
        yield SimpleNamespace(mini=mini, other=other, users=users, sessions=sessions)
        transaction.set_rollback(True)
        cache.clear()  # report results of rows that are gone


def client_for(site, principal: str) -> Client:
    """A client signed in as ``principal``, with the session made once for the module."""
    client = Client()
    if principal != "anonymous":
        client.cookies[settings.SESSION_COOKIE_NAME] = site.sessions[principal]
    return client


def state() -> dict:
    """Every row of the annotation and grading apps: what a refused request must leave alone."""
    tables = [m._meta.db_table for name in ("annotation", "grading") for m in apps.get_app_config(name).get_models()]
    with connection.cursor() as cursor:  # plain SQL: this runs twice for every refused POST
        rows = {}
        for table in tables:
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)} ORDER BY 1")
            rows[table] = cursor.fetchall()
    return rows


def expected(url: Url, variant: str, principal: str, method: str) -> int | str:
    """The status ``principal`` must get: an int, "login" (redirect to the site's login page) or
    "denied" (the API's 401 or 403 for anonymous users)."""
    if principal == "anonymous":
        return "denied" if url.api else "login"
    allowed = url.allowed(method)
    if allowed is None:
        return 405
    if variant == "own" and method in url.members.get(principal, {}):
        return url.members[principal][method]  # the checker's own review work
    if url.rule == "signed-in":
        return allowed
    if url.rule == "cohort":
        return 404
    if url.rule == "superuser":
        return allowed if principal == "superuser" else 403
    if principal == "superuser":
        return 404 if variant == "mixed" else allowed
    role = OTHER_ROLES.get(principal) if variant == "other" else ROLES.get(principal)  # mixed: mini's slug
    if role is None:
        return 404
    if role not in ALLOWED[url.rule]:
        return 403
    return 404 if variant == "mixed" else allowed


def _cases():
    """(row, variant, principal). Anonymous users and users without a role in mini have no role in
    either project: for them the other project's variants would repeat the ``own`` one."""
    for url in MATRIX:
        for variant in url.variants:
            for principal in PRINCIPALS:
                if variant == "own" or principal in ROLES or principal in OTHER_ROLES or principal == "superuser":
                    yield pytest.param(url, variant, principal, id=f"{url.id}-{variant}-{principal}")


def _request(client, url: Url, method: str, path: str, home, target):
    if method == "get":
        return client.get(path, **url.headers)
    if method == "post":
        data = url.data(home, target)
        if path.startswith("/api/") and not any(hasattr(v, "read") for v in (data or {}).values()):
            # the API reads JSON bodies (uploads alone are multipart)
            return client.post(path, data, content_type="application/json", **url.headers)
        return client.post(path, data, **url.headers)
    return getattr(client, method)(path, url.data(home, target), content_type="application/json", **url.headers)


def _check_secrets(response, body: bytes, principal: str, what: str) -> None:
    """Independence and blinding, in every answer to a principal who must not see them."""
    if principal not in SECRETS or response.get("Content-Type", "").startswith("application/zip"):
        return
    text = body.decode("utf-8", errors="replace")
    leaked = [secret for secret in SECRETS[principal] if secret in text]
    assert not leaked, f"{what}: the answer holds {leaked}"


def _check(response, want, what: str) -> None:
    got = response.status_code
    if want == "login":
        assert got == 302 and response["Location"].startswith(LOGIN + "?next="), (what, got, response.get("Location"))
    elif want == "denied":
        assert got in (401, 403), (what, got)
    else:
        assert got == want, (what, got, response.get("Location"))


@pytest.mark.parametrize(("url", "variant", "principal"), _cases())
def test_every_url_answers_each_principal_by_the_role_rule(site, url, variant, principal):
    home = site.mini if variant in ("own", "mixed") else site.other
    target = site.mini if variant == "own" else site.other
    path = url.path(home, target)
    client = client_for(site, principal)
    for method in (*url.methods, *url.other):
        if method == "post" and url.post is None:
            continue
        want = expected(url, variant, principal, method)
        granted = url.members.get(principal, {}).get(method) if variant == "own" else None
        refused = (want != url.allowed(method) or url.rule == "cohort") and want != granted
        before = state() if method == "post" and (refused or url.changes) else None
        response = _request(client, url, method, path, home, target)
        if hasattr(response, "streaming_content"):
            # Read it through the test client's wrapper, which closes the response with Django's
            # close_old_connections unhooked; response.close() here would close the test's
            # PostgreSQL connection (it is not in autocommit inside the test's transaction).
            body = b"".join(response.streaming_content)
        else:
            body = response.content
        what = f"{method.upper()} {path} as {principal}"
        _check(response, want, what)
        _check_secrets(response, body, principal, what)
        if before is not None and refused:
            unchanged = state() == before
            assert unchanged, f"{what} was refused but changed rows"
        elif before is not None:
            wrote = state() != before
            assert wrote, f"{what} was allowed but wrote nothing: the refusals of this POST prove little"


# --- the matrix covers the site -------------------------------------------------------------


def url_patterns(resolver=None, prefix: str = "", namespaces: tuple[str, ...] = ()):
    """(route, name, namespaces) of every URL pattern under the root resolver."""
    resolver = resolver or get_resolver()
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            inner = namespaces + ((pattern.namespace,) if pattern.namespace else ())
            yield from url_patterns(pattern, prefix + str(pattern.pattern), inner)
        else:
            assert isinstance(pattern, URLPattern)
            yield prefix + str(pattern.pattern), pattern.name, namespaces


def test_every_url_pattern_is_in_the_matrix():
    """A URL pattern added without a row in MATRIX (or a reason in SKIPPED) fails here."""
    patterns = [(route, name) for route, name, spaces in url_patterns() if not set(spaces) & set(SKIPPED_NAMESPACES)]
    unnamed = [route for route, name in patterns if not name]
    assert not unnamed, f"name these URL patterns so the role matrix can list them: {unnamed}"
    names = [name for _, name in patterns]
    assert len(names) == len(set(names)), "two URL patterns share a name; the matrix could miss one of them"
    covered = {url.name for url in MATRIX}
    missing = sorted(set(names) - covered - set(SKIPPED))
    assert not missing, f"URL patterns missing from the role matrix (add rows to MATRIX): {missing}"
    assert covered <= set(names), f"rows of MATRIX for URL patterns that are gone: {sorted(covered - set(names))}"
    assert not set(SKIPPED) & covered and set(SKIPPED) <= set(names)


# --- what the issue asks for by name --------------------------------------------------------


def test_cohort_urls_reach_their_members(site):
    """The matrix's 404s for labeling and review URLs come from membership, not from bad ids: the
    same URLs answer the assignment's annotator and the cohort's checker."""
    from annotation.models import Assignment

    mini = site.mini
    client = Client()
    client.force_login(Assignment.objects.select_related("annotator").get(pk=mini.open_assignment).annotator)
    for name in ("label-page", "api-assignment"):
        assert client.get(reverse(name, args=[mini.open_assignment])).status_code == 200, name
    client.force_login(get_user_model().objects.get(username="chk1"))  # the checker of mini's first cohort
    assert client.get(reverse("review-queue", args=["mini"])).status_code == 200
    assert client.get(reverse("review-page", args=[mini.response])).status_code == 200
    assert client.get(reverse("review-assignment", args=[mini.assignment])).status_code == 302


def test_an_adjudicator_cannot_start_a_judge_run_assign_work_or_import(site):
    """Each attempt is a 403 (the adjudicator has a role in mini) and writes nothing, whether a plain
    form post or an htmx one; the superusers' new-project import is a 403 too."""
    from annotation.models import Assignment, ProjectRole
    from grading.models import DataJob, Judge, JudgeRun

    mini, client = site.mini, client_for(site, "adjudicator")
    attempts = [
        ("judge-run-start", [mini.slug], {"judge": mini.judge}),
        ("judge-run-resume", [mini.slug, mini.stopped_run], {}),
        ("judge-run-stop", [mini.slug, mini.running_run], {}),
        ("judges-page", [mini.slug], judge_form(mini, mini)),
        ("judge-edit", [mini.slug, mini.editable_judge], {"name": "renamed", "backend": "baseline", "condition": "anonymized"}),
        ("project-assign", [mini.slug], {"cohort": mini.cohort, "overlap": "2", "method": "round_robin"}),
        ("project-reassign", [mini.slug, mini.open_assignment], {"username": mini.reassign_to}),
        ("project-reopen", [mini.slug, mini.assignment], {"reason": "a second look"}),
        ("project-import", [mini.slug], None),
        ("project-role-update", [mini.slug], {"username": "adjudicator", "role": "manager"}),
        ("site-import", [], None),
    ]
    counts = [JudgeRun.objects.count(), Judge.objects.count(), Assignment.objects.count(), DataJob.objects.count()]
    before = state()
    for name, args, data in attempts:
        for headers in ({}, HTMX):
            response = client.post(reverse(name, args=args), data if data is not None else upload(mini, mini), **headers)
            assert response.status_code == 403, (name, headers, response.status_code)
    assert state() == before
    assert [JudgeRun.objects.count(), Judge.objects.count(), Assignment.objects.count(), DataJob.objects.count()] == counts
    assert ProjectRole.objects.get(project=mini.project, user=site.users["adjudicator"]).role == "adjudicator"


def test_the_api_gives_an_adjudicator_no_way_to_start_runs_assign_or_import(site):
    """Every API route is a row of MATRIX; here, by name, the manager-only writes an adjudicator
    might try through the API are refused (403) and change nothing."""
    api = {name for route, name, _ in url_patterns() if route.startswith("api/")} - set(SKIPPED)
    assert api <= {url.name for url in MATRIX}
    mini, client = site.mini, client_for(site, "adjudicator")
    before = state()
    attempts = [
        ("api-runs", {"slug": "mini"}, {"judge": "lexical"}),
        ("api-run-resume", {"slug": "mini", "run_id": mini.stopped_run}, {}),
        ("api-judges", {"slug": "mini"}, {"name": "sneaky", "backend": "baseline"}),
        ("api-project-assignments", {"slug": "mini"}, {"cohort": "fresh", "overlap": "2"}),
        ("api-assignment-reassign", {"slug": "mini", "assignment_id": mini.open_assignment}, {"annotator": mini.reassign_to}),
        ("api-project-import", {"slug": "mini"}, upload(mini, mini)),
        ("api-project-roles", {"slug": "mini"}, {"username": "adjudicator", "role": "manager"}),
        ("api-projects", {}, upload(mini, mini)),
    ]
    for name, kwargs, data in attempts:
        assert client.post(reverse(name, kwargs=kwargs), data).status_code == 403, name
    assert client.post(reverse("api-decisions", args=["mini"]), {"source": "gold"}).status_code == 405
    assert client.post(reverse("api-assignment-submit", args=[mini.open_assignment])).status_code == 404
    assert state() == before


def test_an_adjudicator_sees_nothing_of_a_project_without_a_role(site):
    """Not in the project list of the home page or of the API, and every page of it is a 404 that
    says nothing about it: its queue (also filtered), review queue, reports, side-by-side and decisions."""
    other, client = site.other, client_for(site, "adjudicator")
    home = client.get(reverse("home")).content.decode()
    assert "Mini study" in home and "Hidden study" not in home and "/projects/other/" not in home
    assert client.get(reverse("api-assignments")).json()["results"] == []
    paths = [
        reverse("project-detail", args=["other"]),
        reverse("adjudication-queue", args=["other"]),
        reverse("adjudication-queue", args=["other"]) + "?model=model-a&status=open",
        reverse("adjudication-next", args=["other"]),
        reverse("review-queue", args=["other"]),
        reverse("report-index", args=["other"]),
        reverse("report-agreement", args=["other"]),
        reverse("response-side-by-side", args=[other.response]),
        reverse("side-by-side-lookup", args=["mini"]) + f"?response={other.response_external_id}",
        reverse("api-decisions", args=["other"]) + f"?source=cohort:{other.cohort_name}",
        reverse("data-job", args=[other.export_job]),
    ]
    for path in paths:
        response = client.get(path)
        assert response.status_code == 404, (path, response.status_code)
        assert "hidden study" not in response.content.decode().lower(), path
    superuser_home = client_for(site, "superuser").get(reverse("home")).content.decode()
    assert "Mini study" in superuser_home and "Hidden study" in superuser_home  # the check above can fail


@pytest.mark.parametrize("param", ["a", "b"])
def test_naming_another_projects_source_in_a_report_reveals_nothing_of_it(site, param):
    """A prefixed source is refused with the same words whether that project exists or not, so a
    viewer of mini cannot learn other projects' slugs, cohorts or judges from the error."""
    client, other = client_for(site, "viewer"), site.other
    url = reverse("report-agreement", args=["mini"])
    answers = []
    for prefix in ("other", "nosuch"):
        for source in (f"{prefix}:cohort:nope", f"{prefix}:judge:nope", f"{prefix}:gold"):
            query = {"a": "cohort:group-1", "b": "cohort:group-2", param: source}
            response = client.get(url, query)
            html = response.content.decode()
            assert response.status_code == 200 and "hidden-" not in html and other.cohort_name not in html, source
            [error] = re.findall(r'<p class="error"[^>]*id="report-error">([^<]*)</p>', html)
            answers.append(unescape(error).replace(source, "SOURCE"))
    assert len(set(answers)) == 1 and "SOURCE" in answers[0], answers


def test_naming_another_projects_source_in_the_decisions_api_reveals_nothing_of_it(site):
    client = client_for(site, "adjudicator")
    url = reverse("api-decisions", args=["mini"])
    answers = set()
    for prefix in ("other", "nosuch"):
        for source in (f"{prefix}:cohort:hidden-cohort-1", f"{prefix}:judge:nope", f"{prefix}:gold"):
            response = client.get(url, {"source": source})
            assert response.status_code == 400 and "hidden-judge" not in response.content.decode(), source
            answers.add(response.content.decode().replace(source, "SOURCE"))
    assert len(answers) == 1


def test_a_job_belongs_to_the_role_not_to_whoever_started_it(site):
    """A manager's own export: its page and file are 403 once they are a viewer, 404 once they have
    no role in the project (starting a job gives no lasting right to it)."""
    from annotation.models import ProjectRole
    from grading.models import DataJob

    client = client_for(site, "manager")
    assert client.post(reverse("project-export", args=["mini"])).status_code == 302
    job = DataJob.objects.filter(user=site.users["manager"]).get()
    assert client.get(reverse("data-job", args=[job.pk])).status_code == 200
    for role, status in (("viewer", 403), (None, 404)):
        roles = ProjectRole.objects.filter(project=site.mini.project, user=site.users["manager"])
        roles.update(role=role) if role else roles.delete()
        assert client.get(reverse("data-job", args=[job.pk])).status_code == status, role
        assert client.get(reverse("data-job-download", args=[job.pk])).status_code == status, role


@pytest.mark.parametrize(("principal", "shown", "hidden"), [
    ("viewer", ["project-reports", "project-roles"],
     ["project-adjudication", "project-assignments", "project-judges", "project-quality", "data-section", "role-form"]),
    ("adjudicator", ["project-adjudication", "data-section", "export-gold", "job-{export_job}"],
     ["project-assignments", "project-judges", "project-quality", "import-form", "role-form", "job-{import_job}"]),
    ("manager", ["project-assignments", "project-judges", "project-quality", "import-form", "role-form",
                 "job-{export_job}", "job-{import_job}"], []),
])
def test_the_project_page_offers_each_role_only_its_own_sections(site, principal, shown, hidden):
    html = client_for(site, principal).get(reverse("project-detail", args=["mini"])).content.decode()
    ids = {"export_job": site.mini.export_job, "import_job": site.mini.import_job}
    for name in shown:
        assert f'id="{name.format(**ids)}"' in html, name
    for name in hidden:
        assert f'id="{name.format(**ids)}"' not in html, name


def test_the_secrets_the_matrix_looks_for_are_on_the_pages_of_those_who_may_see_them(site):
    """The independence check above can fail: the markers are there for an adjudicator, and the
    checker's review page shows its own cohort's rationales, not the other cohort's."""
    side = client_for(site, "adjudicator").get(reverse("response-side-by-side", args=[site.mini.response])).content.decode()
    assert "JUDGE-OUTPUT-MARK" in side and "RATIONALE-OF-ANN3" in side and "model-a" in side
    review = client_for(site, "checker").get(reverse("review-page", args=[site.mini.response])).content.decode()
    assert "RATIONALE-OF-ANN1" in review and "RATIONALE-OF-ANN3" not in review
