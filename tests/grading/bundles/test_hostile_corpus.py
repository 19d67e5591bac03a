"""The hostile-bundle corpus (issue 27, points 4 and 5; ``tests.hostile_bundles``): every kind of
bundle an attacker sent is refused with its file, line and field and writes nothing, on whichever
database the suite runs on (SQLite and PostgreSQL give the same refusal: the checks run before the
database sees a value). The streaming limits are small here (settings) so the bundles stay small;
``bench/hostile_bundles.py`` imports the corpus at the real limits and measures the memory.

Also: the formats that convert to a bundle (HealthBench, Label Studio) get the same refusals,
named by their own file, line and field; a zip of too many entries is refused before ``zipfile``
reads its directory; the digest of the import record stops at a bad line; and a price beyond its
column that SQLite already holds no longer breaks the pages that read it."""
import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection

from annotation.models import (
    AuditEvent,
    Case,
    Cohort,
    CohortMembership,
    Criterion,
    ImportBatch,
    Label,
    LabelHistory,
    Project,
    Response,
    RubricVersion,
)
from grading.bundles import BundleError, BundleReader, bundle_import, limits
from grading.formats.registry import ImportRequest, format_import
from grading.models import Adjudication, AdjudicationHistory, Judge, Judgment
from tests.hostile_bundles import NUL, SURROGATE, empty_entries_zip, field_cases, limit_cases, total_bytes_bundle

SMALL_LIMITS = {"EVALSITE_BUNDLE_MAX_ENTRIES": 20, "EVALSITE_BUNDLE_MAX_LINE_BYTES": 4096,
                "EVALSITE_BUNDLE_MAX_BLANK_BYTES": 1024, "EVALSITE_BUNDLE_MAX_BLANK_LINES": 10,
                "EVALSITE_BUNDLE_MAX_BYTES": 64 * 1024**2, "EVALSITE_BUNDLE_MAX_RATIO": 100}
MODELS = (Project, Case, Criterion, RubricVersion, Response, Cohort, CohortMembership, Label, LabelHistory, Judge,
          Judgment, Adjudication, AdjudicationHistory, ImportBatch, AuditEvent)


def counts() -> dict[str, int]:
    return {m.__name__: m.objects.count() for m in MODELS} | {"users": get_user_model().objects.count()}


@pytest.fixture
def small_limits(settings):
    for name, value in SMALL_LIMITS.items():
        setattr(settings, name, value)


def refused(path: Path, **request) -> BundleError:
    """Import ``path`` (a bundle, or another format's file with ``request``); the refusal, after
    checking that nothing at all was written."""
    before = counts()
    with pytest.raises(BundleError) as info:
        if request:
            format_import(ImportRequest(path=path, **request))
        else:
            bundle_import(path=path)
    assert counts() == before, "a refused import writes nothing"
    assert "\x00" not in str(info.value), "the message quotes no NUL (it is stored as a job's error)"
    return info.value


@pytest.mark.django_db
@pytest.mark.parametrize("case", field_cases() + limit_cases(SMALL_LIMITS), ids=lambda case: case.name)
def test_a_hostile_bundle_is_refused_by_file_line_and_field(tmp_path, small_limits, case):
    error = refused(case.build(tmp_path))
    assert (error.file, error.line, error.field) == (case.file, case.line, case.field), str(error)
    assert case.message in error.message, str(error)


@pytest.mark.django_db
def test_a_folder_past_the_total_bytes_is_refused_at_the_line_that_passes_it(tmp_path, settings):
    settings.EVALSITE_BUNDLE_MAX_BYTES = 5000  # a folder has no declared sizes: counted as it is read
    folder, name, line = total_bytes_bundle(tmp_path / "b", 5000)
    error = refused(folder)
    assert (error.file, error.line, error.field) == (name, line, None) and "add up to more than" in error.message


@pytest.mark.django_db
def test_the_command_line_names_the_field_without_a_traceback(tmp_path):
    case = next(c for c in field_cases() if c.name == "number=1e+300:project.json:judges[0].price_in_per_mtok")
    with pytest.raises(CommandError) as info:
        call_command("import_bundle", str(case.build(tmp_path)))
    assert str(info.value).startswith("import failed, nothing was written: project.json: field "
                                      "'judges[0].price_in_per_mtok' must be a number of less than 1,000,000")
    assert not Project.objects.exists()


@pytest.mark.django_db
def test_a_zip_of_too_many_entries_is_refused_before_its_directory_is_read(tmp_path, settings, monkeypatch):
    """70,000 empty entries (zip64 end records): refused from the end record; zipfile never opens it."""
    settings.EVALSITE_BUNDLE_MAX_ENTRIES = 1000
    target = empty_entries_zip(tmp_path / "many.zip", 70_000)
    with zipfile.ZipFile(target) as archive:  # a valid zip: zipfile itself would read all of it
        assert len(archive.infolist()) == 70_000

    def never(*args, **kwargs):
        raise AssertionError("zipfile read the directory")

    monkeypatch.setattr(zipfile, "ZipFile", never)
    error = refused(target)
    assert (error.file, error.line) == ("many.zip", None)
    assert error.message == "the zip holds 70,000 entries; a bundle may hold at most 1,000 (EVALSITE_BUNDLE_MAX_ENTRIES)"


@pytest.mark.django_db
def test_the_import_stops_reading_at_a_bad_line(tmp_path, settings, monkeypatch):
    """A line too long, then 256 MiB more (a sparse file): refused at the line, having read little
    more than it (the digest of the import record no longer reads every file first)."""
    settings.EVALSITE_BUNDLE_MAX_LINE_BYTES = 4096
    case = next(c for c in limit_cases(SMALL_LIMITS) if c.name == "line bytes")
    folder = case.build(tmp_path)
    with open(folder / "cases.jsonl", "ab") as out:
        out.truncate((folder / "cases.jsonl").stat().st_size + 256 * 1024**2)
    read = []
    monkeypatch.setattr(limits.StreamLimits, "lines", _counting(limits.StreamLimits.lines, read))
    error = refused(folder)
    assert (error.file, error.line) == ("cases.jsonl", 3) and "line longer than 4 KiB" in error.message
    assert sum(read) < 64 * 1024, f"{sum(read):,} bytes read before the refusal"


def _counting(lines, read: list):
    def counted(self, name, fh):
        for item in lines(self, name, fh):
            read.append(len(item[1]))
            yield item
    return counted


@pytest.mark.django_db
def test_the_digest_made_while_importing_is_that_of_the_files(mini_bundle):
    """The import record's digest, made as the importer reads, is the sha256 of the files in their
    order, as a reader that is asked before reading computes it."""
    files = ("project.json", "cases.jsonl", "responses.jsonl", "labels.jsonl", "judgments.jsonl")
    expected = hashlib.sha256(b"".join((mini_bundle / name).read_bytes() for name in files)).hexdigest()
    bundle_import(path=mini_bundle)
    assert ImportBatch.objects.get().bundle_sha256 == expected
    with BundleReader(mini_bundle) as reader:
        assert reader.sha256() == expected


# -- the formats that convert to a bundle ------------------------------------------------------

def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _healthbench(tmp_path: Path, *, prompt="Q?", completion="A.", explanation="E.", points=1) -> dict:
    item = {"criterion": "Answers", "points": points, "tags": []}
    examples = _jsonl(tmp_path / "examples.jsonl", [{"prompt_id": "p", "prompt": [{"role": "user", "content": prompt}],
                                                     "rubrics": [item], "example_tags": []}])
    completions = _jsonl(tmp_path / "completions.jsonl", [{"prompt_id": "p", "model": "m", "completion": completion}])
    grades = _jsonl(tmp_path / "grades.jsonl", [{"prompt_id": "p", "model": "m", "completion": completion, "rubric_items": [
        {**item, "points": 1, "criteria_met": True, "explanation": explanation}]}])
    return {"path": examples, "project": "hb", "judge": "grader", "files": {"completions": completions, "grades": grades}}


@pytest.mark.django_db
@pytest.mark.parametrize(("change", "judge", "where"), [
    ({"prompt": NUL}, "grader", ("examples.jsonl", 1, "messages[0].content", "holds a NUL character")),
    ({"completion": NUL}, "grader", ("completions.jsonl", 1, "text", "holds a NUL character")),
    ({"explanation": NUL}, "grader", ("grades.jsonl", 1, "explanation", "holds a NUL character")),
    ({}, "g" * 101, ("grades.jsonl", 1, "judge", "may hold at most 100 characters")),
    ({"completion": SURROGATE}, "grader", ("completions.jsonl", 1, "completion", "holds a lone surrogate")),
    ({"points": float("nan")}, "grader", ("examples.jsonl", 1, "rubrics[0].points", "must be a finite number")),
], ids=["nul-prompt", "nul-completion", "nul-explanation", "long-judge", "surrogate", "nan"])
def test_healthbench_gets_the_same_refusal_named_by_its_own_file_and_line(tmp_path, change, judge, where):
    request = _healthbench(tmp_path, **change)
    error = refused(request.pop("path"), **{**request, "judge": judge})
    assert (error.file, error.line, error.field) == where[:3], str(error)
    assert where[3] in error.message


def _labelstudio(tmp_path: Path, *, data=None, completed_by=7, lead_time=3.0) -> Path:
    task = {"id": 1, "data": {"prompt": "P?", "response": "R.", **(data or {})},
            "annotations": [{"completed_by": completed_by, "lead_time": lead_time, "result": [
                {"from_name": "call", "to_name": "response", "type": "choices", "value": {"choices": ["Met"]}}]}]}
    path = tmp_path / "export.json"
    path.write_text(json.dumps([task]), encoding="utf-8")
    return path


@pytest.mark.django_db
@pytest.mark.parametrize(("change", "where"), [
    ({"data": {"response": NUL}}, ("data.response", "holds a NUL character")),
    ({"data": {"prompt": SURROGATE}}, ("data.prompt", "holds a lone surrogate")),
    ({"data": {"model": "m" * 201}}, ("data.model", "may hold at most 200 characters")),
    ({"completed_by": "x" * 151}, ("annotations[0].completed_by", "may hold at most 150 characters")),
    ({"completed_by": NUL}, ("annotations[0].completed_by", "holds a NUL character")),
    ({"lead_time": float("nan")}, ("annotations[0].lead_time", "must be a finite number")),
], ids=["nul-response", "surrogate-prompt", "long-model", "long-user", "nul-user", "nan-lead-time"])
def test_label_studio_gets_the_same_refusal_named_by_its_task_and_field(tmp_path, change, where):
    error = refused(_labelstudio(tmp_path, **change), project="ls")
    assert (error.file, error.line, error.field) == ("export.json", 1, where[0]), str(error)
    assert where[1] in error.message


def test_a_label_studio_export_itself_imports(tmp_path, db):
    """The refusals above come from the values changed, not from the export's shape."""
    assert format_import(ImportRequest(path=_labelstudio(tmp_path), project="ls"))["labels"] == 1


def test_a_healthbench_file_itself_imports(tmp_path, db):
    request = _healthbench(tmp_path)
    assert format_import(ImportRequest(path=request.pop("path"), **request))["judgments"] == 1


# -- a price beyond its column, already stored ----------------------------------------------------

def test_a_stored_price_beyond_its_column_breaks_no_page_and_the_next_import_corrects_it(mini_project, mini_bundle, client):
    """SQLite stores any number in a decimal(10, 4) column (PostgreSQL refuses it, so there is
    nothing to read back): the pages that read the judge show it, and the next import sets it."""
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL cannot hold the value")
    judge = Judge.objects.get(project=mini_project)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Judge._meta.db_table} SET price_in_per_mtok = 1e300 WHERE id = %s", [judge.pk])
    assert float(Judge.objects.get(pk=judge.pk).price_in_per_mtok) == 1e300
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    for url in ("/projects/mini/", "/projects/mini/judges/", "/admin/grading/judge/", f"/admin/grading/judge/{judge.pk}/change/"):
        assert client.get(url).status_code == 200, url
    bundle_import(path=mini_bundle)
    assert Judge.objects.get(pk=judge.pk).price_in_per_mtok == 0
