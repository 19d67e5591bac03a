"""The gold export split over forked processes (issue 10: 825,000 decisions within 20 s): the
same bytes as one process, a failing process fails the export with its error and leaves no part
files, and no split where the processes could not share the database.

The forked processes read the database over their own connections, so the split tests need
committed rows in a database that a second process can open: PostgreSQL (``DATABASE_URL``); the
suite's in-memory SQLite database is one the split refuses (last test)."""
import os

import pytest
from django.db import connection, transaction

from annotation.models import Case, CaseQuality, Criterion, Project, Response
from demo.clinical import generate_clinical
from evalsite.forking import ForkedError
from grading.adjudication.services import adjudication_record
from grading.bundles import bundle_import, exporter, gold_export
from grading.bundles.exporter import export_processes


@pytest.fixture
def split_project(tmp_path, settings, monkeypatch):
    """A small project in committed rows, with chunks of 5 responses, so three processes cut it
    mid-chunk: two cohorts with overlap 2 and checkers, a judge, an adjudication and a case
    excluded by quality control."""
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        pytest.skip("forked processes cannot open the in-memory SQLite test database; run with DATABASE_URL=postgres://...")
    generate_clinical(tmp_path / "bundle", slug="split", n_cases=9, n_criteria=6, models=["m-a", "m-b", "m-c"],
                      human_answer_cases=1, overlap=2, checker_share=0.3, seed=3)
    bundle_import(path=tmp_path / "bundle")
    project = Project.objects.get(slug="split")
    response = Response.objects.filter(project=project).order_by("position")[10]
    criterion = Criterion.objects.filter(rubric_version_id=response.case.rubric_version_id).order_by("position").first()
    adjudication_record(response=response, criterion=criterion, user=None, verdict="met", note="checked the chart")
    excluded = Case.objects.filter(project=project).order_by("position")[4]
    CaseQuality.objects.create(project=project, case=excluded, excluded=True)
    monkeypatch.setattr(exporter, "CHUNK", 5)
    settings.EVALSITE_EXPORT_PARALLEL_MIN_RESPONSES = 1
    return project


def _files(directory) -> dict[str, bytes]:
    files = {path.name: path.read_bytes() for path in directory.iterdir()}
    files["manifest.json"] = b"\n".join(line for line in files["manifest.json"].splitlines() if b"exported_at" not in line)
    return files


@pytest.mark.django_db(transaction=True)
def test_a_split_export_writes_the_same_bytes_as_one_process(split_project, settings, tmp_path):
    n = split_project.responses.count()
    settings.EVALSITE_EXPORT_PROCESSES = 1
    assert export_processes(n) == 1
    one = gold_export(project=split_project, out_dir=tmp_path / "one")
    settings.EVALSITE_EXPORT_PROCESSES = 3
    assert export_processes(n) == 3
    three = gold_export(project=split_project, out_dir=tmp_path / "three")

    assert one == three  # sha256 of every file, line counts, provenance counts
    assert _files(tmp_path / "one") == _files(tmp_path / "three")
    assert not list((tmp_path / "three").glob("*.part*"))
    assert three["provenance"]["adjudicated"] == 1 and three["excluded_cases"] == 1
    assert three["counts"]["gold.csv"] == three["counts"]["gold.jsonl"] + 1  # one header, from the first process
    assert three["counts"]["labels.jsonl"] > 0 and three["counts"]["judgments.jsonl"] > 0


@pytest.mark.django_db(transaction=True)
def test_a_failing_process_fails_the_export_with_its_error(split_project, settings, tmp_path, monkeypatch):
    settings.EVALSITE_EXPORT_PROCESSES = 2
    parent, judgments = os.getpid(), exporter._Export._judgments

    def fail_in_the_child(self, *args):
        if os.getpid() != parent:
            raise OSError("No space left on device")
        return judgments(self, *args)

    monkeypatch.setattr(exporter._Export, "_judgments", fail_in_the_child)
    with pytest.raises(ForkedError, match="OSError: No space left on device"):
        gold_export(project=split_project, out_dir=tmp_path / "out")
    assert not list((tmp_path / "out").glob("*.part*"))
    assert split_project.responses.count() > 0  # the parent's connection still works


@pytest.mark.django_db
def test_no_split_inside_a_transaction_or_for_small_projects(settings):
    settings.EVALSITE_EXPORT_PROCESSES = 2
    settings.EVALSITE_EXPORT_PARALLEL_MIN_RESPONSES = 2000
    with transaction.atomic():  # the test's own transaction: a forked process would not see its rows
        assert export_processes(10**6) == 1
    assert export_processes(1999) == 1
    settings.EVALSITE_EXPORT_PROCESSES = 1
    assert export_processes(10**6) == 1


@pytest.mark.django_db(transaction=True)
def test_the_cycle_collector_runs_per_chunk_and_is_restored_even_after_a_failure(split_project, tmp_path, monkeypatch):
    """During the chunks the collector is off (it runs once per chunk instead) and the
    project's tables are frozen out of its sight; afterwards, also after a failed export,
    it is on again and nothing stays frozen."""
    import gc

    seen, judgments = [], exporter._Export._judgments

    def look(self, *args):
        seen.append((gc.isenabled(), gc.get_freeze_count() > 0))
        return judgments(self, *args)

    monkeypatch.setattr(exporter._Export, "_judgments", look)
    gold_export(project=split_project, out_dir=tmp_path / "ok")
    assert seen and set(seen) == {(False, True)}
    assert gc.isenabled() and gc.get_freeze_count() == 0

    def fail(self, *args):
        raise OSError("disk full")

    monkeypatch.setattr(exporter._Export, "_judgments", fail)
    with pytest.raises(OSError, match="disk full"):
        gold_export(project=split_project, out_dir=tmp_path / "failed")
    assert gc.isenabled() and gc.get_freeze_count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_forked_process_never_talks_over_a_connection_it_inherited(monkeypatch):
    """A connection the parent left open (Django keeps a thread's connections in two places, and
    ``close_all`` reaches only one: a test process driving Playwright has both) is never used by
    the child, which opens its own, nor ended by it: the parent's session goes on."""
    if connection.vendor != "postgresql":
        pytest.skip("needs a server with backend ids: run with DATABASE_URL=postgres://...")
    from django.db import connections

    from evalsite.forking import Forked

    def backend() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]

    parent = backend()
    monkeypatch.setattr(connections, "close_all", lambda: None)  # the connection the parent could not reach
    children = [Forked(lambda: {"backend": backend(), "projects": Project.objects.count()}) for _ in range(2)]
    seen = [child.result() for child in children]
    assert parent not in {s["backend"] for s in seen}
    assert len({s["backend"] for s in seen}) == 2
    assert backend() == parent and Project.objects.count() == seen[0]["projects"]
