"""The rows of the role matrix (tests/test_role_matrix.py): one ``Url`` per URL pattern and
variant, with the action of ``annotation.access`` it needs and the status an allowed request gets."""
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from grading.api.reports import report_status_token
from grading.reports.registry import computed_reports, pages, report_get

HTMX = {"HTTP_HX_REQUEST": "true"}

# --- the matrix -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Url:
    """One row of the matrix.

    ``rule``: an action of ``annotation.access`` (view, inspect, adjudicate, export, manage);
    "cohort" for the annotators' and checkers' URLs (404 for every principal here); "signed-in"
    for what every signed-in user gets alike; "superuser" for what only superusers may do.
    ``get`` / ``post``: the status of an allowed GET / POST; None when the URL takes no GET
    (405) or no POST (none is sent). ``data`` builds the POST's form from (home, target), the
    projects of the slug and of the object ids. ``changes``: an allowed POST writes rows, which
    shows that the same POST, refused, would have had something to write.
    """

    name: str
    kwargs: Callable[[SimpleNamespace, SimpleNamespace], dict]
    rule: str
    get: int | None = 200
    post: int | None = None
    data: Callable[[SimpleNamespace, SimpleNamespace], dict] = lambda h, t: {}
    changes: bool = False
    query: Callable[[SimpleNamespace, SimpleNamespace], str] = lambda h, t: ""
    label: str = ""
    headers: dict = field(default_factory=dict)
    variants: tuple[str, ...] = ("own", "other")
    other: dict = field(default_factory=dict)  # API methods besides GET and POST: {"patch": 200, "delete": 204}
    members: dict = field(default_factory=dict)  # cohort members it answers on mini's objects: {principal: {method: status}}
    methods: tuple[str, ...] = ("get", "post")  # which of GET and POST this row sends

    def allowed(self, method: str) -> int | None:
        return {"get": self.get, "post": self.post, **self.other}.get(method)

    @property
    def id(self) -> str:
        return f"{self.name}+{self.label}" if self.label else self.name

    @property
    def api(self) -> bool:
        return self.name.startswith("api-")

    def path(self, home, target) -> str:
        return reverse(self.name, kwargs=self.kwargs(home, target)) + self.query(home, target)


ALL = ("own", "other", "mixed")  # the URLs with a slug and an object id also get "mixed"


def slug(h, t):
    return {"slug": h.slug}


def nothing(h, t):
    return {}


def upload(h, t) -> dict:
    return {"bundle": SimpleUploadedFile("bundle.zip", b"PK\x05\x06" + bytes(18), content_type="application/zip")}


def judge_form(h, t) -> dict:
    """A valid new judge of the judges page (an offline baseline: nothing is called)."""
    fields = {"name": "matrix-judge", "backend": "baseline", "model": "lexical", "condition": "anonymized",
              "temperature": "0", "samples": "1", "concurrency": "1", "max_retries": "0", "timeout_seconds": "60",
              "shuffle_seed": "0", "min_evidence": "0", "few_shot_k": "0", "few_shot_seed": "0", "json_mode": "on",
              "price_in_per_mtok": "0", "price_out_per_mtok": "0"}
    return {"action": "judge", **{f"judge-{name}": value for name, value in fields.items()}}


def cohort_query(name: str):
    return lambda h, t: f"?{name}=cohort:{t.cohort_name}"


def cohort_and_gold(h, t) -> str:
    return f"?a=cohort:{t.cohort_name}&b=gold"


def report_status(h, t) -> dict:
    """The status URL of a coverage request on the target's project, as its 202 answer names it."""
    query = {"source": f"cohort:{t.cohort_name}"}
    return {"slug": h.slug, "token": report_status_token(project=t.project, report=report_get("coverage"), query=query)}


REPORT_QUERIES = {
    "agreement": cohort_and_gold, "reliability_report": cohort_and_gold, "cross_grader": cohort_and_gold,
    "reliability": cohort_query("source"), "pairwise_agreement": cohort_query("source"), "coverage": cohort_query("source"),
    "calibrate_k": cohort_query("source"), "scores": cohort_query("source"), "verbosity": cohort_query("source"),
    "healthbench_score": cohort_query("source"),
    "trait_scores": cohort_query("source"), "bias_matrix": lambda h, t: "?condition=anonymized",
    "stability": lambda h, t: f"?judge={t.judge_name}", "adjudication_queue": lambda h, t: "",
    "ppi_estimate": lambda h, t: f"?human=cohort:{t.cohort_name}&judge=judge:{t.judge_name}",
    "routing": lambda h, t: f"?cohort=cohort:{t.cohort_name}&judge=judge:{t.judge_name}",
}
API_ROWS = [
    Url("api-projects", nothing, "signed-in", variants=("own",)),
    Url("api-projects", nothing, "superuser", post=202, data=upload, changes=True, label="create", methods=("post",),
        variants=("own",)),
    Url("api-project", slug, "view"),
    Url("api-project-roles", slug, "manage", post=200, data=lambda h, t: {"username": "nobody", "role": "viewer"}, changes=True),
    Url("api-project-import", slug, "manage", get=None, post=202, data=upload, changes=True),
    Url("api-gold-export", slug, "export", get=None, post=202, changes=True),
    Url("api-project-jobs", slug, "export"),
    Url("api-cases", slug, "inspect"),
    Url("api-criteria", slug, "view"),
    Url("api-rubric-versions", slug, "view"),
    Url("api-responses", slug, "inspect"),
    Url("api-cohorts", slug, "manage"),
    Url("api-cohort-members", lambda h, t: {"slug": h.slug, "cohort_id": t.cohort}, "manage", get=None, post=201,
        data=lambda h, t: {"username": "nobody"}, changes=True, variants=ALL),
    Url("api-project-assignments", slug, "manage", post=201, data=lambda h, t: {"cohort": "fresh", "overlap": 2}, changes=True),
    Url("api-routing", slug, "manage", get=None, post=200, data=lambda h, t: {"cohort": h.cohort_name, "budget": 2},
        changes=True),
    Url("api-assignment-reassign", lambda h, t: {"slug": h.slug, "assignment_id": t.open_assignment}, "manage", get=None,
        post=200, data=lambda h, t: {"annotator": t.reassign_to}, changes=True, variants=ALL),
    Url("api-judges", slug, "manage", post=201, data=lambda h, t: {"name": "matrix-api-judge", "backend": "baseline"},
        changes=True),
    Url("api-judge", lambda h, t: {"slug": h.slug, "judge_id": t.editable_judge}, "manage", other={"patch": 200, "delete": 204},
        data=lambda h, t: {"temperature": 0.5}, changes=True, variants=ALL),
    Url("api-runs", slug, "manage", post=202, data=lambda h, t: {"judge": "lexical"}, changes=True),
    Url("api-run", lambda h, t: {"slug": h.slug, "run_id": t.stopped_run}, "manage", variants=ALL),
    Url("api-run-stop", lambda h, t: {"slug": h.slug, "run_id": t.running_run}, "manage", get=None, post=200, changes=True,
        variants=ALL),
    Url("api-run-resume", lambda h, t: {"slug": h.slug, "run_id": t.stopped_run}, "manage", get=None, post=200, changes=True,
        variants=ALL),
    Url("api-judgments", slug, "inspect"),
    Url("api-annotator-quality", slug, "manage", other={"patch": 200}, data=lambda h, t: {"check_window": 7}, changes=True),
    Url("api-check-seed", slug, "manage", get=None, post=400, data=lambda h, t: {"seed": 1}),  # a rate of 0: refused
    Url("api-my-feedback", slug, "cohort", members={"annotator1": {"get": 403}, "annotator2": {"get": 403}}),
    Url("api-adjudications", slug, "adjudicate", post=200, changes=True,
        data=lambda h, t: {"response_id": t.response_external_id, "criterion_id": t.criterion_external_id, "verdict": "met",
                           "revision": 0}),
    # verbosity and trait_scores reach their command, which cannot answer on mini's data (too few responses, no
    # traits): 409, the state of the data, not the request
    *[Url(f"api-report-{report.key.replace('_', '-')}", slug, report.action, query=REPORT_QUERIES[report.key],
          get=409 if report.key in ("verbosity", "trait_scores") else 200) for report in computed_reports()],
    Url("api-report-status", report_status, "view", variants=ALL),  # mixed: a request of the other project, 404
    Url("api-job", lambda h, t: {"job_id": t.export_job}, "export", label="export"),
    Url("api-job", lambda h, t: {"job_id": t.import_job}, "manage", label="import"),
    Url("api-job-download", lambda h, t: {"job_id": t.export_job}, "export"),
]

REPORT_PAGES = tuple(key for key, _ in pages())  # every page the registry declares

MATRIX: list[Url] = [
    # the project page, the report pages with their CSV and their retry (any role)
    Url("project-detail", slug, "view"),
    Url("project-detail", slug, "view", label="roles+htmx", headers={**HTMX, "HTTP_HX_TARGET": "role-list"}),
    Url("report-index", slug, "view"),
    *[Url(f"report-{page}", slug, "view", post=302, data=lambda h, t: {"retry": "1"}) for page in REPORT_PAGES],
    *[Url(f"report-{page}", slug, "view", label="csv", query=lambda h, t: "?format=csv&table=figures") for page in REPORT_PAGES],
    Url("report-agreement", slug, "view", label="htmx", headers=HTMX),
    # side by side and the decisions API (adjudicators and managers)
    Url("side-by-side-lookup", slug, "inspect", get=302, query=lambda h, t: f"?response={t.response_external_id}", variants=ALL),
    Url("response-side-by-side", lambda h, t: {"pk": t.response}, "inspect"),
    Url("api-decisions", slug, "inspect", query=lambda h, t: f"?source=cohort:{t.cohort_name}"),
    # the pipeline API (grading.api): the same rule as the pages
    *API_ROWS,
    # adjudication (adjudicators and managers)
    Url("adjudication-queue", slug, "adjudicate"),
    Url("adjudication-next", slug, "adjudicate", get=302),
    Url("adjudication-item", lambda h, t: {"slug": h.slug, "response_id": t.response}, "adjudicate", variants=ALL),
    *[Url("adjudication-save", lambda h, t: {"slug": h.slug, "response_id": t.response, "criterion_id": t.criterion},
          "adjudicate", get=None, post=status, data=lambda h, t: {"choice": "verdict:met", "note": "matrix"}, changes=True,
          label=label, headers=headers, variants=ALL) for label, headers, status in (("", {}, 302), ("htmx", HTMX, 200))],
    # gold export (adjudicators and managers) and its job page and file
    Url("project-export", slug, "export", get=None, post=302, changes=True),
    Url("project-export", slug, "export", get=None, post=200, changes=True, label="htmx", headers=HTMX),
    Url("data-job", lambda h, t: {"job_id": t.export_job}, "export", label="export"),
    Url("data-job", lambda h, t: {"job_id": t.export_job}, "export", label="export+htmx", headers=HTMX),
    Url("data-job-download", lambda h, t: {"job_id": t.export_job}, "export"),
    Url("project-jobs", slug, "export"),
    Url("project-jobs", slug, "export", label="htmx", headers={**HTMX, "HTTP_HX_TARGET": "job-list"}),
    # managers: import, judges and runs, assignments, roles, quality control
    Url("project-import", slug, "manage", get=None, post=302, data=upload, changes=True),
    Url("data-job", lambda h, t: {"job_id": t.import_job}, "manage", label="import"),
    # the column step of an uploaded table: this import is not held for its columns, so the step sends to its page
    Url("data-job-columns", lambda h, t: {"job_id": t.import_job}, "manage", get=302, post=302),
    Url("judges-page", slug, "manage", post=302, data=judge_form, changes=True),
    Url("judge-edit", lambda h, t: {"slug": h.slug, "judge_id": t.editable_judge}, "manage", post=302, variants=ALL,
        data=lambda h, t: {**{k.removeprefix("judge-"): v for k, v in judge_form(h, t).items() if k != "action"},
                           "name": "lexical", "requests_per_minute": "60"}, changes=True),
    Url("judge-runs", slug, "manage", headers=HTMX),
    Url("judge-run-list", slug, "manage"),
    Url("judge-run-list", slug, "manage", label="htmx", headers={**HTMX, "HTTP_HX_TARGET": "run-list"}),
    *[Url("judge-run-start", slug, "manage", get=None, post=status, data=lambda h, t: {"judge": t.judge, "cases": "c1"},
          changes=True, label=label, headers=headers) for label, headers, status in (("", {}, 302), ("htmx", HTMX, 200))],
    Url("judge-run-page", lambda h, t: {"slug": h.slug, "run_id": t.stopped_run}, "manage", variants=ALL),
    Url("judge-run-stop", lambda h, t: {"slug": h.slug, "run_id": t.running_run}, "manage", get=None, post=302,
        changes=True, variants=ALL),
    Url("judge-run-resume", lambda h, t: {"slug": h.slug, "run_id": t.stopped_run}, "manage", get=None, post=302,
        changes=True, variants=ALL),
    Url("project-assignments", slug, "manage"),
    Url("project-assign", slug, "manage", get=None, post=302, changes=True,
        data=lambda h, t: {"cohort": t.cohort, "overlap": "2", "method": "round_robin"}),
    Url("project-reassign", lambda h, t: {"slug": h.slug, "assignment_id": t.open_assignment}, "manage", get=None, post=302,
        data=lambda h, t: {"username": t.reassign_to}, changes=True, variants=ALL),
    Url("project-reopen", lambda h, t: {"slug": h.slug, "assignment_id": t.assignment}, "manage", get=None, post=302,
        data=lambda h, t: {"reason": "a second look"}, changes=True, variants=ALL),
    Url("project-role-update", slug, "manage", get=None, post=302, data=lambda h, t: {"username": "nobody", "role": "manager"},
        changes=True),
    Url("project-guidelines-update", slug, "manage", get=None, post=302, data=lambda h, t: {"guidelines": "Read twice."},
        changes=True),
    Url("project-stratum-groups-update", slug, "manage", get=None, post=302,
        data=lambda h, t: {"stratum_groups": '{"task_themes": {"urgent": ["emergency"]}}'}, changes=True),
    Url("project-guidance", slug, "manage", post=302, data=lambda h, t: {"criterion": t.criterion, "guidance": "Look twice."},
        changes=True),
    Url("qc-page", slug, "manage"),
    Url("routing-extend", slug, "manage", get=None, post=302, data=lambda h, t: {"cohort": h.cohort, "budget": "2"},
        changes=True),
    Url("quality-annotators", slug, "manage"),
    Url("quality-annotators-settings", slug, "manage", get=None, post=302, changes=True,
        data=lambda h, t: {"check_rate": "0.2", "check_alert_threshold": "0.6", "check_min_items": "3", "check_window": "5"}),
    # (the projects' rate is 0: the seeding says so and changes nothing)
    Url("quality-annotators-seed", slug, "manage", get=None, post=302, data=lambda h, t: {"seed": "1"}),
    # an annotator's own feedback: theirs only, and refused while the project does not show it
    Url("annotator-feedback", slug, "cohort", members={"annotator1": {"get": 403}, "annotator2": {"get": 403}}),
    Url("qc-page", slug, "manage", label="htmx", headers={**HTMX, "HTTP_HX_TARGET": "qc-flagged-list"}),
    Url("project-audit", slug, "manage"),
    Url("project-audit", slug, "manage", label="csv", query=lambda h, t: "?format=csv"),
    Url("qc-screen", slug, "manage", get=None, post=302, changes=True,
        data=lambda h, t: {"source": f"cohort:{t.cohort_name}", "models": ["model-a"], "threshold": "50"}),
    Url("qc-sample", slug, "manage", get=None, post=302, data=lambda h, t: {"share": "1", "seed": "1"}, changes=True),
    Url("qc-outcome", lambda h, t: {"slug": h.slug, "case_id": t.qc_case}, "manage", get=None, post=302,
        data=lambda h, t: {"outcome": "remove", "note": "matrix"}, changes=True, variants=ALL),
    Url("qc-reinstate", lambda h, t: {"slug": h.slug, "case_id": t.qc_case}, "manage", get=None, post=302,
        data=lambda h, t: {"note": "matrix"}, changes=True, variants=ALL),
    # not a project's: a new project is the superusers', the home page and "next" are every user's own
    Url("site-import", nothing, "superuser", get=None, post=302, data=upload, changes=True, variants=("own",)),
    Url("home", nothing, "signed-in", variants=("own",)),
    Url("next-item", nothing, "signed-in", get=302, variants=("own",)),
    Url("my-items", nothing, "signed-in", variants=("own",)),
    Url("metrics-help", nothing, "signed-in", variants=("own",)),  # the help page: what the figures mean
    Url("api-assignments", nothing, "signed-in", variants=("own",)),
    # cohort members' URLs: an annotator's assignment, a checker's review (no role reaches them)
    Url("label-page", lambda h, t: {"assignment_id": t.open_assignment}, "cohort"),
    Url("label-save", lambda h, t: {"assignment_id": t.open_assignment, "criterion_id": t.criterion}, "cohort", get=None,
        post=404, data=lambda h, t: {"verdict": "met"}),
    Url("label-save-batch", lambda h, t: {"assignment_id": t.open_assignment}, "cohort", get=None, post=404,
        data=lambda h, t: {"batch": f'[{{"criterion": {t.criterion}, "verdict": "met"}}]'}),
    Url("label-submit", lambda h, t: {"assignment_id": t.open_assignment}, "cohort", get=None, post=404,
        data=lambda h, t: {"seconds": "5"}),
    Url("label-time", lambda h, t: {"assignment_id": t.open_assignment}, "cohort", get=None, post=404,
        data=lambda h, t: {"seconds": "5"}),
    # (the checker of mini's first cohort reaches these on mini's objects: its own review work)
    Url("review-queue", slug, "cohort", members={"checker": {"get": 200}}),
    Url("review-page", lambda h, t: {"response_id": t.response}, "cohort", members={"checker": {"get": 200}}),
    Url("review-save", lambda h, t: {"response_id": t.response, "criterion_id": t.criterion}, "cohort", get=None, post=404,
        data=lambda h, t: {"choice": "verdict:met", "note": "matrix"}, members={"checker": {"post": 302}}),
    Url("review-complete", lambda h, t: {"response_id": t.response}, "cohort", get=None, post=404,
        members={"checker": {"post": 302}}),
    Url("review-assignment", lambda h, t: {"assignment_id": t.assignment}, "cohort", members={"checker": {"get": 302}}),
    Url("review-reopen", lambda h, t: {"assignment_id": t.assignment}, "cohort", get=None, post=404,
        members={"checker": {"post": 302}}),
    Url("api-assignment", lambda h, t: {"assignment_id": t.open_assignment}, "cohort"),
    Url("api-assignment-submit", lambda h, t: {"assignment_id": t.open_assignment}, "cohort", get=None, post=404),
    Url("api-assignment-labels", lambda h, t: {"assignment_id": t.open_assignment}, "cohort", get=None, post=404,
        data=lambda h, t: {"labels": [{"criterion": t.criterion, "verdict": "met", "revision": 0}]}),
    Url("api-labels", nothing, "cohort", get=None, post=404,
        data=lambda h, t: {"assignment": t.open_assignment, "criterion": t.criterion, "verdict": "met", "revision": 0}),
]
