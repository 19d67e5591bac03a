"""A whole study through the API only (issue 15, "done when"): a superuser creates the project
from a bundle, a manager adds the cohorts' members and assigns the work, four annotators label
and submit through their own tokens, the manager runs the baseline judge, reads the agreement
report (the command's JSON), an adjudicator settles every disputed criterion from the queue,
and the gold export downloaded through the API holds what ``export_gold`` writes.

Only accounts and their tokens are made outside the API (``api_token``), as an administrator
would. Celery runs eagerly here; the worker path of the same jobs is tests/test_broker*.py.
"""
import io
import json
import zipfile
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from tests.bundles import bundle_parts, write_bundle
from tests.celery_workers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)  # on_commit work (jobs, runs) runs as it would live


def _token(username: str, superuser: bool = False) -> Client:
    User = get_user_model()
    if superuser:
        User.objects.create_superuser(username, password="x-secret-password")
    else:
        User.objects.create_user(username)
    out = StringIO()
    call_command("api_token", username, "--json", stdout=out)
    return Client(HTTP_AUTHORIZATION=f"Token {json.loads(out.getvalue())['token']}")


def _zip(tmp_path) -> bytes:
    parts = bundle_parts()
    parts["project"].update(slug="pipe", name="Pipeline study", judges=[])
    parts["labels"], parts["judgments"] = [], []
    folder = write_bundle(tmp_path / "bundle", parts)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)
    return buffer.getvalue()


def _ok(response, status: int = 200):
    assert response.status_code == status, (response.status_code, response.content[:500])
    return response.json() if response.content else None


def _wait_ended(client: Client, url: str, what: str) -> dict:
    """Poll a job's or a run's status URL until it has ended (eagerly: at once); a bound, not a pace."""
    def ended():
        state = _ok(client.get(url))
        return state if state["status"] in ("finished", "failed") else None

    return wait_for(ended, 60, f"{what} at {url} to end", every=0.1)


def _wait_job(client: Client, url: str) -> dict:
    return _wait_ended(client, url, "the job")


def _all(client: Client, url: str) -> list:
    rows, page = [], _ok(client.get(url, {"limit": 2}))
    rows += page["results"]
    while page["next"]:
        page = _ok(client.get(page["next"]))
        rows += page["results"]
    assert len(rows) == page["count"]
    return rows


def _decisions(detail: dict, cohort: str) -> list[dict]:
    """The annotator's decisions: cohort group-2 disagrees with group-1 on the first binary criterion."""
    decisions = []
    for index, criterion in enumerate(detail["criteria"]):
        item = {"criterion": criterion["id"], "revision": 0, "rationale": f"{cohort} reasoning"}
        if criterion["kind"] == "binary":
            verdict = "met" if index % 2 == 0 else "not_met"
            if criterion["criterion_id"] == "c1-call":
                verdict = "not_met"  # met would need a quote
            if cohort == "group-2" and index == 0:
                verdict = "not_met" if verdict == "met" else "met"
            item["verdict"] = verdict
        else:
            item["option"] = criterion["options"][1]["label"] if cohort == "group-1" else criterion["options"][0]["label"]
        decisions.append(item)
    return decisions


def test_a_whole_study_through_the_api(tmp_path, settings):
    settings.EVALSITE_JOBS_DIR = tmp_path / "jobs"
    root = _token("root", superuser=True)
    manager, adjudicator = _token("mgr"), _token("adj")
    annotators = {name: _token(name) for name in ("p1", "p2", "p3", "p4")}

    # 1. The project from a bundle: a job with a status URL.
    job = _ok(root.post("/api/projects/", {"bundle": _upload(_zip(tmp_path))}), 202)
    job = _wait_job(root, job["url"])
    assert job["status"] == "finished" and job["project"] == "pipe", job
    _ok(root.post("/api/projects/pipe/roles/", {"username": "mgr", "role": "manager"}, content_type="application/json"))
    _ok(manager.post("/api/projects/pipe/roles/", {"username": "adj", "role": "adjudicator"}, content_type="application/json"))
    assert _ok(manager.get("/api/projects/pipe/"))["role"] == "manager"
    assert [c["case_id"] for c in _all(manager, "/api/projects/pipe/cases/")] == ["c1", "c2"]

    # 2. Cohorts' members and the assignments.
    cohorts = {c["name"]: c for c in _all(manager, "/api/projects/pipe/cohorts/")}
    for cohort, names in (("group-1", ("p1", "p2")), ("group-2", ("p3", "p4"))):
        for name in names:
            _ok(manager.post(f"/api/projects/pipe/cohorts/{cohorts[cohort]['id']}/members/", {"username": name},
                             content_type="application/json"), 201)
        made = _ok(manager.post("/api/projects/pipe/assignments/", {"cohort": cohort, "overlap": 1}, content_type="application/json"), 201)
        assert made["created"] == 4  # four responses, one annotator each
    assert len(_all(manager, "/api/projects/pipe/assignments/?status=open")) == 8

    # 3. Annotators label in batches and submit.
    for name, client in annotators.items():
        cohort = "group-1" if name in ("p1", "p2") else "group-2"
        mine = _ok(client.get("/api/assignments/", {"project": "pipe", "status": "open"}))["results"]
        assert mine and all(a["project"] == "pipe" for a in mine)
        for assignment in mine:
            detail = _ok(client.get(f"/api/assignments/{assignment['id']}/"))
            assert "model" not in detail["response"]  # blind project
            saved = _ok(client.post(f"/api/assignments/{assignment['id']}/labels/", _decisions(detail, cohort),
                                    content_type="application/json"))
            assert len(saved) == len(detail["criteria"])
            assert _ok(client.post(f"/api/assignments/{assignment['id']}/submit/"))["status"] == "submitted"

    # 4. The baseline judge, run on a worker (eagerly here) and followed at its URL.
    _ok(manager.post("/api/projects/pipe/judges/", {"name": "baseline", "backend": "baseline"}, content_type="application/json"), 201)
    run = _ok(manager.post("/api/projects/pipe/runs/", {"judge": "baseline"}, content_type="application/json"), 202)
    run = _wait_ended(manager, f"/api/projects/pipe/runs/{run['id']}/", "the run")
    assert run["status"] == "finished" and run["done_calls"] == run["total_calls"] > 0, run
    assert len(_all(adjudicator, "/api/projects/pipe/judgments/?judge=baseline")) == run["total_calls"]

    # 5. The agreement report is the command's JSON.
    query = {"a": "cohort:group-1", "b": "cohort:group-2"}
    report = _ok(manager.get("/api/projects/pipe/reports/agreement/", query))
    out = StringIO()
    call_command("agreement", "--project", "pipe", "--a", "cohort:group-1", "--b", "cohort:group-2", "--json", stdout=out)
    assert report == json.loads(out.getvalue()) and report["mf1"] is not None
    fidelity = _ok(manager.get("/api/projects/pipe/reports/agreement/", {"a": "cohort:group-1", "b": "judge:baseline"}))
    assert "mf1" in fidelity

    # 6. The adjudicator settles every disputed criterion from the queue.
    queue = _ok(adjudicator.get("/api/projects/pipe/reports/adjudication_queue/"))
    assert queue["n_disputed"] > 0
    criteria = {(c["case_id"], c["criterion_id"]) for c in _all(adjudicator, "/api/projects/pipe/criteria/")}
    for item in queue["items"]:
        for criterion_id in item["disputed"]:
            kind = "binary" if (item["case_id"], criterion_id) in criteria else "option"
            body = {"response_id": item["response_id"], "criterion_id": criterion_id, "revision": 0,
                    "confidence": "certain", "category": "annotator_slip", "note": "settled via the API"}
            if kind == "binary":
                body["verdict"] = "met"
            else:
                options = next(c for c in _all(adjudicator, "/api/projects/pipe/criteria/")
                               if c["criterion_id"] == criterion_id)["options"]
                body["option"] = options[1]["label"]
            _ok(adjudicator.post("/api/projects/pipe/adjudications/", body, content_type="application/json"))
    assert _ok(adjudicator.get("/api/projects/pipe/reports/adjudication_queue/"))["n_items"] == 0

    # 7. Gold: an export job, downloaded, equal to export_gold's files.
    job = _wait_job(adjudicator, _ok(adjudicator.post("/api/projects/pipe/gold/"), 202)["url"])
    assert job["status"] == "finished" and job["download_url"], job
    download = adjudicator.get(job["download_url"])
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    call_command("export_gold", "--project", "pipe", "--out", str(tmp_path / "gold"), "--json", stdout=StringIO())
    local = {path.name: path.read_bytes() for path in (tmp_path / "gold").iterdir()}
    downloaded = {name.split("/", 1)[1]: archive.read(name) for name in archive.namelist()}
    assert set(downloaded) == set(local) and {"gold.jsonl", "labels.jsonl", "adjudications.jsonl"} <= set(local)
    for name in sorted(set(local) - {"manifest.json"}):  # the manifest says when it was made
        assert downloaded[name] == local[name], name
    manifests = json.loads(downloaded["manifest.json"]), json.loads(local["manifest.json"])
    assert manifests[0]["files"] == manifests[1]["files"]
    gold = [json.loads(line) for line in downloaded["gold.jsonl"].decode().splitlines()]
    assert gold and not any(row["provenance"] == "unresolved" for row in gold)
    assert any(row["provenance"] == "adjudicated" for row in gold)


def _upload(content: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("pipe.zip", content, content_type="application/zip")
