"""Gold export and bundle import from the browser, as background jobs (issue 10, point 7): who may
start them, the .zip and its manifest (every hash verifies, counts by provenance), adjudications
travelling in the bundle, the upload limit and the all-or-nothing import, and export → import into
an empty database → identical gold and metrics."""
import hashlib
import io
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import CaseQuality, Criterion, Label, Project, Response
from grading.adjudication.services import adjudication_record
from grading.models import Adjudication, AdjudicationHistory, DataJob
from grading.reports.agreement import AGREEMENT
from grading.reports.coverage import COVERAGE
from grading.reports.scores import SCORES
from tests.bundles import bundle_parts, write_bundle
from tests.roles import grant

agreement_report, coverage_report, scores_report = AGREEMENT.answer, COVERAGE.answer, SCORES.answer

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def jobs_dir(settings, tmp_path):
    settings.EVALSITE_JOBS_DIR = tmp_path / "jobs"
    from django.core.cache import cache

    cache.clear()
    return settings.EVALSITE_JOBS_DIR


def user(name, project=None, role=None, **extra):
    made = get_user_model().objects.create_user(name, password="pw", **extra)
    if project is not None and role:
        grant(made, project, role)
    return made


def adjudicate(project, adjudicator):
    r2, ecg = Response.objects.get(external_id="r2"), Criterion.objects.get(external_id="c1-ecg")
    return adjudication_record(response=r2, criterion=ecg, user=adjudicator, verdict="met", confidence="probable",
                               category="annotator_slip", note="ECG is implied by 'cardiac workup'")


def export_zip(client, project, django_capture_on_commit_callbacks) -> tuple[DataJob, bytes]:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/projects/{project.slug}/export/", **HTMX)
    assert response.status_code == 200 and 'id="data-section"' in response.content.decode()
    job = DataJob.objects.filter(project=project, kind="export").latest("pk")
    assert job.status == "finished", job.error
    download = client.get(f"/jobs/{job.pk}/download/")
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    return job, b"".join(download.streaming_content)


def test_an_adjudicator_exports_gold_and_every_hash_verifies(mini_project, client, django_capture_on_commit_callbacks):
    adjudicator = user("adj", mini_project, "adjudicator")
    adjudicate(mini_project, adjudicator)
    client.force_login(adjudicator)
    job, data = export_zip(client, mini_project, django_capture_on_commit_callbacks)
    archive = zipfile.ZipFile(io.BytesIO(data))
    files = {name.split("/", 1)[1]: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(files.pop("manifest.json"))
    assert set(manifest["files"]) == set(files)
    for name, content in files.items():
        assert hashlib.sha256(content).hexdigest() == manifest["files"][name], name
    assert manifest["provenance"] == {"agreed": 10, "adjudicated": 1, "single-cohort": 0, "unresolved": 0}
    gold = {(g["response_id"], g["criterion_id"]): g for g in map(json.loads, files["gold.jsonl"].splitlines())}
    settled = gold[("r2", "c1-ecg")]
    assert (settled["provenance"], settled["verdict"], settled["adjudicator"], settled["confidence"], settled["category"]) == (
        "adjudicated", "met", "adj", "probable", "annotator_slip")
    assert settled["cohort_decisions"] == {"group-1": {"verdict": "not_met"}, "group-2": {"verdict": "met"}}
    [line] = files["adjudications.jsonl"].splitlines()
    assert json.loads(line) == {"response_id": "r2", "criterion_id": "c1-ecg", "verdict": "met", "adjudicator": "adj",
                                "confidence": "probable", "category": "annotator_slip",
                                "note": "ECG is implied by 'cardiac workup'"}
    rows = files["gold.csv"].decode().splitlines()
    assert rows[0].startswith('"response_id","criterion_id","case_id","model","difficulty","verdict"') and len(rows) == 12
    assert job.result["provenance"]["adjudicated"] == 1


def test_who_may_export_and_import(mini_project, client, django_capture_on_commit_callbacks):
    upload = SimpleUploadedFile("mini.zip", b"PK", content_type="application/zip")
    for role, export, imports in ((None, 404, 404), ("viewer", 403, 403), ("adjudicator", 200, 403), ("manager", 200, 200)):
        someone = user(f"u-{role}", mini_project, role, is_staff=True)
        client.force_login(someone)
        with django_capture_on_commit_callbacks(execute=False):
            assert client.post("/projects/mini/export/", **HTMX).status_code == export, role
            upload.seek(0)
            assert client.post("/projects/mini/import/", {"bundle": upload}, **HTMX).status_code == imports, role
        assert client.post("/projects/import/", {"bundle": upload}).status_code == 403  # new projects: superusers
    stranger = user("stranger", is_staff=True)
    job = DataJob.objects.filter(kind="export").first()
    client.force_login(stranger)
    assert client.get(f"/jobs/{job.pk}/").status_code == 404
    assert client.get(f"/jobs/{job.pk}/download/").status_code == 404


def test_export_import_into_an_empty_database_reproduces_gold_and_metrics(
        mini_project, client, django_capture_on_commit_callbacks):
    adjudicator = user("adj", mini_project, "adjudicator")
    adjudicate(mini_project, adjudicator)
    CaseQuality.objects.create(project=mini_project, case=mini_project.cases.get(external_id="c2"), flagged=True, excluded=True)
    reports = {
        "agreement": agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")["summary"],
        "gold": agreement_report(project="mini", a="gold", b="judge:judge-a")["summary"],
        "coverage": coverage_report(project="mini", source="gold", k=1)["by_model"],
        "scores": scores_report(project="mini", source="gold")["responses"],
    }
    client.force_login(adjudicator)
    _, first = export_zip(client, mini_project, django_capture_on_commit_callbacks)

    Project.objects.all().delete()  # the empty database: no project, no labels, no gold, no adjudicator
    get_user_model().objects.filter(username="adj").delete()
    assert not Label.objects.exists() and not Adjudication.objects.exists()
    root = user("root", is_superuser=True, is_staff=True)
    client.force_login(root)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/projects/import/", {"bundle": SimpleUploadedFile("mini-gold.zip", first)})
    job = DataJob.objects.filter(kind="import").latest("pk")
    assert response.status_code == 302 and job.status == "finished", job.error
    assert job.result["adjudications"] == 1 and job.result["labels"] == 34  # the excluded case's too: it stays excluded
    project = Project.objects.get(slug="mini")
    assert 'href="/projects/mini/">Open mini</a>' in client.get(f"/jobs/{job.pk}/").content.decode()  # the import leads there
    assert list(CaseQuality.objects.filter(project=project).values_list("case__external_id", "flagged", "excluded")) == [
        ("c2", True, True)]
    assert AdjudicationHistory.objects.filter(adjudication__project=project, action="import").count() == 1
    assert reports == {
        "agreement": agreement_report(project="mini", a="cohort:group-1", b="cohort:group-2")["summary"],
        "gold": agreement_report(project="mini", a="gold", b="judge:judge-a")["summary"],
        "coverage": coverage_report(project="mini", source="gold", k=1)["by_model"],
        "scores": scores_report(project="mini", source="gold")["responses"],
    }
    readopted = get_user_model().objects.get(username="adj")  # the role came back with the bundle, the password did not
    assert readopted.project_roles.get(project=project).role == "adjudicator" and not readopted.has_usable_password()
    client.force_login(readopted)
    _, second = export_zip(client, project, django_capture_on_commit_callbacks)
    a, b = zipfile.ZipFile(io.BytesIO(first)), zipfile.ZipFile(io.BytesIO(second))
    for name in a.namelist():
        if not name.endswith("manifest.json"):
            assert a.read(name) == b.read(name), name


def test_an_import_is_all_or_nothing_and_names_the_first_error(mini_project, client, tmp_path,
                                                               django_capture_on_commit_callbacks):
    manager = user("boss", mini_project, "manager")
    client.force_login(manager)
    parts = bundle_parts()
    parts["labels"][4]["verdict"] = "maybe"
    bundle = write_bundle(tmp_path / "bad", parts)
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for path in bundle.iterdir():
            archive.write(path, f"mini/{path.name}")
    before = Label.objects.count(), Label.objects.order_by("pk").values_list("verdict", flat=True)[4]
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/projects/mini/import/", {"bundle": SimpleUploadedFile("bad.zip", data.getvalue())})
    job = DataJob.objects.get(kind="import")
    assert job.status == "failed" and job.error.startswith("labels.jsonl line 5") and "'maybe'" in job.error
    assert (Label.objects.count(), Label.objects.order_by("pk").values_list("verdict", flat=True)[4]) == before
    html = client.get("/projects/mini/").content.decode()
    assert "Failed: labels.jsonl line 5" in html


def test_a_failed_import_names_the_field_and_leaves_no_upload_on_disk(mini_project, client, tmp_path, jobs_dir,
                                                                      django_capture_on_commit_callbacks):
    """Issue 27: a NUL in an annotator's name is the job's error by file, line and field (on
    PostgreSQL it was a DataError's text), and the upload is removed (failed jobs are not run again)."""
    manager = user("boss", mini_project, "manager")
    client.force_login(manager)
    parts = bundle_parts()
    parts["labels"][0]["annotator"] = "ann\x001"
    bundle = write_bundle(tmp_path / "nul", parts)
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for path in bundle.iterdir():
            archive.write(path, path.name)
    before = Label.objects.count(), get_user_model().objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/projects/mini/import/", {"bundle": SimpleUploadedFile("nul.zip", data.getvalue())})
    job = DataJob.objects.get(kind="import")
    assert job.status == "failed"
    assert job.error == "labels.jsonl line 1: field 'annotator' holds a NUL character (\\u0000), which the database cannot store"
    assert not (jobs_dir / str(job.pk)).exists()
    assert (Label.objects.count(), get_user_model().objects.count()) == before


def test_a_bundle_of_another_project_and_a_file_too_large_are_refused(mini_project, client, settings, tmp_path,
                                                                      django_capture_on_commit_callbacks):
    manager = user("boss", mini_project, "manager")
    client.force_login(manager)
    parts = bundle_parts()
    parts["project"]["slug"] = "other"
    bundle = write_bundle(tmp_path / "other", parts)
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for path in bundle.iterdir():
            archive.write(path, path.name)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/projects/mini/import/", {"bundle": SimpleUploadedFile("other.zip", data.getvalue())})
    job = DataJob.objects.get(kind="import")
    assert job.status == "failed" and "this bundle is for project 'other', not 'mini'" in job.error
    assert not Project.objects.filter(slug="other").exists()
    settings.EVALSITE_MAX_UPLOAD_BYTES = 1000
    html = client.post("/projects/mini/import/", {"bundle": SimpleUploadedFile("big.zip", b"x" * 5000)}, **HTMX).content.decode()
    assert "the file is 5.0 kB; the limit is 1.0 kB" in html
    huge = client.post("/projects/mini/import/", {"bundle": SimpleUploadedFile("huge.zip", b"x" * 200_000)}, **HTMX)
    assert huge.status_code == 413  # refused from the request's length alone (evalsite.errors)
    assert "the upload is 195.4 kib; the limit is 65.0 kib for a bundle" in huge.content.decode().lower()
    html = client.post("/projects/mini/import/", {"bundle": SimpleUploadedFile("notes.txt", b"x")}, **HTMX).content.decode()
    assert "upload " in html and "the bundle as a .zip" in html  # what each format takes, the bundle among them
    assert DataJob.objects.count() == 1


def test_a_job_whose_worker_died_is_taken_over_and_its_leftovers_removed(mini_project, settings, jobs_dir):
    """A running job silent for longer than the lease lost its worker: the task delivered again
    runs it (a second attempt) after removing what the dead attempt wrote; a job with a live
    heartbeat is left to its worker."""
    from datetime import timedelta

    from django.utils import timezone

    from grading.jobs import data_job_run

    settings.EVALSITE_JOB_LEASE_SECONDS = 60
    job = DataJob.objects.create(kind="export", project=mini_project, status="running", attempts=1,
                                 heartbeat_at=timezone.now() - timedelta(seconds=5), started_at=timezone.now())
    assert data_job_run(job_id=job.pk).status == "running"  # alive: not touched
    leftover = jobs_dir / str(job.pk) / "mini-gold-half.parts"
    leftover.mkdir(parents=True)
    (leftover / "gold.jsonl").write_text('{"half": "written"}\n')
    DataJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=61))
    done = data_job_run(job_id=job.pk)
    assert done.status == "finished" and done.attempts == 2, done.error
    assert not leftover.exists() and [p.suffix for p in (jobs_dir / str(job.pk)).iterdir()] == [".zip"]
    assert data_job_run(job_id=job.pk).attempts == 2  # finished: never run again


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_beats_while_a_job_runs(settings, monkeypatch, tmp_path):
    """The heartbeat thread writes on its own connection even while the job reports no progress
    (an import is one long transaction): the job below only waits until it has seen two beats."""
    from grading import jobs
    from tests.celery_workers import wait_for

    settings.EVALSITE_JOB_LEASE_SECONDS = 0.6  # a beat every 0.1 s
    seen = {}
    job = DataJob.objects.create(kind="export", status="queued")

    def export_that_waits_for_two_beats(job):
        beats = [DataJob.objects.get(pk=job.pk).heartbeat_at]  # written by the claim

        def another_beat():
            beat = DataJob.objects.get(pk=job.pk).heartbeat_at
            if beat > beats[-1]:
                beats.append(beat)
            return len(beats) == 3

        wait_for(another_beat, 30, "two heartbeats while the job reports nothing", every=0.02)
        seen["beats"] = beats
        return {}

    monkeypatch.setattr(jobs, "_export", export_that_waits_for_two_beats)
    assert jobs.data_job_run(job_id=job.pk).status == "finished"
    assert seen["beats"] == sorted(seen["beats"]) and len(set(seen["beats"])) == 3


def test_a_queued_job_whose_copies_were_lost_is_sent_again_and_runs_once(mini_project, settings, jobs_dir):
    """Both copies of a queued job lost with the broker's state: the periodic sweep sends it again
    (its copy and a watcher) once per interval; a job still held for its columns, or sent within
    the interval, is left alone; and when both deliveries arrive, the job runs once."""
    from datetime import timedelta

    from django.utils import timezone

    from grading.jobs import data_job_resend_unsent, data_job_run

    due = timezone.now() - timedelta(seconds=settings.EVALSITE_QUEUED_RESEND_SECONDS + 1)
    lost = DataJob.objects.create(kind="export", project=mini_project, stage="queued")
    held = DataJob.objects.create(kind="import", project=mini_project, stage=DataJob.COLUMNS_STAGE)
    recent = DataJob.objects.create(kind="export", project=mini_project, stage="queued",
                                    heartbeat_at=timezone.now() - timedelta(seconds=5))
    DataJob.objects.filter(pk__in=[lost.pk, held.pk, recent.pk]).update(created_at=due)
    sent = []

    def send(**options):
        sent.append(options)

    assert data_job_resend_unsent(send=send) == (lost.pk,)
    assert [s["kwargs"] for s in sent] == [{"job_id": lost.pk}] * 2 and "countdown" in sent[1]  # the copy and its watcher
    assert data_job_resend_unsent(send=send) == () and len(sent) == 2  # marked sent: not again this interval
    assert data_job_run(job_id=lost.pk).status == "finished"
    again = data_job_run(job_id=lost.pk)  # the first copy, which was only waiting
    assert again.status == "finished" and again.attempts == 1 and not getattr(again, "claimed", False)
    assert DataJob.objects.get(pk=held.pk).status == DataJob.objects.get(pk=recent.pk).status == "queued"
