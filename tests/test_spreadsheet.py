"""The one CSV and XLSX writer (``evalsite.spreadsheet``): no cell can run as a formula or break a
row apart, in any reader, and a workbook's bytes depend only on its content."""
import csv
import hashlib
import io

import openpyxl
import pandas as pd
import pytest

from evalsite.spreadsheet import (
    SpreadsheetTooLarge,
    XlsxWriter,
    csv_cell,
    csv_cell_read,
    csv_lines,
    csv_rows,
    csv_writer,
    xlsx_cell_read,
    xlsx_write,
)

HOSTILE = ["=HYPERLINK(\"http://x\",\"y\")", "Looks fine\r=HYPERLINK(1)", "two\nlines", "tab\there", "v\x0bt",
           "+1", "-x", "@cmd", "\uff1dSUM(A1)", "plain", "'quoted", "_x0041_ literal"]


def test_csv_cell_neutralizes_formula_starts_and_keeps_numbers():
    assert [csv_cell(v) for v in ("=SUM(A1)", "+1", "-x", "@cmd", "\tx", "\rx", "\nx", "\uff20x")] == [
        "'=SUM(A1)", "'+1", "'-x", "'@cmd", "'\tx", "'\rx", "'\nx", "'\uff20x"]
    assert (csv_cell("plain"), csv_cell(None), csv_cell(-1.5), csv_cell(0), csv_cell(True)) == ("plain", "", -1.5, 0, True)


def test_a_carriage_return_inside_a_cell_never_starts_a_row():
    buffer = io.StringIO(newline="")
    writer = csv_writer(buffer)
    writer.writerow(["note", "n"])
    writer.writerows(csv_rows([(text, i) for i, text in enumerate(HOSTILE)]))
    text = buffer.getvalue()
    assert text.endswith("\r\n")
    frame = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert len(frame) == len(HOSTILE)  # 12 rows, not one more per CR or LF
    assert frame["n"].tolist() == list(range(len(HOSTILE)))
    assert frame["note"].tolist() == [csv_cell(t) for t in HOSTILE]
    assert [row[0] for row in csv.reader(io.StringIO(text, newline=""))][1:] == [csv_cell(t) for t in HOSTILE]


def test_streamed_csv_lines_are_the_same_dialect():
    lines = list(csv_lines(["a", "=b"], [["x\ry", 1.5, None]]))
    assert lines == ['"a","\'=b"\r\n', '"x\ry",1.5,""\r\n']


def test_csv_rows_changes_only_what_needs_it():
    rows = [("a", 1), ("b", 2)]
    assert csv_rows(rows) is rows
    assert csv_rows([("=a", 1), ("=a", None)]) == [("'=a", 1), ("'=a", None)]  # None is written empty


def test_xlsx_cells_never_run_and_keep_control_characters(tmp_path):
    path = tmp_path / "t.xlsx"
    xlsx_write(path, [("sheet", ["text", "n"], [(text, i) for i, text in enumerate(HOSTILE)] + [(None, 1.5)])])
    sheet = openpyxl.load_workbook(path).active
    rows = list(sheet.iter_rows(min_row=2))
    for (text, n), expected in zip(rows, HOSTILE):
        assert text.data_type == "s"  # never "f" (a formula)
        if expected.startswith(("=", "+", "-", "@", "\t", "\r", "\uff1d")):
            assert text.quotePrefix
    by_text = [row[0].value for row in rows]
    assert by_text[HOSTILE.index("v\x0bt")] == "v_x000B_t"  # XML holds no \x0b: the OOXML escape Excel decodes
    assert by_text[HOSTILE.index("_x0041_ literal")] == "_x005F_x0041_ literal"  # a literal escape stays literal
    assert by_text[HOSTILE.index("Looks fine\r=HYPERLINK(1)")] == "Looks fine\r=HYPERLINK(1)"
    assert [row[1].value for row in rows] == [*range(len(HOSTILE)), 1.5]
    assert rows[-1][0].value is None


def test_xlsx_bytes_depend_only_on_the_content(tmp_path):
    digests = set()
    for name in ("a.xlsx", "b.xlsx"):
        xlsx_write(tmp_path / name, [("one", ["x"], [("=1",), ("y",)]), ("two", ["z"], [(1,)])])
        digests.add(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest())
    assert len(digests) == 1
    assert openpyxl.load_workbook(tmp_path / "a.xlsx").sheetnames == ["one", "two"]


def test_a_sheet_longer_than_excel_allows_is_refused_by_name(tmp_path, monkeypatch):
    import evalsite.spreadsheet as spreadsheet

    monkeypatch.setattr(spreadsheet, "XLSX_MAX_ROWS", 3)
    writer = XlsxWriter(tmp_path / "t.xlsx")
    writer.sheet("gold", ["x"])
    writer.rows([(1,), (2,)])
    with pytest.raises(SpreadsheetTooLarge, match="'gold'"):
        writer.row((3,))
    writer.close()  # what was written before the refusal is a whole workbook
    assert [r[0] for r in openpyxl.load_workbook(tmp_path / "t.xlsx").active.iter_rows(values_only=True)] == ["x", 1, 2]


def test_every_cell_reads_back_as_the_text_written(tmp_path):
    texts = [*HOSTILE, "'=already quoted", "''+twice", "'", "", "__x0041_", "\ufffe"]
    buffer = io.StringIO(newline="")
    csv_writer(buffer).writerows(csv_rows([(t,) for t in texts]))
    assert [csv_cell_read(row[0]) for row in csv.reader(io.StringIO(buffer.getvalue(), newline=""))] == texts
    assert csv_cell("'=already quoted") == "''=already quoted" and csv_cell("'quoted") == "'quoted"
    path = tmp_path / "t.xlsx"
    xlsx_write(path, [("sheet", ["text"], [(t,) for t in texts])])
    read = [xlsx_cell_read(row[0]) for row in openpyxl.load_workbook(path, read_only=True).active.iter_rows(
        min_row=2, values_only=True)]
    assert read == [t or None for t in texts]  # an empty text is an empty cell
