"""Reading spreadsheets as tables: a CSV file, a folder of CSV files, or an XLSX workbook (one table
per sheet). A table has its name (the sheet's, or the CSV file's without ``.csv``), its header row
and its rows, each with the row number a spreadsheet shows (the header is row 1). Blank rows are
skipped; a header cell that is empty, or a header named twice, is an error.

CSV: UTF-8 (with or without Excel's byte order mark), comma-separated unless the header row holds
more semicolons or tabs than commas; a cell read back as ``evalsite.spreadsheet`` wrote it (the
apostrophe before a formula start taken off). XLSX: read with openpyxl's read-only reader, cells
typed (numbers stay numbers), ``_xHHHH_`` escapes turned back, after the same zip checks as an
uploaded bundle (total size, expansion ratio).

Every error is a ``TableError``: a ``BundleError`` that names the file, the sheet, the row and the
column.
"""
import csv
import string as _string
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path

from django.conf import settings

from evalsite.spreadsheet import csv_cell_read, xlsx_cell_read
from grading.bundles.errors import BundleError

CSV_SUFFIX, XLSX_SUFFIX = ".csv", ".xlsx"
DELIMITERS = (",", ";", "\t")
SAMPLE_BYTES = 64 * 1024  # what recognizing a CSV's delimiter reads of it
RATIO_APPLIES_ABOVE = 1024 * 1024  # as for bundles: small parts may compress well


class TableError(BundleError):
    """An error in a table, named by file, sheet, row and column (and the field the column is for)."""

    def __init__(self, file: str, message: str, *, sheet: str | None = None, row: int | None = None,
                 column: str | None = None, field: str | None = None):
        super().__init__(file, message, line=row, field=field)
        self.sheet, self.row, self.column = sheet, row, column
        where = file + (f", sheet {sheet!r}" if sheet is not None else "")
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}" + (f" ({field})" if field and field != column else "")
        elif field:
            where += f", field {field!r}"
        ValueError.__init__(self, f"{where}: {message}")


@dataclass
class Table:
    """One table of a file: ``name`` says what kind of table it may be (the sheet, or the CSV file
    without its suffix); ``key`` is its name in the column mapping (the sheet, or the CSV file)."""

    file: str
    sheet: str | None
    name: str
    key: str
    headers: list[str]
    _rows: object = field(repr=False, default=None)  # () -> iterator of (row number, cells)

    def rows(self) -> Iterator[tuple[int, list]]:
        """(row number, cells) of every non-blank row after the header, the cells padded to the header."""
        width = len(self.headers)
        for number, cells in self._rows():
            if all(_blank(c) for c in cells):
                continue
            if len(cells) > width:
                extra = next((i for i in range(width, len(cells)) if not _blank(cells[i])), None)
                if extra is not None:
                    raise self.error(f"a cell beyond the header's {width} columns (column {column_letter(extra)})",
                                     row=number)
                cells = cells[:width]
            yield number, cells + [None] * (width - len(cells))

    def error(self, message: str, *, row: int | None = None, column: str | None = None,
              field: str | None = None) -> TableError:
        return TableError(self.file, message, sheet=self.sheet, row=row, column=column, field=field)

    @property
    def label(self) -> str:
        """How messages name the table: the CSV file, or the workbook and its sheet."""
        return self.file if self.sheet is None else f"{self.file}, sheet {self.sheet!r}"


def _blank(cell) -> bool:
    return cell is None or (isinstance(cell, str) and not cell.strip())


def column_letter(index: int) -> str:
    """A 0-based column index as a spreadsheet names it: A, B, ..., Z, AA, ..."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = _string.ascii_uppercase[rest] + letters
    return letters


def _headers(table_file: str, sheet: str | None, cells: list) -> list[str]:
    headers = [_header_text(c) for c in cells]
    while headers and not headers[-1]:
        headers.pop()
    seen: dict[str, int] = {}
    for i, header in enumerate(headers):
        if not header:
            raise TableError(table_file, f"column {column_letter(i)} has no header", sheet=sheet, row=1)
        if header in seen:
            raise TableError(table_file, f"the header {header!r} names columns {column_letter(seen[header])} and "
                                         f"{column_letter(i)}", sheet=sheet, row=1)
        seen[header] = i
    if not headers:
        raise TableError(table_file, "no header row (the first row names the columns)", sheet=sheet, row=1)
    return headers


def _header_text(cell) -> str:
    return "" if cell is None else cell_text(cell).strip()


def cell_text(cell) -> str:
    """A cell as text: a workbook's number as a spreadsheet shows it (3, not 3.0), a date in ISO form."""
    if cell is None:
        return ""
    if isinstance(cell, str):
        return cell
    if isinstance(cell, bool):
        return "true" if cell else "false"
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    if isinstance(cell, (datetime, date, time)):
        return cell.isoformat()
    return str(cell)


# -- CSV -------------------------------------------------------------------------------------------
def _delimiter(path: Path) -> str:
    with open(path, "rb") as handle:
        head = handle.read(SAMPLE_BYTES).split(b"\n", 1)[0]
    counts = {d: head.count(d.encode()) for d in DELIMITERS}
    best = max(DELIMITERS, key=lambda d: counts[d])  # ties: the comma (first)
    return best if counts[best] else ","


def _csv_records(path: Path, delimiter: str) -> Iterator[list[str]]:
    limit = max(csv.field_size_limit(), settings.EVALSITE_BUNDLE_MAX_LINE_BYTES)
    csv.field_size_limit(limit)  # a response or a criteria list may be longer than the default 128 kB
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            for record in csv.reader(handle, delimiter=delimiter, strict=True):
                yield [csv_cell_read(cell) for cell in record]
    except UnicodeDecodeError as exc:
        raise TableError(path.name, f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as CSV UTF-8") from None


def csv_table(path: Path, *, name: str | None = None) -> Table:
    """The table of one CSV file."""
    delimiter = _delimiter(path)
    records = _csv_records(path, delimiter)
    try:
        first = next(records, None)
    except csv.Error as exc:
        raise TableError(path.name, f"not a CSV table: {exc}", row=1) from None
    if first is None:
        raise TableError(path.name, "the file is empty (the first row names the columns)", row=1)
    headers = _headers(path.name, None, first)

    def rows():
        numbered = _csv_records(path, delimiter)
        next(numbered)
        number = 1
        while True:
            try:
                record = next(numbered)
            except StopIteration:
                return
            except csv.Error as exc:
                raise TableError(path.name, f"not a CSV table: {exc}", row=number + 1) from None
            number += 1
            yield number, record

    return Table(file=path.name, sheet=None, name=name or path.stem, key=path.name, headers=headers, _rows=rows)


def csv_folder_tables(path: Path) -> list[Table]:
    """The tables of a folder's CSV files, in name order."""
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() == CSV_SUFFIX)
    if not files:
        raise TableError(path.name, "no .csv files in the folder")
    return [csv_table(p) for p in files]


# -- XLSX ------------------------------------------------------------------------------------------
def _zip_check(path: Path) -> None:
    """The checks of an uploaded bundle's zip, for the zip a workbook is: what it expands to."""
    limit, ratio = settings.EVALSITE_BUNDLE_MAX_BYTES, settings.EVALSITE_BUNDLE_MAX_RATIO
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise TableError(path.name, f"not an XLSX workbook: {exc}") from None
    if sum(info.file_size for info in infos) > limit:
        raise TableError(path.name, "the workbook expands to more than EVALSITE_BUNDLE_MAX_BYTES")
    for info in infos:
        if info.file_size > RATIO_APPLIES_ABOVE and info.file_size > ratio * max(info.compress_size, 1):
            raise TableError(path.name, f"part {info.filename[:200]!r} expands more than {ratio} times (refused as a zip bomb)")


class Workbook:
    """An XLSX workbook opened read-only; use as a context manager."""

    def __init__(self, path: Path):
        from openpyxl import load_workbook  # lazy: openpyxl loads only when a workbook is read

        _zip_check(path)
        self.path = path
        try:
            self.book = load_workbook(path, read_only=True, data_only=True)
        except Exception as exc:  # openpyxl raises many kinds (KeyError, InvalidFileException, XML errors)
            raise TableError(path.name, f"not an XLSX workbook openpyxl reads: {exc}") from None

    def __enter__(self) -> "Workbook":
        return self

    def __exit__(self, *exc) -> None:
        self.book.close()

    def tables(self) -> list[Table]:
        """One table per worksheet that holds anything, in the workbook's order."""
        tables = []
        for sheet in self.book.worksheets:
            first = next(sheet.iter_rows(min_row=1, max_row=1, values_only=True), None)
            if (first is None or all(_blank(c) for c in first)) and not any(
                    not all(_blank(c) for c in cells) for _, cells in self._records(sheet, 2)):
                continue  # an empty sheet
            headers = _headers(self.path.name, sheet.title, [xlsx_cell_read(c) for c in (first or ())])
            tables.append(Table(file=self.path.name, sheet=sheet.title, name=sheet.title, key=sheet.title,
                                headers=headers, _rows=lambda sheet=sheet: self._records(sheet, 2)))
        if not tables:
            raise TableError(self.path.name, "the workbook has no sheet with a table")
        return tables

    @staticmethod
    def _records(sheet, first_row: int) -> Iterator[tuple[int, list]]:
        for number, values in enumerate(sheet.iter_rows(min_row=first_row, values_only=True), start=first_row):
            yield number, [xlsx_cell_read(v) for v in values]


def is_workbook(path: Path) -> bool:
    """An .xlsx file that is a zip holding a workbook part (what recognizing one reads: the zip's directory)."""
    if not (path.is_file() and path.suffix.lower() == XLSX_SUFFIX and zipfile.is_zipfile(path)):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return "xl/workbook.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return False


def is_csv(path: Path) -> bool:
    """A .csv file, or a folder of them without a bundle's project.json."""
    if path.is_file():
        return path.suffix.lower() == CSV_SUFFIX
    return (path.is_dir() and not (path / "project.json").exists()
            and any(p.suffix.lower() == CSV_SUFFIX for p in path.iterdir() if p.is_file()))
