"""A data format is declared once (``grading.formats.registry``) and the command line, the
browser upload (a background job), the API and its schema follow from the declaration: a format
declared here, in the test module only, is offered and used by every entry point, and is
recognized from its file; the evalsite bundle is one declared format like any other."""
import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.utils.html import escape

from annotation.models import Case, Project, Response
from grading.formats import registry
from grading.formats.registry import DataFormat, FormatError, ImportRequest, format_for
from grading.models import DataJob
from tests.bundles import bundle_parts, write_bundle

HEADER = ["case_id", "prompt", "response_id", "model", "text"]
ROWS = [
    ["s1", "Chest pain for two hours, what should I do?", "s1-a", "model-a", "Call emergency services now."],
    ["s1", "Chest pain for two hours, what should I do?", "s1-b", "model-b", "Rest at home."],
    ["s2", "My child has a fever.", "s2-a", "model-a", "Give fluids and check the temperature."],
]


def _sheet_text(rows=ROWS) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(rows)
    return out.getvalue()


def _detect(path: Path) -> bool:
    if not path.is_file() or path.suffix != ".tsv":
        return False
    with open(path, encoding="utf-8") as handle:
        return handle.readline().rstrip("\n").split("\t") == HEADER


def _read(request: ImportRequest) -> dict:
    """A sheet of cases and responses becomes a project with the bundle's rubric, through the
    bundle importer (so its checks, history and all-or-nothing apply)."""
    from grading.bundles import BundleError, bundle_import

    with open(request.path, encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))[1:]
    for number, row in enumerate(rows, start=2):
        if len(row) != len(HEADER) or not all(row):
            raise BundleError(request.path.name, "every row needs case_id, prompt, response_id, model and text",
                              line=number)
    parts = bundle_parts()
    parts["project"].update(slug=request.project or "sheet", name="From a sheet", judges=[])
    parts["cases"] = [{"case_id": c, "prompt": p} for c, p in dict((r[0], r[1]) for r in rows).items()]
    parts["responses"] = [{"response_id": r[2], "case_id": r[0], "model": r[3], "text": r[4]} for r in rows]
    parts["labels"], parts["judgments"] = [], []
    bundle = write_bundle(request.path.parent / f"{request.path.stem}-bundle", parts)
    return bundle_import(path=bundle, user=request.user).as_dict()


SHEET = DataFormat(name="casesheet", title="Cases and responses sheet",
                   upload_help="a tab-separated sheet of cases and responses (.tsv)", suffixes=(".tsv",),
                   detect=_detect, read=_read)


@pytest.fixture
def sheet_format():
    registry.register(SHEET)
    yield SHEET
    registry.unregister(SHEET.name)


@pytest.fixture
def sheet(tmp_path) -> Path:
    path = tmp_path / "study.tsv"
    path.write_text(_sheet_text(), encoding="utf-8")
    return path


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", password="pw-root-1234")


@pytest.fixture(autouse=True)
def jobs_dir(settings, tmp_path):
    settings.EVALSITE_JOBS_DIR = str(tmp_path / "jobs")


def _counts() -> tuple[int, int, int]:
    return Project.objects.count(), Case.objects.count(), Response.objects.count()


def test_the_command_offers_recognizes_and_imports_a_declared_format(sheet_format, sheet, db, capsys):
    call_command("import_bundle", str(sheet), "--json")  # recognized from its header
    result = json.loads(capsys.readouterr().out)
    assert result == {"project": "sheet", "cases": 2, "criteria": 2, "responses": 3, "labels": 0, "judgments": 0}
    assert list(Response.objects.order_by("external_id").values_list("external_id", flat=True)) == ["s1-a", "s1-b", "s2-a"]
    call_command("import_bundle", str(sheet), "--format", "casesheet", "--project", "sheet")  # again: nothing new
    assert _counts() == (1, 2, 3)


def test_a_format_that_is_not_declared_is_not_offered(sheet, db):
    with pytest.raises(CommandError, match="invalid choice: 'casesheet'"):
        call_command("import_bundle", str(sheet), "--format", "casesheet")
    with pytest.raises(CommandError, match=r"study.tsv: not a file any format here reads \(.*evalsite bundle \(.zip\)[;)]"):
        call_command("import_bundle", str(sheet))
    assert _counts() == (0, 0, 0)


def test_a_format_reads_the_options_it_declares_and_refuses_the_others(sheet_format, sheet, db, tmp_path):
    seen = []
    graded = DataFormat(name="graded-sheet", title="Graded sheet", upload_help="a graded sheet (.tsv)", suffixes=(".tsv",),
                        detect=lambda path: False, options=("judge", "grades"),
                        read=lambda request: seen.append((request.judge, request.files)) or _read(request))
    registry.register(graded)
    try:
        grades = tmp_path / "grades.jsonl"
        grades.write_text("{}\n", encoding="utf-8")
        call_command("import_bundle", str(sheet), "--format", "graded-sheet", "--judge", "grader", "--grades", str(grades))
        assert seen == [("grader", {"grades": grades})]
        with pytest.raises(CommandError, match=r"study.tsv: the Cases and responses sheet format takes no judge, grades "
                                               r"\(it takes no further options\)"):
            call_command("import_bundle", str(sheet), "--judge", "grader", "--grades", str(grades))
        with pytest.raises(CommandError, match="the evalsite bundle format takes no mapping"):
            call_command("import_bundle", str(tmp_path), "--format", "evalsite", "--mapping", str(grades))
    finally:
        registry.unregister(graded.name)
    assert _counts() == (1, 2, 3)  # the one import that was asked right


def test_a_bad_line_is_named_and_nothing_is_written(sheet_format, tmp_path, db):
    bad = tmp_path / "bad.tsv"
    bad.write_text(_sheet_text([*ROWS, ["s3", "", "s3-a", "model-a", "text"]]), encoding="utf-8")
    with pytest.raises(CommandError, match="import failed, nothing was written: bad.tsv line 5: every row needs"):
        call_command("import_bundle", str(bad))
    assert _counts() == (0, 0, 0)


def test_a_file_two_formats_recognize_must_be_named(sheet_format, sheet, db):
    twin = DataFormat(name="casesheet-twin", title="Twin", upload_help="the same sheet", suffixes=(".tsv",),
                      detect=_detect, read=_read)
    registry.register(twin)
    try:
        with pytest.raises(FormatError, match="could be read as casesheet or casesheet-twin; name the format"):
            format_for(sheet)
        assert format_for(sheet, name="casesheet-twin") is twin
    finally:
        registry.unregister(twin.name)


def test_a_declared_format_is_uploaded_in_the_browser_as_a_background_job(sheet_format, sheet, superuser, client,
                                                                          django_capture_on_commit_callbacks):
    client.force_login(superuser)
    home = client.get("/").content.decode()
    assert '<option value="casesheet">Cases and responses sheet</option>' in home  # the new-project form's menu
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post("/projects/import/", {"bundle": SimpleUploadedFile("study.tsv", sheet.read_bytes())})
    job = DataJob.objects.get(kind="import")
    assert answer.status_code == 302 and answer["Location"] == f"/jobs/{job.pk}/"
    assert job.status == "finished", job.error
    assert job.params["format"] == "" and job.result["responses"] == 3 and job.project.slug == "sheet"
    project_page = client.get("/projects/sheet/").content.decode()
    assert '<option value="casesheet">Cases and responses sheet</option>' in project_page  # the project's import form
    assert "a tab-separated sheet of cases and responses (.tsv) (Cases and responses sheet)" in project_page


def test_an_upload_names_its_format_or_gets_one_that_reads_its_suffix(sheet_format, sheet, superuser, client,
                                                                     django_capture_on_commit_callbacks):
    client.force_login(superuser)
    answer = client.post("/projects/import/", {"bundle": SimpleUploadedFile("study.tsv", sheet.read_bytes()),
                                               "format": "evalsite"})
    assert answer.status_code == 302
    message = client.get("/").content.decode()
    assert "upload the bundle as a .zip of its folder (project.json and the .jsonl files)" in message
    answer = client.post("/projects/import/", {"bundle": SimpleUploadedFile("notes.txt", b"x")})
    message = client.get("/").content.decode()
    assert ("; or a tab-separated sheet of cases and responses (.tsv); or " in message
            and "; or the bundle as a .zip of its folder (project.json and the .jsonl files); or " in message)
    assert escape("upload " + "; or ".join(f.upload_help for f in registry.formats(reading=True))) in message  # every format
    assert not DataJob.objects.exists() and _counts() == (0, 0, 0)


def test_the_api_takes_a_declared_format_and_documents_it(sheet_format, sheet, superuser, client,
                                                          django_capture_on_commit_callbacks):
    client.force_login(superuser)
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post("/api/projects/", {"bundle": SimpleUploadedFile("study.tsv", sheet.read_bytes()),
                                                "format": "casesheet"})
    assert answer.status_code == 202, answer.content
    job = DataJob.objects.get(kind="import")
    assert job.status == "finished" and job.params["format"] == "casesheet" and job.result["project"] == "sheet"
    refused = client.post("/api/projects/", {"bundle": SimpleUploadedFile("study.tsv", b""), "format": "nope"})
    assert refused.status_code == 400 and "format" in refused.json()
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    upload = schema["components"]["schemas"]["UploadInputRequest"]["properties"]["format"]
    enums = [schema["components"]["schemas"][one["$ref"].rsplit("/", 1)[1]].get("enum", []) for one in upload["oneOf"]]
    assert "casesheet" in registry.format_names(reading=True) and registry.format_names(reading=True) in enums


def test_the_evalsite_bundle_is_a_declared_format_both_ways(db, tmp_path, capsys):
    bundle = write_bundle(tmp_path / "mini")
    archive = tmp_path / "mini.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in bundle.iterdir():
            out.write(path, path.name)
    assert format_for(bundle).name == "evalsite" and format_for(archive).name == "evalsite"
    call_command("import_bundle", str(archive), "--format", "evalsite", "--project", "mini", "--json")
    assert json.loads(capsys.readouterr().out)["project"] == "mini"
    with pytest.raises(CommandError, match="mini.zip: this bundle is for project 'mini', not 'other'"):
        call_command("import_bundle", str(archive), "--project", "other")
    call_command("export_bundle", "--project", "mini", "--out", str(tmp_path / "a"), "--json")
    first = json.loads(capsys.readouterr().out)
    call_command("export_gold", "--project", "mini", "--out", str(tmp_path / "b"), "--json")
    assert json.loads(capsys.readouterr().out) == first  # export_gold is the evalsite bundle's export
    assert {"project.json", "cases.jsonl", "gold.jsonl"} <= set(first["files"])
    with pytest.raises(CommandError, match="invalid choice: 'casesheet'"):
        call_command("export_bundle", "--project", "mini", "--out", str(tmp_path / "c"), "--format", "casesheet")


def test_the_api_names_the_new_project_of_a_file_that_names_none(sheet_format, sheet, superuser, client,
                                                                  django_capture_on_commit_callbacks):
    client.force_login(superuser)
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post("/api/projects/", {"bundle": SimpleUploadedFile("study.tsv", sheet.read_bytes()),
                                                "project": "ward-7-study"})
    assert answer.status_code == 202, answer.content
    job = DataJob.objects.get(kind="import")
    assert job.status == "finished" and job.result["project"] == "ward-7-study" and job.project.slug == "ward-7-study"
    refused = client.post("/api/projects/", {"bundle": SimpleUploadedFile("study.tsv", sheet.read_bytes()),
                                             "project": "not a slug!"})
    assert refused.status_code == 400 and "project" in refused.json() and DataJob.objects.count() == 1
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "project" in schema["components"]["schemas"]["NewProjectUploadInputRequest"]["properties"]
