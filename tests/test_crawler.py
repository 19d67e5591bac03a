"""No 500 anywhere (issue 22, point 4): every role of every demo project crawls the site.

The data is the demo's, loaded by ``manage.py load_demo`` itself with its bundles made small (three
clinical cases instead of forty, the first cases of CHARM-100 and DevAI), plus the states the demo
does not reach by itself: a project with two cohorts that disagree and no judge at all, unfinished
judge runs (queued, running, stopping, stopped, paused, failed) and data jobs that failed or whose
worker was killed. The demo already has a project without labels (the workspace), projects with
one cohort (CHARM-100 without a judge, DevAI with one) and one with two judges.

Each principal — an annotator and the checker of each cohort, the single-cohort projects'
annotators, the adjudicator, the viewer, a manager of every project and the superuser — signs in
and crawls (tests/crawler.py) from the home page and the API's lists of every project: every link,
htmx URL and form, writes sent empty and rolled back. No answer may be a 5xx, and the crawl must
answer, at least once, on the pages that show it went where the principal's role leads (the
route names in ``PRINCIPALS``).

The data is built once per module (per xdist worker) inside a transaction rolled back at the end,
so work queued with ``transaction.on_commit`` (judge runs, data jobs) never runs.
"""
import io
import json
import logging
import re
import tempfile
import uuid
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.db import transaction
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, path, reverse
from django.utils import timezone
from rest_framework.views import APIView

import evalsite.urls
from tests.crawler import crawl

pytestmark = pytest.mark.django_db

SMALL_CLINICAL = {"n_cases": 3, "n_criteria": 6, "human_answer_cases": 1}
TRIMMED_CASES = 4  # of CHARM-100 and DevAI
NO_JUDGE = "no-judge"  # the project the demo lacks: two cohorts that disagree, no judge yet

# principal -> (username, route names its crawl must reach, what it crawls: the site or its admin)
SITE, ADMIN = {"outside": ("/admin/",)}, {"within": "/admin/"}
PRINCIPALS = {
    "annotator-group-1": ("g1-ann1", {"label-page", "label-save", "label-save-batch", "label-time", "my-items",
                                      "annotator-feedback"}, SITE),
    "annotator-group-2": ("g2-ann1", {"label-page", "label-save", "label-save-batch", "label-time", "my-items"}, SITE),
    "checker-group-1": ("g1-check", {"review-queue", "review-page"}, SITE),
    "checker-group-2": ("g2-check", {"review-queue", "review-page"}, SITE),
    "annotator-charm-100": ("charm100-reference", {"home", "my-items"}, SITE),
    "annotator-devai": ("devai-panel", {"home", "my-items"}, SITE),
    "adjudicator": ("adjudicator", {"adjudication-queue", "adjudication-item", "response-side-by-side", "report-agreement",
                                    "data-job", "api-decisions"}, SITE),
    "viewer": ("viewer", {"project-detail", "report-agreement", "report-scores", "api-project", "api-report-agreement",
                          "api-report-stability", "api-report-coverage"}, SITE),
    "manager": ("manager", {"judges-page", "judge-run-page", "data-job", "project-assignments", "qc-page", "quality-annotators",
                            "adjudication-item", "response-side-by-side", "api-runs", "api-job", "qc-outcome", "qc-reinstate"}, SITE),
    "superuser": ("researcher", {"judge-run-page", "data-job", "response-side-by-side", "api-projects", "api-schema"}, SITE),
    # The admin apart, so that the two halves of the superuser's crawl run in parallel.
    "superuser-admin": ("researcher", {"admin:index", "admin:annotation_label_changelist", "admin:annotation_label_change",
                                       "admin:annotation_project_delete", "admin:grading_datajob_change"}, ADMIN),
}


# --- the data -------------------------------------------------------------------------------


def _small_clinical(out_dir, **options):
    from demo.clinical import generate_clinical

    small = {name: min(options.get(name, value), value) for name, value in SMALL_CLINICAL.items()}
    return generate_clinical(out_dir, **{**options, **small})


def _trimmed_charm100(**options):
    """CHARM-100 imported with only its first items (its first cases, with their responses and labels)."""
    from demo.charm100 import VENDORED_SOURCE, charm100_import

    data = json.loads(VENDORED_SOURCE.read_text(encoding="utf-8"))
    data["items"] = data["items"][:TRIMMED_CASES]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "charm100.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return charm100_import(source=path, **options)


def _trimmed(convert):
    """``convert`` (a demo converter) keeping only its first cases, with their responses and rows."""
    def run(out_dir, **options):
        counts = convert(out_dir, **options)
        folder = Path(out_dir)

        def rows(name):
            path = folder / f"{name}.jsonl"
            return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

        def write(name, kept):
            (folder / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in kept), encoding="utf-8")

        cases = rows("cases")[:TRIMMED_CASES]
        case_ids = {row["case_id"] for row in cases}
        responses = [row for row in rows("responses") if row["case_id"] in case_ids]
        response_ids = {row["response_id"] for row in responses}
        write("cases", cases)
        write("responses", responses)
        for name in ("labels", "judgments"):
            if (folder / f"{name}.jsonl").exists():
                write(name, [row for row in rows(name) if row["response_id"] in response_ids])
        return counts
    return run


def _no_judge_project(work: Path):
    """Two cohorts with imported labels that disagree, assignments in every status, no judge."""
    from annotation.assignments import assignments_create
    from annotation.models import Assignment, Cohort, Project
    from grading.bundles import bundle_import

    _small_clinical(work, slug=NO_JUDGE, judges=(), seed=3, low_agreement_share=1.0)
    spec = json.loads((work / "project.json").read_text())
    spec["name"] = "Two cohorts, no judge yet"
    (work / "project.json").write_text(json.dumps(spec))
    bundle_import(path=work)
    project = Project.objects.get(slug=NO_JUDGE)
    now = timezone.now()
    for cohort in Cohort.objects.filter(project=project):
        assignments_create(cohort=cohort, overlap=2, seed=1)
        items = Assignment.objects.filter(cohort=cohort).order_by("position", "pk")
        submitted, checked, started = items[0].pk, items[1].pk, items[2].pk
        Assignment.objects.filter(pk__in=[submitted, checked]).update(status=Assignment.SUBMITTED, submitted_at=now)
        Assignment.objects.filter(pk=checked).update(status=Assignment.CHECKED, checked_at=now)
        Assignment.objects.filter(pk=started).update(status=Assignment.IN_PROGRESS)
    return project


def _quality_states(project) -> None:
    """Quality control: a case flagged by screening and drawn for audit, and an excluded one."""
    from annotation.models import Case, CaseQuality

    flagged, excluded = Case.objects.filter(project=project).order_by("position", "pk")[:2]
    screening = {"screen_accuracy_pct": 40.0, "screen_threshold_pct": 50.0, "screen_source": "cohort:group-1",
                 "screen_models": ["physician"]}
    CaseQuality.objects.create(project=project, case=flagged, flagged=True, audit_sampled=True, **screening)
    CaseQuality.objects.create(project=project, case=excluded, flagged=True, excluded=True, **screening)


def _check_items(project, manager) -> None:
    """Annotator quality on: hidden check items seeded into the queues, annotators shown their agreement."""
    from grading.goldcheck.services import checks_seed, quality_settings_update

    quality_settings_update(project=project, data={"check_rate": 0.3, "check_feedback": True, "check_min_items": 1},
                            by=manager)
    project.refresh_from_db()
    checks_seed(project=project, by=manager, seed=0)


def _unfinished_runs(project) -> None:
    """Runs of the demo's baseline judge, after its finished one, in every state but finished; the
    running ones with a live worker and with one that fell silent an hour ago."""
    from grading.models import Judge, JudgeRun

    judge = Judge.objects.get(project=project, backend=Judge.BASELINE)
    fresh, stale = timezone.now(), timezone.now() - timedelta(hours=1)
    for status, heartbeat in ((JudgeRun.QUEUED, None), (JudgeRun.RUNNING, fresh), (JudgeRun.RUNNING, stale),
                              (JudgeRun.STOPPING, fresh), (JudgeRun.STOPPED, None), (JudgeRun.PAUSED, None),
                              (JudgeRun.FAILED, None)):
        JudgeRun.objects.create(judge=judge, status=status, heartbeat_at=heartbeat, total_calls=10, done_calls=3)


def _data_jobs(project, user, jobs_dir: Path) -> None:
    """A finished export with its file, a failed one, an import whose worker was killed (running, its
    heartbeat an hour old), a queued import, and a failed import of a new project (no project)."""
    from grading.models import DataJob

    stale = timezone.now() - timedelta(hours=1)
    export = DataJob.objects.create(kind=DataJob.EXPORT, project=project, user=user, status=DataJob.FINISHED,
                                    progress_pct=100, finished_at=timezone.now())
    (jobs_dir / str(export.pk)).mkdir(parents=True)
    (jobs_dir / str(export.pk) / "gold.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    DataJob.objects.filter(pk=export.pk).update(file=f"{export.pk}/gold.zip")
    DataJob.objects.create(kind=DataJob.EXPORT, project=project, user=user, status=DataJob.FAILED,
                           error="the disk is full", finished_at=timezone.now())
    DataJob.objects.create(kind=DataJob.IMPORT, project=project, user=user, status=DataJob.RUNNING, progress_pct=40,
                           stage="labels", started_at=stale, heartbeat_at=stale, attempts=1, file="gone/bundle.zip")
    DataJob.objects.create(kind=DataJob.IMPORT, project=project, user=user, status=DataJob.QUEUED)
    DataJob.objects.create(kind=DataJob.IMPORT, project=None, user=user, status=DataJob.FAILED,
                           error="cases.jsonl line 3: case_id is missing")


@pytest.fixture(scope="module")
def demo_site(django_db_setup, django_db_blocker, tmp_path_factory):
    from annotation.models import Project
    from grading.management.commands import load_demo
    from grading.models import DataJob, JudgeRun
    from tests.roles import grant

    jobs_dir = tmp_path_factory.mktemp("jobs")
    with (django_db_blocker.unblock(), override_settings(EVALSITE_JOBS_DIR=jobs_dir),
          pytest.MonkeyPatch.context() as patch, transaction.atomic()):
        cache.clear()
        patch.setattr(load_demo, "generate_clinical", _small_clinical)
        patch.setattr(load_demo, "charm100_import", _trimmed_charm100)
        patch.setattr(load_demo, "convert_devai", _trimmed(load_demo.convert_devai))
        call_command("load_demo", "--json", stdout=io.StringIO())
        no_judge = _no_judge_project(tmp_path_factory.mktemp("no-judge"))
        User = get_user_model()
        manager = User.objects.create_user("manager", password="pw")
        for project in Project.objects.all():
            grant(manager, project, "manager")
        for name in ("adjudicator", "viewer"):  # load_demo gave them every project it loaded
            grant(User.objects.get(username=name), no_judge, name)
        demo = Project.objects.get(slug="clinical-demo")
        _unfinished_runs(demo)
        _quality_states(demo)
        for project in (demo, no_judge):
            _data_jobs(project, manager, jobs_dir)
        _check_items(Project.objects.get(slug="clinical-workspace"), manager)
        assert JudgeRun.objects.exclude(status=JudgeRun.FINISHED).exists() and DataJob.objects.exists()
        yield SimpleNamespace(slugs=sorted(Project.objects.values_list("slug", flat=True)), no_judge=no_judge, cached={})
        transaction.set_rollback(True)
    cache.clear()  # report results of rows that are gone


def url_patterns(resolver=None, prefix: str = ""):
    """(route, name) of every URL pattern of the site."""
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            yield from url_patterns(pattern, prefix + str(pattern.pattern))
        else:
            assert isinstance(pattern, URLPattern)
            yield prefix + str(pattern.pattern), pattern.name


def api_starts(slugs: list[str]) -> list[str]:
    """The API's lists: every API route that takes only a project's slug, for every project."""
    names = [name for route, name in url_patterns() if route.startswith("api/") and route.count("<") == 1
             and "<slug:slug>" in route]
    return ["/api/projects/", "/api/assignments/", "/api/schema/"] + [reverse(name, args=[slug]) for slug in slugs
                                                                      for name in names]


def object_starts() -> list[str]:
    """The objects whose state matters, each one (a link to it would be capped with the others of
    its route): every judge run and data job, page and API, and what no page or list links to:
    every judge and cohort, the first assignments of each project, every source's decisions."""
    from annotation.models import Assignment, Cohort, Project
    from grading.models import DataJob, Judge, JudgeRun

    urls = []
    for project in Project.objects.order_by("slug"):
        sources = ["gold", *(f"cohort:{c.name}" for c in project.cohorts.all()), *(f"judge:{j.name}" for j in project.judges.all())]
        urls += [f"{reverse('api-decisions', args=[project.slug])}?{urlencode({'source': source})}" for source in sources]
    for run in JudgeRun.objects.select_related("judge__project").order_by("pk"):
        slug = run.judge.project.slug
        urls += [reverse("judge-run-page", args=[slug, run.pk]), reverse("api-run", args=[slug, run.pk])]
    for job in DataJob.objects.order_by("pk"):
        urls += [reverse(name, args=[job.pk]) for name in ("data-job", "data-job-download", "api-job", "api-job-download")]
    for judge in Judge.objects.select_related("project").order_by("pk"):
        urls.append(reverse("api-judge", args=[judge.project.slug, judge.pk]))
    for cohort in Cohort.objects.select_related("project").order_by("pk"):
        urls.append(reverse("api-cohort-members", args=[cohort.project.slug, cohort.pk]))
    seen_projects: dict[int, int] = {}
    for assignment in Assignment.objects.order_by("project_id", "pk"):
        seen_projects[assignment.project_id] = seen_projects.get(assignment.project_id, 0) + 1
        if seen_projects[assignment.project_id] <= 3:
            urls.append(reverse("api-assignment", args=[assignment.pk]))
    return urls


def report_api_starts() -> list[str]:
    """Every report endpoint of the API for every project, with its required options filled from
    the project: cohorts for sources (``a`` the first, ``b`` the last), its first judge, a condition."""
    from rest_framework.serializers import ChoiceField

    from annotation.models import Project
    from grading.api.reports import report_options
    from grading.reports.registry import SourceField, computed_reports

    urls = []
    for project in Project.objects.prefetch_related("cohorts", "judges").order_by("slug"):
        cohorts = [f"cohort:{c.name}" for c in sorted(project.cohorts.all(), key=lambda c: c.position)]
        judges = [j.name for j in project.judges.all()]
        for report in computed_reports():
            query = {}
            for name, field in report_options(report).items():
                if not field.required:
                    continue
                if name == "judge" and judges:
                    query[name] = judges[0]
                elif isinstance(field, SourceField):
                    query[name] = cohorts[-1] if name == "b" else cohorts[0]
                elif isinstance(field, ChoiceField):
                    query[name] = list(field.choices)[0]
            url = reverse(f"api-report-{report.key.replace('_', '-')}", args=[project.slug])
            urls.append(f"{url}?{urlencode(query)}" if query else url)
    return urls


# --- the crawl ------------------------------------------------------------------------------


@contextmanager
def _reports_computed_once(site):
    """The report results the module's earlier crawls computed, for this one. Every principal
    crawls the same data (the module's, its writes rolled back), and a result is cached under its
    inputs' fingerprint, so what an earlier crawl computed is what this one would: each page is
    still requested, checked and rendered, but each report is computed once per module instead of
    once per principal (the test's own local-memory cache starts empty, conftest.py)."""
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    local = caches["default"]
    if not isinstance(local, LocMemCache):
        yield
        return
    with local._lock:
        local._cache.update(site.cached.get("entries", {}))
        local._expire_info.update(site.cached.get("expiry", {}))
    try:
        yield
    finally:
        with local._lock:
            site.cached.update(entries=dict(local._cache), expiry=dict(local._expire_info))


@pytest.mark.parametrize("principal", PRINCIPALS)
def test_no_page_of_the_site_answers_a_server_error(demo_site, principal):
    from annotation.models import ProjectRole

    username, reaches, scope = PRINCIPALS[principal]
    user = get_user_model().objects.get(username=username)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    starts = ["/admin/"] if scope is ADMIN else ["/", *api_starts(demo_site.slugs), *object_starts()]
    if principal == "viewer":  # a report endpoint computes in the request, alike for every role that may read it
        starts += report_api_starts()
    with _reports_computed_once(demo_site):
        result = crawl(client, starts, **scope)
    errors = [f"{a.status} {a.link.method.upper()} {a.link.url} (found on {a.found_on})\n{a.error}"
              for a in result.server_errors()]
    assert not errors, f"{len(errors)} server errors as {username}:\n" + "\n".join(errors)
    assert not result.truncated, f"the crawl as {username} reached its limit ({result.summary()}): bound the new links"
    missed = reaches - result.routes()
    assert not missed, f"the crawl as {username} never reached {sorted(missed)} ({result.summary()})"
    if scope is SITE:  # every project the principal has a role in (cohort members' URLs carry no slug)
        roles = demo_site.slugs if user.is_superuser else ProjectRole.objects.filter(user=user).values_list("project__slug", flat=True)
        unseen = set(roles) - result.projects()
        assert not unseen, f"the crawl as {username} never reached a page of {sorted(unseen)}"


# --- what the issue names ---------------------------------------------------------------------


def test_the_side_by_side_page_of_a_project_without_a_judge_shows_the_cohorts(demo_site):
    """The page answered 500 (an empty ``judge_id__in``) for every project with no judge yet."""
    from annotation.models import Cohort, Response

    client = Client()
    client.force_login(get_user_model().objects.get(username="adjudicator"))
    response = Response.objects.filter(project=demo_site.no_judge).order_by("position", "pk").first()
    page = client.get(reverse("response-side-by-side", args=[response.pk]))
    assert page.status_code == 200
    cohorts = Cohort.objects.filter(project=demo_site.no_judge).values_list("name", flat=True)
    assert all(name in page.content.decode() for name in cohorts)


def _id_routes():
    """(name, route) of every API route that names an object by its database id."""
    return [(name, route) for route, name in url_patterns() if route.startswith("api/") and "<id:" in route]


@pytest.mark.parametrize(("name", "route"), _id_routes())
def test_an_unknown_id_in_the_api_is_a_404_with_a_json_body(demo_site, name, route):
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    kwargs = {kwarg: "clinical-demo" if kwarg == "slug" else 9_000_000_000 for kwarg in re.findall(r"<(?:\w+:)?(\w+)>", route)}
    url = reverse(name, kwargs=kwargs)
    view = get_resolver().resolve(url).func
    methods = [m for m in ("get", "post", "put", "patch", "delete") if hasattr(getattr(view, "view_class", None), m)]
    assert methods, name
    for method in methods:
        answer = getattr(client, method)(url, {}, content_type="application/json")
        assert answer.status_code == 404, (method, url, answer.status_code, answer.content[:300])
        assert answer["Content-Type"].startswith("application/json") and answer.json().get("detail"), (method, url)


@pytest.mark.parametrize("response_id", ["no-such-response", "12345", "PK"])
def test_the_decisions_api_answers_an_unknown_response_with_a_404(demo_site, response_id):
    """An unknown response id, a number that is nobody's id, or a response's database id (the
    filter takes the response id of the bundle) is a 404 with a JSON body; it used to be a 500."""
    from annotation.models import Response

    client = Client()
    client.force_login(get_user_model().objects.get(username="adjudicator"))
    if response_id == "PK":
        response_id = str(Response.objects.filter(project__slug="clinical-demo").order_by("pk").first().pk)
    url = reverse("api-decisions", args=["clinical-demo"])
    for source in ("cohort:group-1", "judge:gpt-4o-judge", "gold"):
        answer = client.get(url, {"source": source, "response": response_id})
        assert answer.status_code == 404, (source, answer.status_code)
        assert response_id in answer.json()["detail"], source


def test_the_decisions_api_answers_an_unknown_criterion_with_a_404(demo_site):
    client = Client()
    client.force_login(get_user_model().objects.get(username="adjudicator"))
    answer = client.get(reverse("api-decisions", args=["clinical-demo"]), {"source": "gold", "criterion": "nope"})
    assert answer.status_code == 404 and "nope" in answer.json()["detail"]


def test_the_decisions_api_still_filters_by_a_known_response(demo_site):
    from annotation.models import Response

    client = Client()
    client.force_login(get_user_model().objects.get(username="adjudicator"))
    response = Response.objects.filter(project__slug="clinical-demo").order_by("pk").first()
    answer = client.get(reverse("api-decisions", args=["clinical-demo"]),
                        {"source": "cohort:group-1", "response": response.external_id})
    assert answer.status_code == 200
    rows = answer.json()["results"]
    assert rows and {row["response_id"] for row in rows} == {response.external_id}


# --- the 500 page -------------------------------------------------------------------------------


class Boom(Exception):
    pass


def _page_that_breaks(request):
    raise Boom("the view broke")


class _ApiThatBreaks(APIView):
    def get(self, request):
        raise Boom("the API view broke")


def _page_that_answers(request):
    return HttpResponse("fine")


# The site's URLs with two views that raise; this module is the URLconf of the tests below.
urlpatterns = [
    path("breaks/", _page_that_breaks),
    path("api/breaks/", _ApiThatBreaks.as_view()),
    path("answers/", _page_that_answers),
    *evalsite.urls.urlpatterns,
]
handler500 = getattr(evalsite.urls, "handler500", "django.views.defaults.server_error")  # as the site sets it

CANARY = f"canary-{uuid.uuid4().hex}"  # a value of the process's environment and of the request's


@pytest.fixture
def broken_site(monkeypatch, caplog):
    monkeypatch.setenv("EVALSITE_TEST_CANARY", CANARY)
    caplog.set_level(logging.ERROR, logger="evalsite.errors")
    with override_settings(ROOT_URLCONF=__name__):
        yield caplog


def _request_that_breaks(path_: str, *, debug: bool, user=None):
    client = Client(raise_request_exception=False)
    if user is not None:
        client.force_login(user)
    with override_settings(DEBUG=debug):
        return client.get(path_, HTTP_X_CANARY=CANARY, EVALSITE_TEST_CANARY=CANARY)


def _the_logged_error(caplog, error_id: str, message: str):
    """The one record of ``evalsite.errors`` with the error id: it holds the exception's traceback."""
    records = [r for r in caplog.records if r.name == "evalsite.errors" and error_id in r.getMessage()]
    assert len(records) == 1, [r.getMessage() for r in caplog.records]
    [record] = records
    assert record.exc_info and record.exc_info[0] is Boom
    trace = logging.Formatter().formatException(record.exc_info)
    assert trace.startswith("Traceback") and f"Boom: {message}" in trace, trace
    return record


@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_a_server_error_shows_the_sites_page_with_an_error_id_and_nothing_else(broken_site, debug):
    user = get_user_model().objects.create_user("someone", password="pw")
    answer = _request_that_breaks("/breaks/", debug=debug, user=user)
    body = answer.content.decode()
    assert answer.status_code == 500 and answer["Content-Type"].startswith("text/html")
    leaked = [secret for secret in ("SECRET_KEY", "DATABASES", "Traceback", "the view broke", "Boom", CANARY,
                                    "EVALSITE_TEST_CANARY", "settings", "PATH") if secret in body]
    assert not leaked, f"the 500 page shows {leaked}"
    shown = re.search(r'<code id="error-id">([0-9a-f]{12})</code>', body)
    assert shown, "the 500 page shows no error id"
    error_id = shown.group(1)
    record = _the_logged_error(broken_site, error_id, "the view broke")
    assert "GET /breaks/" in record.getMessage() and "someone" in record.getMessage()
    assert "_page_that_breaks" in logging.Formatter().formatException(record.exc_info)


@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_a_server_error_in_the_api_is_json_with_the_error_id(broken_site, debug):
    user = get_user_model().objects.create_user("someone", password="pw")
    answer = _request_that_breaks("/api/breaks/", debug=debug, user=user)
    assert answer.status_code == 500 and answer["Content-Type"].startswith("application/json")
    body = answer.json()
    assert body == {"detail": "Server error", "error_id": body["error_id"]} and len(body["error_id"]) >= 8
    assert CANARY not in answer.content.decode()
    _the_logged_error(broken_site, body["error_id"], "the API view broke")


def test_each_server_error_has_its_own_id(broken_site):
    user = get_user_model().objects.create_user("someone", password="pw")
    bodies = [_request_that_breaks("/api/breaks/", debug=debug, user=user).json() for debug in (True, True, False)]
    assert len({body.get("error_id") for body in bodies}) == 3, bodies


@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_pages_that_answer_and_404s_are_left_alone(broken_site, debug):
    client = Client()
    with override_settings(DEBUG=debug):
        assert client.get("/answers/").content == b"fine"
        missing = client.get("/no-such-page/")
    assert missing.status_code == 404 and "SECRET_KEY" not in missing.content.decode()
    assert not [r for r in broken_site.records if r.name == "evalsite.errors"]


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1:8000\x00"], ids=["foreign-host", "garbled-host"])
def test_with_debug_on_a_request_refused_outside_any_view_shows_no_settings(broken_site, host):
    """Django answers a disallowed Host header before any view, with its debug page under DEBUG."""
    client = Client(raise_request_exception=False)
    with override_settings(DEBUG=True, ALLOWED_HOSTS=["127.0.0.1"]):
        answer = client.get("/answers/", HTTP_HOST=host, HTTP_X_CANARY=CANARY)
    body = answer.content.decode()
    assert answer.status_code == 400
    leaked = [secret for secret in ("SECRET_KEY", "DATABASES", "Traceback", "DisallowedHost", CANARY, "PATH")
              if secret in body]
    assert not leaked, f"the page shows {leaked}"
    error_id = re.search(r'<code id="error-id">([0-9a-f]{12})</code>', body).group(1)
    assert any(error_id in r.getMessage() and r.exc_info for r in broken_site.records if r.name == "evalsite.errors")
