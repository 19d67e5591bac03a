"""Spreadsheets as declared formats (issue 24 point 4): CSV and XLSX tables of cases and responses,
labels and judgments imported into a project through the bundle importer (column mapping from a
file, or the browser's column step; kinds recognized from the columns), every bad row named by
file, sheet, row and column with nothing written; a project's labels, judgments and gold exported as
CSV files or one workbook that import into a project with the same rubric and export again as the
same bytes, formula cells included. The files are written here, the way people write them (Python's
csv module, openpyxl), not with the site's own writer."""
import csv
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from openpyxl import Workbook, load_workbook

from annotation.models import Case, CaseQuality, Label, LabelHistory, Project, Response
from grading.formats.registry import format_for
from grading.jobs import data_job_run
from grading.models import DataJob, Judgment
from tests.roles import grant

CASES_HEADER = ["Case", "Question", "Model", "Answer", "Difficulty", "Specialty"]
CASES_ROWS = [
    ["k1", "I have had chest pain for two hours.", "model-a", "Call emergency services now.", "high", "cardiology; emergency"],
    ["k1", "I have had chest pain for two hours.", "model-b", "Rest at home.", "high", "cardiology; emergency"],
    ["k2", "My child has a fever.", "model-a", "Give fluids and check the temperature.", "low", "pediatrics"],
]


def write_csv(path: Path, header: list, rows: list, *, delimiter: str = ",") -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_xlsx(path: Path, sheets: dict[str, list[list]]) -> Path:
    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def run(*args) -> dict:
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


def counts() -> tuple[int, int, int, int]:
    return Case.objects.count(), Response.objects.count(), Label.objects.count(), Judgment.objects.count()


@pytest.fixture(autouse=True)
def jobs_dir(settings, tmp_path):
    settings.EVALSITE_JOBS_DIR = str(tmp_path / "jobs")


@pytest.fixture
def cases_csv(tmp_path) -> Path:
    return write_csv(tmp_path / "study.csv", CASES_HEADER, CASES_ROWS)


# -- recognizing the formats -----------------------------------------------------------------------
def test_csv_files_folders_and_workbooks_are_recognized_and_a_bundle_zip_is_still_a_bundle(tmp_path, cases_csv):
    book = write_xlsx(tmp_path / "book.xlsx", {"cases": [CASES_HEADER, *CASES_ROWS]})
    folder = tmp_path / "tables"
    folder.mkdir()
    shutil.copy(cases_csv, folder / "responses.csv")
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("mini/project.json", "{}")
    assert [format_for(p).name for p in (cases_csv, book, folder, archive)] == ["csv", "xlsx", "csv", "evalsite"]


# -- cases and responses ---------------------------------------------------------------------------
def test_a_table_of_cases_and_responses_with_a_mapping_file(db, tmp_path):
    path = write_csv(tmp_path / "answers.csv", ["id", "Conversation", "Ideal", "System", "Output", "theme"], [
        ["q1", json.dumps([{"role": "user", "content": "Chest pain, what now?"}]), "Call 911.", "model-a", "Call now.",
         "emergency"],
        ["q1", "", "", "model-a", "Rest.", ""],  # a second response of the same model; the case's cells left empty
        ["q2", json.dumps([{"role": "user", "content": "Fever?"}]), "", "", "", "triage"],  # a case without a response
    ])
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"table": "responses", "columns": {
        "case_id": "id", "messages": "Conversation", "reference_answer": "Ideal", "model": "System", "text": "Output"}}))
    result = run("import_bundle", str(path), "--project", "answers", "--mapping", str(mapping))
    assert result == {"project": "answers", "cases": 2, "criteria": 0, "responses": 2, "labels": 0, "judgments": 0}
    q1 = Case.objects.get(external_id="q1")
    assert (q1.messages[0]["content"], q1.reference_answer, q1.metadata) == ("Chest pain, what now?", "Call 911.",
                                                                             {"theme": "emergency"})
    assert list(Response.objects.order_by("position").values_list("external_id", "text")) == [
        ("q1:model-a", "Call now."), ("q1:model-a:2", "Rest.")]
    assert run("import_bundle", str(path), "--project", "answers", "--mapping", str(mapping))["responses"] == 0  # again


def test_columns_are_matched_by_their_usual_names_and_the_rest_is_case_metadata(db, cases_csv):
    result = run("import_bundle", str(cases_csv), "--format", "csv", "--project", "study")
    assert (result["cases"], result["responses"]) == (2, 3)
    k1 = Case.objects.get(external_id="k1")
    assert (k1.prompt, k1.difficulty, k1.metadata) == ("I have had chest pain for two hours.", "high",
                                                       {"difficulty": "high", "Specialty": "cardiology; emergency"})
    assert set(Response.objects.values_list("external_id", flat=True)) == {"k1:model-a", "k1:model-b", "k2:model-a"}


def test_a_semicolon_csv_with_metadata_lists_and_a_byte_order_mark(db, tmp_path):
    path = tmp_path / "excel.csv"  # what a spreadsheet set to a European locale saves as "CSV UTF-8"
    path.write_bytes("\ufeffcase_id;prompt;model;text;metadata.specialties;metadata.difficulty\r\n"
                     'c1;Fever?;m;Fluids.;"pediatrics, triage";low\r\n'.encode("utf-8"))
    run("import_bundle", str(path), "--project", "semi")
    case = Case.objects.get()
    assert case.metadata == {"specialties": ["pediatrics", "triage"], "difficulty": "low"} and case.difficulty == "low"


def test_a_case_given_differently_on_two_rows_is_refused(db, tmp_path):
    rows = [CASES_ROWS[0], [*CASES_ROWS[1][:1], "Another prompt", *CASES_ROWS[1][2:]]]
    path = write_csv(tmp_path / "study.csv", CASES_HEADER, rows)
    with pytest.raises(CommandError, match=r"study.csv, row 3, column 'Question' \(prompt\): case 'k1' is given "
                                           r"differently on row 2"):
        call_command("import_bundle", str(path), "--project", "study")
    assert counts() == (0, 0, 0, 0) and not Project.objects.exists()


def test_a_spreadsheet_goes_into_a_project(db, cases_csv):
    with pytest.raises(CommandError, match="study.csv, field 'project': a spreadsheet import goes into a project"):
        call_command("import_bundle", str(cases_csv))


# -- labels and judgments --------------------------------------------------------------------------
LABELS_HEADER = ["response_id", "criterion_id", "cohort", "annotator", "role", "verdict", "option", "value", "rationale",
                 "time"]


def test_labels_are_final_labels_with_history_and_a_reimport_replaces_them(mini_project, tmp_path):
    path = write_csv(tmp_path / "ratings.csv", LABELS_HEADER, [
        ["r3", "c1-ecg", "group-3", "dr-a", "annotator", "Not met", "", "", "No ECG mentioned.", "42.5"],
        ["r3", "tone", "group-3", "dr-a", "annotator", "", "ok", "", "", ""],
        ["r3", "tone", "group-3", "dr-b", "Checker", "", "", "0.25", "", ""],
    ])
    assert format_for(path).name == "csv"
    with pytest.raises(CommandError, match="criterion_id 'c1-ecg' is not in the rubric of response 'r3''s case"):
        call_command("import_bundle", str(path), "--project", "mini")
    rows = list(csv.reader(path.open(encoding="utf-8")))
    rows[1][0] = "r1"
    write_csv(path, rows[0], rows[1:])
    before = Label.objects.count()
    assert run("import_bundle", str(path), "--project", "mini")["labels"] == 3
    label = Label.objects.get(annotator__username="dr-a", criterion__external_id="c1-ecg")
    assert (label.verdict, label.rationale, label.time_spent_seconds, label.cohort.name) == (
        "not_met", "No ECG mentioned.", 42.5, "group-3")
    checker = Label.objects.get(annotator__username="dr-b")
    assert (checker.role, checker.value, checker.option_label) == ("checker", 0.25, None)
    assert Label.objects.count() == before + 3 and LabelHistory.objects.filter(label=label, action="import").exists()

    rows[1][5] = "met"
    write_csv(path, rows[0], rows[1:])
    assert run("import_bundle", str(path), "--project", "mini")["labels"] == 1
    label.refresh_from_db()
    changed = LabelHistory.objects.filter(label=label).order_by("pk").last()
    assert label.verdict == "met" and changed.old["verdict"] == "not_met" and changed.new["verdict"] == "met"


def test_judgments_are_a_judges_samples(mini_project, tmp_path):
    path = write_csv(tmp_path / "grades.csv", ["response_id", "criterion_id", "judge", "judge_model", "sample", "verdict",
                                               "explanation"], [
        ["r1", "c1-call", "sheet-judge", "gpt-y", "0", "met", "Says call."],
        ["r1", "c1-call", "sheet-judge", "gpt-y", "1", "", "unparseable"],
        ["r2", "c1-call", "sheet-judge", "gpt-y", "0", "NOT_MET", ""],
    ])
    assert run("import_bundle", str(path), "--project", "mini")["judgments"] == 3
    made = Judgment.objects.filter(judge__name="sheet-judge").order_by("response__external_id", "sample")
    assert [(j.sample, j.verdict, j.valid) for j in made] == [(0, "met", True), (1, None, False), (0, "not_met", True)]
    assert made[0].judge.model == "gpt-y"


@pytest.mark.parametrize("header, row, message", [
    (LABELS_HEADER, ["r1", "no-such", "group-1", "ann1", "", "met", "", "", "", ""],
     r"bad.csv, row 2, column 'criterion_id': unknown criterion_id 'no-such'"),
    (LABELS_HEADER, ["r1", "c1-ecg", "group-1", "dr-x", "", "maybe", "", "", "", ""],
     r"bad.csv, row 2, column 'verdict': verdict 'maybe' is not one of met, not_met, cannot_assess"),
    (LABELS_HEADER, ["r3", "tone", "group-1", "dr-x", "", "", "", "7,5", "", ""],
     r"bad.csv, row 2, column 'value': '7,5' is not a number"),
    (LABELS_HEADER, ["r3", "tone", "group-1", "dr-x", "", "", "superb", "", "", ""],
     r"bad.csv, row 2, column 'option': option 'superb' is not among the options"),
    (LABELS_HEADER, ["r1", "c1-ecg", "group-1", "dr-x", "", "met", "", "", "", "two minutes"],
     r"bad.csv, row 2, column 'time' \(time_spent_seconds\): 'two minutes' is not a number"),
    (["response_id", "criterion_id", "cohort", "rater", "verdict"], ["r1", "c1-ecg", "group-1", "", "met"],
     r"bad.csv, row 2, column 'rater' \(annotator\): missing field 'annotator'"),
    (["response_id", "criterion_id", "annotator", "verdict"], ["r1", "c1-ecg", "dr-x", "met"],
     r"bad.csv: no column for cohort \(the rater's cohort\)"),
    (["response_id", "criterion_id", "judge", "sample", "verdict"], ["r1", "c1-ecg", "j", "1.5", "met"],
     r"bad.csv, row 2, column 'sample': '1.5' is not a whole number"),
    (["case", "notes"], ["c9", "x"], r"bad.csv: its columns fit no table"),
    (["response_id", "criterion_id", "annotator", "judge", "cohort", "verdict"], ["r1", "c1-ecg", "a", "j", "group-1", "met"],
     r"bad.csv: its columns fit a table of labels and of judgments: say which it is"),
])
def test_a_bad_row_is_named_by_file_row_and_column_and_nothing_is_written(mini_project, tmp_path, header, row, message):
    good = ["r2", "c1-call", "group-1", "dr-ok", "", "met", "", "", "", ""]
    rows = [good, row] if header is LABELS_HEADER else [row]
    if header is LABELS_HEADER:
        message = message.replace("row 2", "row 3")
    path = write_csv(tmp_path / "bad.csv", header, rows)
    before = (counts(), LabelHistory.objects.count(), get_user_model().objects.count())
    with pytest.raises(CommandError, match="import failed, nothing was written: " + message):
        call_command("import_bundle", str(path), "--project", "mini")
    assert (counts(), LabelHistory.objects.count(), get_user_model().objects.count()) == before


def test_a_mapping_names_the_kind_and_columns_and_is_checked(mini_project, tmp_path):
    path = write_csv(tmp_path / "mixed.csv", ["response_id", "criterion_id", "annotator", "judge", "cohort", "verdict"],
                     [["r2", "c1-call", "dr-z", "j", "group-1", "met"]])
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"table": "labels", "columns": {"verdict": "Verdict"}}))
    with pytest.raises(CommandError, match="mixed.csv: the map.json names column 'Verdict' for verdict, and mixed.csv "
                                           "has no such column"):
        call_command("import_bundle", str(path), "--project", "mini", "--mapping", str(mapping))
    mapping.write_text(json.dumps({"table": "labels", "columns": {"judge": "judge"}}))
    with pytest.raises(CommandError, match="map.json, field 'columns': labels tables have no field 'judge'"):
        call_command("import_bundle", str(path), "--project", "mini", "--mapping", str(mapping))
    mapping.write_text(json.dumps({"table": "labels"}))
    result = run("import_bundle", str(path), "--project", "mini", "--mapping", str(mapping))
    assert result["labels"] == 1 and result["left_out"] == {"columns": {"mixed.csv": ["judge"]}}


# -- workbooks -------------------------------------------------------------------------------------
def test_a_workbook_holds_a_table_per_sheet_imported_together(db, tmp_path):
    book = write_xlsx(tmp_path / "study.xlsx", {
        "cases": [["case_id", "prompt", "model", "response_id", "text", "difficulty"],
                  ["w1", "Chest pain?", "model-a", 101, "Call now.", "high"],
                  ["w1", "Chest pain?", "model-b", 102, "Rest.", "high"]],
        "labels": [["response_id", "criterion_id", "cohort", "annotator", "verdict", "value"],
                   [101, "calls", "g1", "dr-a", "met", None], [102, "calls", "g1", "dr-a", "not met", None]],
        "notes": [["anything"], ["left alone"]],
        "gold": [["response_id"], ["101"]],
    })
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.json").write_text(json.dumps({"slug": "wb", "name": "Workbook", "rubric": [
        {"criterion_id": "calls", "text": "Advises calling emergency services"}]}))
    run("import_bundle", str(project))
    with pytest.raises(CommandError, match=r"study.xlsx, sheet 'notes': its columns fit no table"):
        call_command("import_bundle", str(book), "--project", "wb")
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"tables": {"notes": {"table": "skip"}}}))
    result = run("import_bundle", str(book), "--project", "wb", "--mapping", str(mapping))
    assert (result["cases"], result["responses"], result["labels"]) == (1, 2, 2)
    assert Response.objects.get(external_id="102").text == "Rest."
    assert sorted(Label.objects.values_list("verdict", flat=True)) == ["met", "not_met"]


def test_a_bad_cell_of_a_sheet_names_the_sheet(db, tmp_path):
    book = write_xlsx(tmp_path / "bad.xlsx", {"responses": [["case_id", "messages", "model", "text"],
                                                            ["c1", "not json", "m", "t"]]})
    with pytest.raises(CommandError, match=r"bad.xlsx, sheet 'responses', row 2, column 'messages': not JSON"):
        call_command("import_bundle", str(book), "--project", "p")
    assert counts() == (0, 0, 0, 0)


# -- export and the round trip ---------------------------------------------------------------------
HOSTILE = ["=HYPERLINK(\"http://x\")", "'=already quoted", "-2 is low", "@home", "+1", "\tindented", "plain 'quote",
           "_x0041_ and \x01 control"]


def _fresh_copy_of(project: Project, tmp_path: Path) -> None:
    """Delete ``project`` and make it again from its bundle's project.json alone: the same rubric,
    cohorts and judges, no cases."""
    run("export_bundle", "--project", project.slug, "--out", str(tmp_path / "bundle"))
    Project.objects.all().delete()
    only = tmp_path / "project-only"
    only.mkdir()
    shutil.copy(tmp_path / "bundle" / "project.json", only / "project.json")
    run("import_bundle", str(only))


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_export_imports_into_a_project_with_the_same_rubric_and_exports_the_same_bytes(mini_project, tmp_path, kind):
    for text, label in zip(HOSTILE, Label.objects.order_by("pk")):
        Label.objects.filter(pk=label.pk).update(rationale=text)
    Case.objects.filter(external_id="c2").update(metadata={**Case.objects.get(external_id="c2").metadata,
                                                            "note": "=cmd", "score": 3})
    excluded = Case.objects.create(project=mini_project, external_id="c3", position=9, prompt="Left out")
    Response.objects.create(project=mini_project, case=excluded, external_id="r9", position=9, model="m", text="t")
    CaseQuality.objects.create(project=mini_project, case=excluded, flagged=True, excluded=True)
    first = run("export_bundle", "--project", "mini", "--out", str(tmp_path / "a"), "--format", kind)
    assert first["counts"]["left_out"] == {"excluded_cases": 1}
    if kind == "csv":
        assert sorted(first["files"]) == ["gold.csv", "judgments.csv", "labels.csv", "responses.csv"]
        labels = (tmp_path / "a" / "labels.csv").read_text(encoding="utf-8")
        assert '"\'=HYPERLINK(""http://x"")"' in labels and '"\'\'=already quoted"' in labels and '"\'-2 is low"' in labels
        assert "r9" not in (tmp_path / "a" / "responses.csv").read_text(encoding="utf-8")
        path = tmp_path / "a"
    else:
        assert list(first["files"]) == ["tables.xlsx"]
        book = load_workbook(tmp_path / "a" / "tables.xlsx")
        assert book.sheetnames == ["responses", "labels", "judgments", "gold"]
        cell = next(c for c in book["labels"]["I"] if c.value == "=HYPERLINK(\"http://x\")")
        assert cell.data_type == "s" and cell.quotePrefix  # text, never run
        path = tmp_path / "a" / "tables.xlsx"
    rationales = sorted(Label.objects.exclude(rationale="").values_list("rationale", flat=True))

    _fresh_copy_of(mini_project, tmp_path)
    result = run("import_bundle", str(path), "--project", "mini", "--format", kind)
    assert (result["cases"], result["responses"], result["labels"], result["judgments"]) == (2, 4, 34, 3)
    assert sorted(Label.objects.exclude(rationale="").values_list("rationale", flat=True)) == rationales
    assert Case.objects.get(external_id="c2").metadata["note"] == "=cmd"
    second = run("export_bundle", "--project", "mini", "--out", str(tmp_path / "b"), "--format", kind)
    assert second["files"] == first["files"] and second["counts"]["left_out"] == {"excluded_cases": 0}
    for name in first["files"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_a_sheet_longer_than_a_worksheet_is_refused_by_name(mini_project, tmp_path, monkeypatch):
    monkeypatch.setattr("evalsite.spreadsheet.XLSX_MAX_ROWS", 20)
    with pytest.raises(CommandError, match="the sheet 'labels' would have more than 20 rows, the most an XLSX "
                                           "worksheet holds; export with --format csv instead"):
        call_command("export_bundle", "--project", "mini", "--out", str(tmp_path / "x"), "--format", "xlsx")
    assert not (tmp_path / "x" / "tables.xlsx").exists()


# -- the upload's column step ----------------------------------------------------------------------
@pytest.fixture
def manager(mini_project):
    user = get_user_model().objects.create_user("boss", password="pw-boss-1234")
    grant(user, mini_project, "manager")
    return user


def test_an_uploaded_table_waits_for_its_columns_then_imports_with_them(manager, client, tmp_path,
                                                                        django_capture_on_commit_callbacks):
    client.force_login(manager)
    data = write_csv(tmp_path / "more.csv", ["Case", "Question", "Engine", "Output", "Ward"], [
        ["n1", "Headache for a week.", "model-a", "See a doctor.", "neuro"],
        ["n1", "Headache for a week.", "model-b", "Sleep more.", "neuro"],
    ]).read_bytes()
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post("/projects/mini/import/", {"bundle": SimpleUploadedFile("more.csv", data)})
    job = DataJob.objects.get(kind="import")
    assert answer.status_code == 302 and answer["Location"] == f"/jobs/{job.pk}/columns/"
    assert job.awaiting_columns and job.params["format"] == "csv"
    assert not data_job_run(job_id=job.pk).claimed  # held: no worker takes it
    page = client.get(f"/jobs/{job.pk}/columns/").content.decode()
    assert "<legend>more.csv</legend>" in page  # the file as the user named it
    assert '<option value="Case" selected>Case</option>' in page and '<option value="Question" selected>' in page
    assert "a response needs both its model and its text: no column for model" in page  # what is missing, at once
    assert "Choose columns" in client.get("/projects/mini/").content.decode()

    form = {"0.table": "responses", "0.shown": "responses", "0.case_id": "Case", "0.prompt": "Question",
            "0.model": "", "0.text": "Output", "start": ""}
    again = client.post(f"/jobs/{job.pk}/columns/", form).content.decode()
    assert "Not imported yet" in again and "a response needs both its model and its text: no column for model" in again
    form["0.model"] = "Engine"
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(f"/jobs/{job.pk}/columns/", form)
    assert answer.status_code == 302 and answer["Location"] == f"/projects/mini/?started={job.pk}#project-data"
    job.refresh_from_db()
    assert job.status == "finished", job.error
    assert job.params["mapping"]["tables"]["upload.csv"]["columns"]["model"] == "Engine"  # the stored upload's name
    assert (job.result["cases"], job.result["responses"]) == (1, 2)
    assert Case.objects.get(external_id="n1").metadata == {"Ward": "neuro"}
    assert client.post(f"/jobs/{job.pk}/columns/", form)["Location"] == f"/jobs/{job.pk}/"  # imported once


def test_changing_a_tables_kind_shows_that_kinds_fields(manager, client, tmp_path):
    client.force_login(manager)
    data = write_csv(tmp_path / "r.csv", ["response_id", "criterion_id", "who", "group", "verdict"], [
        ["r1", "c1-ecg", "dr-a", "group-1", "met"]]).read_bytes()
    client.post("/projects/mini/import/", {"bundle": SimpleUploadedFile("r.csv", data), "format": "csv"})
    job = DataJob.objects.get(kind="import")
    page = client.get(f"/jobs/{job.pk}/columns/").content.decode()
    assert '<option value="" selected>choose…</option>' in page and "its columns fit no table" in page
    partial = client.post(f"/jobs/{job.pk}/columns/", {"0.table": "labels", "0.shown": ""},
                          HTTP_HX_REQUEST="true").content.decode()
    assert partial.strip().startswith('<form id="columns-form"') and 'data-field="annotator"' in partial
    assert '<option value="group" selected>group</option>' in partial and "no column for annotator" in partial


def test_an_upload_whose_header_cannot_be_read_fails_its_job_with_the_reason(manager, client):
    client.force_login(manager)
    data = b"case_id,prompt,case_id\r\nc1,Fever?,c1\r\n"
    answer = client.post("/projects/mini/import/", {"bundle": SimpleUploadedFile("twice.csv", data)})
    job = DataJob.objects.get(kind="import")
    assert answer["Location"] == f"/jobs/{job.pk}/columns/"
    assert client.get(answer["Location"])["Location"] == f"/jobs/{job.pk}/"
    job.refresh_from_db()
    assert job.status == "failed" and job.error == "upload.csv, row 1: the header 'case_id' names columns A and C"
    assert "the header &#x27;case_id&#x27; names columns A and C" in client.get(f"/jobs/{job.pk}/").content.decode()
