"""Writing a project's tables: cases and responses, labels, judgments and gold, one row per response
and per (response, criterion, rater), as CSV files or as one XLSX workbook, through
``evalsite.spreadsheet`` (formula starts neutralized, byte-stable).

The rows come from the project's evalsite bundle export (``gold_export`` into a temporary folder),
so they are what the bundle holds: final labels, public ids, the bundle's order. Cases that quality
control excluded are left out of every table, as they are out of gold, so that the tables import
into a project with the same rubric and export again as the same bytes. ``gold.csv`` is the export's
own file; the workbook's ``gold`` sheet has the same rows (from ``gold.parquet``).

A table longer than an XLSX worksheet holds is refused by name (``SpreadsheetTooLarge``: use
``--format csv``) and no workbook is written; it is not split over several sheets.
"""
import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from evalsite.spreadsheet import SpreadsheetTooLarge, XlsxWriter, csv_rows, csv_writer

from .fields import METADATA_PREFIX

CASE_COLUMNS = ("case_id", "prompt", "messages", "reference_answer", "criteria")
RESPONSE_COLUMNS = ("response_id", "model", "author_kind", "text")
LABEL_COLUMNS = ("response_id", "criterion_id", "cohort", "annotator", "role", "verdict", "option", "value", "rationale",
                 "evidence", "time_spent_seconds")
JUDGMENT_COLUMNS = ("response_id", "criterion_id", "judge", "judge_model", "condition", "sample", "verdict", "option",
                    "value", "explanation", "evidence", "raw")
WORKBOOK = "tables.xlsx"
CSV_CHUNK = 10_000  # rows written at a time


def _jsonl(path: Path):
    if not path.exists():
        return
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _json_text(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _meta_cell(value):
    return value if isinstance(value, str) else _json_text(value)


class _Tables:
    """The tables of a bundle export in ``folder``, excluded cases left out."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.excluded = {q["case_id"] for q in _jsonl(folder / "quality.jsonl") if q.get("excluded")}
        self.cases = [c for c in _jsonl(folder / "cases.jsonl") if c["case_id"] not in self.excluded]
        self.responses = [r for r in _jsonl(folder / "responses.jsonl") if r["case_id"] not in self.excluded]
        self.kept = {r["response_id"] for r in self.responses}
        self.gold_rows = 0

    def responses_table(self) -> tuple[list[str], list[tuple]]:
        keys = sorted({key for case in self.cases for key in case.get("metadata") or {}})
        header = [*CASE_COLUMNS, *RESPONSE_COLUMNS, *(METADATA_PREFIX + key for key in keys)]
        case_cells = {}
        for case in self.cases:
            metadata = case.get("metadata") or {}
            case_cells[case["case_id"]] = (
                case["case_id"], case.get("prompt"), _json_text(case["messages"]) if "messages" in case else None,
                case.get("reference_answer"), _json_text(case["criteria"]) if case.get("criteria") else None,
            ), tuple(_meta_cell(metadata[key]) if key in metadata else None for key in keys)
        rows, answered = [], set()
        for response in self.responses:
            cells, meta = case_cells[response["case_id"]]
            answered.add(response["case_id"])
            rows.append((*cells, *(response.get(name) for name in RESPONSE_COLUMNS), *meta))
        for case in self.cases:  # a case without a response: its own row, the response's cells empty
            if case["case_id"] not in answered:
                cells, meta = case_cells[case["case_id"]]
                rows.append((*cells, *(None for _ in RESPONSE_COLUMNS), *meta))
        return header, rows

    def items_table(self, name: str, columns: tuple[str, ...]) -> tuple[list[str], Iterator[tuple]]:
        def rows():
            for obj in _jsonl(self.folder / name):
                if obj["response_id"] in self.kept:
                    yield tuple(_json_text(obj[c]) if c == "evidence" and obj.get(c) else
                                None if c == "evidence" else obj.get(c) for c in columns)
        return list(columns), rows()

    def gold_table(self) -> tuple[list[str], Iterator[tuple]]:
        import pyarrow.parquet as pq  # lazy: only an export loads Arrow

        source = pq.ParquetFile(self.folder / "gold.parquet")

        def rows():
            for group in range(source.num_row_groups):
                table = source.read_row_group(group)
                yield from zip(*(table.column(i).to_pylist() for i in range(table.num_columns)))
        return list(source.schema_arrow.names), rows()

    def all(self, *, gold: bool) -> list[tuple[str, list[str], Iterator[tuple]]]:
        tables = [("responses", *self.responses_table()),
                  ("labels", *self.items_table("labels.jsonl", LABEL_COLUMNS)),
                  ("judgments", *self.items_table("judgments.jsonl", JUDGMENT_COLUMNS))]
        return [*tables, ("gold", *self.gold_table())] if gold else tables


def _export(project, out_dir: Path, write) -> dict:
    from grading.bundles import gold_export  # lazy: the bundle code brings pandas: loaded when a bundle is written

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tables-") as work:
        folder = Path(work)
        exported = gold_export(project=project, out_dir=folder)  # the one export path
        tables = _Tables(folder)
        tables.gold_rows = exported["counts"].get("gold.jsonl", 0)
        files, counts = write(tables, folder, out_dir)
    counts["left_out"] = {"excluded_cases": len(tables.excluded)}
    return {"files": files, "counts": counts}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_csv(tables: _Tables, folder: Path, out_dir: Path) -> tuple[dict, dict]:
    files, counts = {}, {}
    for name, header, rows in tables.all(gold=False):
        path, n = out_dir / f"{name}.csv", 0
        rows = iter(rows)
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv_writer(handle)
            writer.writerows(csv_rows([tuple(header)]))
            while chunk := list(islice(rows, CSV_CHUNK)):
                writer.writerows(csv_rows(chunk))
                n += len(chunk)
        files[path.name], counts[path.name] = _sha256(path), n
    shutil.copyfile(folder / "gold.csv", out_dir / "gold.csv")  # the exporter's own gold table
    files["gold.csv"], counts["gold.csv"] = _sha256(out_dir / "gold.csv"), tables.gold_rows
    return files, counts


def _write_xlsx(tables: _Tables, folder: Path, out_dir: Path) -> tuple[dict, dict]:
    """One workbook, a sheet per table; a sheet too long for a worksheet raises SpreadsheetTooLarge
    (naming it) before the workbook is saved, so no file is left."""
    path, counts = out_dir / WORKBOOK, {}
    workbook = XlsxWriter(path)
    for name, header, rows in tables.all(gold=True):
        workbook.sheet(name, header)
        n = 0
        try:
            for row in rows:
                workbook.row(row)
                n += 1
        except SpreadsheetTooLarge as exc:
            workbook.abandon()
            raise SpreadsheetTooLarge(f"{exc.args[0].split('; ')[0]}; export with --format csv instead") from None
        counts[f"{WORKBOOK}:{name}"] = n
    workbook.close()
    return {path.name: _sha256(path)}, counts


def write_csv(*, project, out_dir: Path) -> dict:
    return _export(project, out_dir, _write_csv)


def write_xlsx(*, project, out_dir: Path) -> dict:
    return _export(project, out_dir, _write_xlsx)
