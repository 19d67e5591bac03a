"""gold.parquet and gold.xlsx beside gold.csv (issue 24 point 4): one documented table in three
files that pandas, polars, pyarrow and spreadsheets read as they are, listed in the manifest
with their sha256, byte-stable, and a note holding a carriage return cannot add a CSV row
(issue 27 finding 1)."""
import hashlib
import json

import openpyxl
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

from annotation.models import Criterion, Project, Response
from grading.adjudication.services import adjudication_record
from grading.bundles import gold_export

pytestmark = pytest.mark.django_db
HOSTILE_NOTE = "Looks fine\r=HYPERLINK(\"http://evil\",\"x\")"


@pytest.fixture
def exported(mini_project, tmp_path):
    adjudication_record(response=Response.objects.get(external_id="r3"), criterion=Criterion.objects.get(external_id="tone"),
                        user=None, option_label="good", note=HOSTILE_NOTE)
    out = tmp_path / "out"
    result = gold_export(project=mini_project, out_dir=out)
    return out, result


def gold_lines(out):
    return [json.loads(line) for line in (out / "gold.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_carriage_return_in_a_note_is_one_csv_row(exported):
    out, _ = exported
    frame = pd.read_csv(out / "gold.csv", keep_default_na=False)
    assert len(frame) == len(gold_lines(out))  # no row starts inside the note
    [row] = frame[frame["note"] != ""].to_dict("records")
    assert row["note"] == HOSTILE_NOTE  # kept whole; it does not begin with a formula sign


def test_parquet_is_the_gold_table_typed(exported):
    out, _ = exported
    table = pq.read_table(out / "gold.parquet")
    csv_columns = pd.read_csv(out / "gold.csv", nrows=0).columns.tolist()
    assert table.column_names == csv_columns
    assert str(table.schema.field("value").type) == "double"
    assert {str(table.schema.field(c).type) for c in csv_columns if c != "value"} == {"string"}
    frame = pd.read_parquet(out / "gold.parquet")
    gold = gold_lines(out)
    assert frame["response_id"].tolist() == [g["response_id"] for g in gold]
    assert frame["criterion_id"].tolist() == [g["criterion_id"] for g in gold]
    assert frame["provenance"].tolist() == [g["provenance"] for g in gold]
    assert [None if pd.isna(v) else v for v in frame["value"]] == [g.get("value") for g in gold]
    assert [None if pd.isna(v) else v for v in frame["verdict"]] == [g.get("verdict") for g in gold]
    assert frame["note"].tolist().count(HOSTILE_NOTE) == 1  # raw text: Parquet is not a spreadsheet
    assert pl.read_parquet(out / "gold.parquet").shape == frame.shape


def test_xlsx_holds_the_same_rows(exported):
    out, _ = exported
    sheet = openpyxl.load_workbook(out / "gold.xlsx").active
    rows = list(sheet.iter_rows(values_only=True))
    frame = pd.read_parquet(out / "gold.parquet")
    assert list(rows[0]) == frame.columns.tolist()
    expected = [[None if (v is None or (isinstance(v, float) and v != v)) else v for v in row]
                for row in frame.itertuples(index=False)]
    assert [list(r) for r in rows[1:]] == expected


def test_the_manifest_lists_them_and_their_bytes_are_stable(exported, mini_project, tmp_path):
    out, result = exported
    manifest = json.loads((out / "manifest.json").read_text())
    for name in ("gold.parquet", "gold.xlsx"):
        assert manifest["files"][name] == hashlib.sha256((out / name).read_bytes()).hexdigest() == result["files"][name]
        assert manifest["counts"][name] == manifest["counts"]["gold.jsonl"]
    assert not (out / "gold.rows").exists() and "gold.rows" not in manifest["files"]
    again = gold_export(project=mini_project, out_dir=tmp_path / "again")
    assert again["files"] == result["files"]


def test_a_gold_set_longer_than_a_worksheet_gets_no_xlsx_and_says_so(mini_project, tmp_path, monkeypatch):
    from grading.bundles import gold_tables

    monkeypatch.setattr(gold_tables, "XLSX_MAX_ROWS", 5)
    out = tmp_path / "out"
    result = gold_export(project=mini_project, out_dir=out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert not (out / "gold.xlsx").exists() and "gold.xlsx" not in result["files"]
    assert "more than an XLSX worksheet holds" in manifest["not_written"]["gold.xlsx"]
    assert pq.read_table(out / "gold.parquet").num_rows == manifest["counts"]["gold.jsonl"]


def test_an_empty_gold_set_still_has_its_columns(db, tmp_path):
    project = Project.objects.create(slug="empty", name="Empty")
    out = tmp_path / "out"
    gold_export(project=project, out_dir=out)
    table = pq.read_table(out / "gold.parquet")
    assert table.num_rows == 0 and table.column_names[:3] == ["response_id", "criterion_id", "case_id"]
    assert list(openpyxl.load_workbook(out / "gold.xlsx").active.iter_rows(values_only=True)) == [tuple(table.column_names)]


def test_a_gold_set_above_the_xlsx_setting_gets_no_xlsx_and_says_why(mini_project, tmp_path, settings):
    settings.EVALSITE_GOLD_XLSX_MAX_ROWS = 3
    out = tmp_path / "out"
    gold_export(project=mini_project, out_dir=out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert not (out / "gold.xlsx").exists() and "EVALSITE_GOLD_XLSX_MAX_ROWS" in manifest["not_written"]["gold.xlsx"]
    assert (out / "gold.parquet").exists()
