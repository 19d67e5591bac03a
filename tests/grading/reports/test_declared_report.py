"""A report is declared once (issue 23, "Done when"): a report declared here, in the test module —
label counts per cohort — gets a working command, a page in the report menu with its htmx
partial and CSV, and an API endpoint documented in the OpenAPI schema, with no other file
touched: the routes, the menu and the schema read the registry."""
import csv
import io
import json

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from grading.reports import registry
from grading.reports.cli import report_command
from grading.reports.inputs import report_table
from grading.reports.registry import Page, Params, Report, choice
from grading.sources import project_sources
from tests.roles import grant


class LabelCountParams(Params):
    verdict = choice(["any", "met", "not_met"], what="verdict", default="any", help_text="count only this verdict")


def label_counts(*, inputs, verdict: str = "any") -> dict:
    """Decided (response, criterion) items per cohort, of one verdict or any."""
    rows = []
    for cohort in project_sources(project=inputs.project)["cohorts"]:
        frame = inputs.decisions(cohort)
        rows.append([cohort.spec, int(len(frame) if verdict == "any" else (frame["verdict"] == verdict).sum())])
    return {"verdict": verdict, "counts": dict(rows), "tables": {"counts": report_table(["cohort", "n"], rows)}}


LABEL_COUNTS = Report(
    key="label_counts", title="Label counts", help="Decided items per cohort.",
    params=LabelCountParams, compute=label_counts, intervals=False, cannot_assess="verdict",
    page=Page(params=LabelCountParams,
              build=lambda *, project, **params: LABEL_COUNTS.run(project=project, **params), position=200),
)


@pytest.fixture
def declared():
    registry.register(LABEL_COUNTS)
    yield LABEL_COUNTS
    registry.unregister(LABEL_COUNTS.key)


@pytest.fixture
def viewer(mini_project):
    client = Client()
    client.force_login(grant(get_user_model().objects.create_user("counter"), mini_project, "viewer"))
    return client


def _command(*args) -> dict:
    out = io.StringIO()
    call_command(report_command("label_counts")(), "--project=mini", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_command(declared, mini_project):
    every, met = _command(), _command("--verdict=met")
    # tests/bundles.py: both cohorts decide r1, r2, r4 x ecg, call, abx and r3's tone and length; 5 and 6 of them met
    assert every["counts"] == {"cohort:group-1": 11, "cohort:group-2": 11}
    assert met["counts"] == {"cohort:group-1": 5, "cohort:group-2": 6}
    assert every["n_excluded_cases"] == 0 and "model_subset" not in every
    assert _command("--models=model-a")["counts"] == {"cohort:group-1": 5, "cohort:group-2": 5}  # r1 and r3
    with pytest.raises(Exception, match="invalid choice"):
        _command("--verdict=maybe")


def test_the_api_endpoint_answers_as_the_command(declared, viewer):
    url = "/api/projects/mini/reports/label_counts/"
    assert viewer.get(url, {"verdict": "met"}).json() == _command("--verdict=met")
    bad = viewer.get(url, {"verdict": "maybe"})
    assert bad.status_code == 400 and "unknown verdict 'maybe'" in bad.json()["verdict"][0]
    assert viewer.get(url, {"ci": "true"}).status_code == 400  # no intervals declared: no such parameter
    assert Client().get(url).status_code in (401, 403)


def test_the_page_its_partial_its_csv_and_the_menu(declared, viewer):
    url = "/projects/mini/reports/label_counts/"
    html = viewer.get(url, {"verdict": "met"}).content.decode()
    assert 'id="table-counts"' in html and "<h1>Label counts</h1>" in html
    assert 'href="/projects/mini/reports/label_counts/"' in html  # in the report menu, after the others
    partial = viewer.get(url, {"verdict": "met"}, HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<div id="report">') and "<h1>" not in partial
    rows = list(csv.reader(io.StringIO(viewer.get(url, {"verdict": "met", "format": "csv", "table": "counts"}).content.decode())))
    assert rows == [["cohort", "n"], ["cohort:group-1", "5"], ["cohort:group-2", "6"]]
    assert "label_counts" in viewer.get("/projects/mini/").content.decode()  # the project page's report links
    assert 'id="report-error"' in viewer.get(url, {"verdict": "maybe"}).content.decode()


def test_the_schema_documents_the_endpoint_and_its_parameters(declared, db):
    out = io.StringIO()
    call_command("spectacular", "--fail-on-warn", stdout=out)
    operation = yaml.safe_load(out.getvalue())["paths"]["/api/projects/{slug}/reports/label_counts/"]["get"]
    parameters = {p["name"]: p for p in operation["parameters"]}
    assert operation["operationId"] == "report_label_counts"
    assert parameters["verdict"]["schema"]["enum"] == ["any", "met", "not_met"]
    assert {"models", "exclude_models"} <= set(parameters) and "ci" not in parameters


def test_unregistered_it_is_gone(mini_project, viewer):
    assert viewer.get("/projects/mini/reports/label_counts/").status_code == 404
    assert viewer.get("/api/projects/mini/reports/label_counts/").status_code == 404
