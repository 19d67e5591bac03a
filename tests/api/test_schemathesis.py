"""Schemathesis against a live server (issue 15, point 2): every operation of the OpenAPI schema,
as an annotator and as a manager, with data that fits the schema and with data that does not.
No answer may be a server error, and every answer must conform to the schema: its status is
documented, its content type and body are the documented ones.

Judge runs and data jobs are only queued here (their workers are other tests'), so a generated
judge pointing at a closed loopback port is never called. Hypothesis runs a bounded number of
examples per operation (``EXAMPLES``), seeded, so the test takes the same time on every run;
``SCHEMATHESIS_SEED`` in the environment runs it with another seed (the default is ``SEED``).
"""
import json
import os

import pytest
import requests
import schemathesis
from django.contrib.auth import get_user_model
from django.core.management import call_command
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from annotation.assignments import assignments_create
from annotation.models import Assignment, Cohort, CohortMembership, Project
from grading.bundles import bundle_import
from tests.bundles import write_bundle
from tests.roles import grant

pytestmark = pytest.mark.django_db(transaction=True)  # the live server's thread reads what the test wrote
EXAMPLES = {GenerationMode.POSITIVE: 6, GenerationMode.NEGATIVE: 4}
SEED = int(os.environ.get("SCHEMATHESIS_SEED", "20261124"))


def _token(username: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command("api_token", username, "--json", stdout=out)
    return json.loads(out.getvalue())["token"]


@pytest.fixture
def study(tmp_path, monkeypatch, settings):
    settings.EVALSITE_JOBS_DIR = tmp_path / "jobs"
    monkeypatch.setattr("grading.judges.services._enqueue", lambda run: None)
    monkeypatch.setattr("grading.jobs._enqueue", lambda job: None)
    bundle_import(path=write_bundle(tmp_path / "bundle"))
    project = Project.objects.get(slug="mini")
    User = get_user_model()
    grant(User.objects.create_user("fuzz-manager"), project)
    cohort = Cohort.objects.create(project=project, name="fuzz", position=5)
    CohortMembership.objects.create(project=project, cohort=cohort, user=User.objects.create_user("fuzz-annotator"))
    assignments_create(cohort=cohort, overlap=1)
    mine = Assignment.objects.filter(annotator__username="fuzz-annotator").first()
    return {"manager": _token("fuzz-manager"), "annotator": _token("fuzz-annotator"), "assignment": mine.pk}


def _operations(live_server):
    raw = requests.get(f"{live_server.url}/api/schema/?format=json", timeout=30).json()
    return raw, schemathesis.openapi.from_dict(raw)


def test_every_operation_answers_as_documented(live_server, study):
    raw, schema = _operations(live_server)
    assert len(raw["paths"]) >= 40
    failures, calls = [], 0
    for result in schema.get_all_operations():
        operation = result.ok()
        fixed = {}
        names = {p["name"] for p in operation.definition.raw.get("parameters", []) if p.get("in") == "path"}
        if "slug" in names:
            fixed["slug"] = "mini"
        if "assignment_id" in names:
            fixed["assignment_id"] = study["assignment"]
        for who in ("annotator", "manager"):
            headers = {"Authorization": f"Token {study[who]}"}
            for mode, examples in EXAMPLES.items():
                strategy = operation.as_strategy(generation_mode=mode, path_parameters=fixed or None)

                @seed(SEED)
                @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
                          suppress_health_check=list(HealthCheck))
                @given(case=strategy)
                def run(case):
                    nonlocal calls
                    calls += 1
                    # Every check, ST202 "schema-valid request rejected" too: a request that fits the schema
                    # and names what the project does not have is a 404, one its state refuses a 409.
                    case.call_and_validate(base_url=live_server.url, headers=headers)

                try:
                    run()
                except Unsatisfiable:
                    pass  # no invalid input exists for it (e.g. every parameter is fixed): nothing to send
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:  # noqa: BLE001 - schemathesis raises a FailureGroup; collect them all
                    failures.append(f"{operation.label} as {who} ({mode.value}): {str(exc)[:1500]}")
    assert calls > 400
    assert not failures, "\n\n".join(failures)
