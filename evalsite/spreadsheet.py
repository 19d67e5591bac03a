"""Every CSV and XLSX file the site writes (report downloads, the audit trail, gold, labels and
judgments) is written here, so that none can carry a live formula or break a row apart.

- A text cell that begins with ``=``, ``+``, ``-``, ``@`` (or their full-width forms), a tab, a
  carriage return or a line feed is a formula to a spreadsheet (CSV or formula injection). In a
  CSV it gets a leading apostrophe, which spreadsheets hide and read as "this is text"; in an
  XLSX it is stored as a string with the "quote prefix" flag, so it shows as typed and never runs.
  Numbers stay numbers (a negative number is a number, not text). A CSV text that already begins
  with apostrophes before such a start gets one more, so that reading a cell back
  (``csv_cell_read``: one leading apostrophe off where the rest would be a formula) gives exactly
  the text written; an XLSX cell reads back as written (``xlsx_cell_read``).
- Every text cell of a CSV is quoted (``QUOTE_NONNUMERIC``), so a control character inside a cell
  (a bare carriage return, a vertical tab) stays inside its cell for every reader; rows end in
  CRLF (RFC 4180).
- An XLSX holds no control characters (XML cannot): those are written as the ``_xHHHH_`` escapes
  of the Office Open XML standard, which Excel and LibreOffice turn back into the character.
  The workbook is byte-stable: fixed timestamps inside and on its zip members.
"""
import csv
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")
XLSX_MAX_ROWS = 1_048_576  # a worksheet's limit, the header row included
_XML_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|_(?=x[0-9A-Fa-f]{4}_)")
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_FIXED_STAMP = "1980-01-01T00:00:00Z"


class SpreadsheetTooLarge(ValueError):
    """More rows than one XLSX worksheet holds."""


def _formula_like(text: str) -> bool:
    return text.startswith(FORMULA_START)


def csv_cell(value):
    """``value`` as a CSV cell: None as empty, numbers as they are, text neutralized."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str):
        return value
    return "'" + value if _formula_like(value.lstrip("'")) else value


def csv_cell_read(text: str) -> str:
    """The text a CSV cell of ``csv_cell`` holds: the apostrophe it put before a formula start taken
    off (a spreadsheet that saves such a cell as CSV writes it the same way)."""
    return text[1:] if text.startswith("'") and _formula_like(text.lstrip("'")) else text


_XML_ESCAPED = re.compile(r"_x([0-9A-Fa-f]{4})_")


def xlsx_cell_read(value):
    """The value of a workbook cell as written: the ``_xHHHH_`` escapes of characters XML cannot
    hold (Office Open XML; Excel writes them too, openpyxl reads them as they are) turned back."""
    if isinstance(value, str) and "_x" in value:
        return _XML_ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), value)
    return value


def csv_writer(stream):
    """A ``csv.writer`` on ``stream`` (text, opened with ``newline=""``, or a buffer) in the site's
    dialect: every text cell quoted, CRLF row ends. Give it rows made by ``csv_rows``."""
    return csv.writer(stream, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\r\n")


def csv_rows(rows: list[tuple]) -> list[tuple]:
    """``rows`` with every cell as ``csv_cell`` makes it, computed once per distinct value of a
    column, and only for the columns where it changes something: a gold CSV repeats the same ids,
    models and decisions hundreds of thousands of times, and a formula-like text is rare."""
    if not rows:
        return rows
    columns = list(zip(*rows))
    changed = False
    for i, column in enumerate(columns):
        cells = {value: csv_cell(value) for value in set(column) if value is not None}
        if any(cell is not value for value, cell in cells.items()):
            columns[i] = [cells[v] if v in cells else csv_cell(v) for v in column]  # (a NaN is never "in": computed)
            changed = True
    return list(zip(*columns)) if changed else rows


class _Echo:
    """A file-like object whose ``write`` returns what it is given (streamed CSV responses)."""

    def write(self, value):
        return value


def csv_lines(header: list, rows: Iterable) -> Iterable[str]:
    """The CSV text of ``header`` and ``rows``, one row at a time (for a streamed download)."""
    writer = csv_writer(_Echo())
    yield writer.writerow([csv_cell(c) for c in header])
    for row in rows:
        yield writer.writerow([csv_cell(v) for v in row])


def _xml_safe(text: str) -> str:
    return _XML_ILLEGAL.sub(lambda m: "_x005F_" if m.group() == "_" else f"_x{ord(m.group()):04X}_", text)


class XlsxWriter:
    """One workbook written sheet by sheet in openpyxl's write-only mode (constant memory)."""

    def __init__(self, path: str | Path):
        from openpyxl import Workbook  # lazy: openpyxl is loaded only by what writes a workbook
        from openpyxl.cell import WriteOnlyCell  # lazy: with the workbook

        self.path = Path(path)
        self._workbook = Workbook(write_only=True)
        self._cell_class = WriteOnlyCell
        self._sheet = None
        self._rows = 0
        self._cells: dict = {}

    def sheet(self, name: str, header: list) -> None:
        """Start the worksheet ``name`` with its ``header`` row."""
        self._sheet = self._workbook.create_sheet(title=name[:31])
        self._rows = 0
        self._cells = {}
        self.row(header)

    def _cell(self, value):
        if not isinstance(value, str):
            return value
        cell = self._cells.get(value)
        if cell is None:
            safe = _xml_safe(value)
            if _formula_like(safe) or safe.startswith("'"):
                cell = self._cell_class(self._sheet, value=safe)
                cell.data_type = "s"
                cell.quotePrefix = True
            else:
                cell = safe
            if len(self._cells) < 100_000:  # distinct values repeat (ids, models, decisions): keep them
                self._cells[value] = cell
        return cell

    def row(self, values) -> None:
        self._rows += 1
        if self._rows > XLSX_MAX_ROWS:
            raise SpreadsheetTooLarge(f"the sheet {self._sheet.title!r} would have more than {XLSX_MAX_ROWS:,} rows, "
                                      "the most an XLSX worksheet holds; use the CSV or Parquet file instead")
        cell = self._cell
        self._sheet.append([cell(v) for v in values])

    def rows(self, rows: Iterable) -> None:
        for values in rows:
            self.row(values)

    def abandon(self) -> None:
        """Give the workbook up unsaved (a sheet refused as too long): no file is written, and each
        sheet's writer is closed and its temporary file removed (openpyxl's write-only sheets stream
        into temporary files until the workbook is saved)."""
        for sheet in self._workbook.worksheets:
            sheet.close()
            sheet._writer.cleanup()

    def close(self) -> None:
        """Save, then rewrite the zip with fixed member times and document times (byte-stable)."""
        self._workbook.save(self.path)
        staged = self.path.with_name(self.path.name + ".tmp")
        with zipfile.ZipFile(self.path) as source, zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as target:
            for member in source.infolist():
                data = source.read(member.filename)
                if member.filename == "docProps/core.xml":
                    data = re.sub(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:)", rb"\g<1>" +
                                  _FIXED_STAMP.encode() + rb"\g<3>", data)
                info = zipfile.ZipInfo(member.filename, date_time=_FIXED_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                target.writestr(info, data)
        staged.replace(self.path)


def xlsx_write(path: str | Path, sheets: Iterable[tuple[str, list, Iterable]]) -> None:
    """Write the workbook ``path`` of ``(name, header, rows)`` sheets."""
    writer = XlsxWriter(path)
    for name, header, rows in sheets:
        writer.sheet(name, header)
        writer.rows(rows)
    writer.close()
