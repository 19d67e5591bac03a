"""Importing spreadsheets: each table is read under its plan (``fields.plan``) row by row into the
parts of an evalsite bundle, which ``healthbench.converted_import`` imports (the bundle importer's
checks, history rows and all-or-nothing transaction). An error the importer finds on a bundle line
is named back by the table, row and column it came from.
"""
import json
import math
import re
from contextlib import ExitStack
from itertools import islice
from pathlib import Path

from annotation.vocabulary import VERDICTS

from ..healthbench import converted_import
from ..registry import ColumnField, ColumnTable, ImportRequest
from .fields import (
    JUDGMENTS,
    KIND_CHOICES,
    KINDS,
    LABELS,
    RESPONSES,
    SKIP,
    Field,
    Plan,
    mapping_check,
    mapping_load,
    metadata_key,
    plan,
)
from .sheets import Table, TableError, Workbook, cell_text, csv_folder_tables, csv_table, is_workbook

SAMPLE_ROWS = 3  # rows the column step shows of each table
MULTI_LABEL_KEYS = ("task_themes", "specialties")  # metadata lists: a cell "a; b" is ["a", "b"]
BUNDLE_FILES = {RESPONSES: ("cases.jsonl", "responses.jsonl"), LABELS: ("labels.jsonl",), JUDGMENTS: ("judgments.jsonl",)}
_JSON = Field("evidence", "", type="json")  # a quotes cell that holds a JSON list
_VERDICT_WORDS = {re.sub(r"[\s_-]+", "_", v): v for v in VERDICTS}
LOWERCASE_FIELDS = ("role", "condition", "author_kind")  # their words are lowercase: "Checker" is "checker"


def _tables(path: Path, stack: ExitStack) -> list[Table]:
    if path.is_dir():
        return csv_folder_tables(path)
    if is_workbook(path):
        return stack.enter_context(Workbook(path)).tables()
    if not path.is_file():
        raise TableError(path.name, "no such file")
    return [csv_table(path)]


def columns(path: Path, mapping: dict) -> list[ColumnTable]:
    """The file's tables as ``mapping`` (and the headers' names) would have them read: the browser's
    column step."""
    mapping = mapping_check(mapping or {}, name="the column mapping")
    shown = []
    with ExitStack() as stack:
        for table in _tables(Path(path), stack):
            chosen = plan(table, mapping, mapping_name="column mapping")
            rows = table.rows()
            try:
                sample = [tuple(cell_text(c) for c in cells) for _, cells in islice(rows, SAMPLE_ROWS)]
            finally:
                rows.close()
            kind = KINDS.get(chosen.kind)
            shown.append(ColumnTable(
                name=table.key, headers=tuple(table.headers), kinds=KIND_CHOICES, kind=chosen.kind,
                fields=tuple(ColumnField(f.name, f.required, f.help, chosen.columns.get(f.name)) for f in kind.fields)
                if kind else (),
                others=f"Other columns {kind.others}." if kind else "", sample=tuple(sample), problems=chosen.problems))
    return shown


class _Converter:
    """Rows of planned tables → the bundle's cases, responses, labels and judgments, with the (table,
    row) each line came from."""

    def __init__(self):
        self.files: dict[str, list[dict]] = {name: [] for names in BUNDLE_FILES.values() for name in names}
        self.origins: dict[str, list[tuple[str, int]]] = {name: [] for name in self.files}
        self.plans: dict[str, Plan] = {}  # table label -> its plan
        self.cases: dict[str, tuple[dict, Plan, int]] = {}  # case id -> (its line, table, row that gave it)
        self.case_cells: list[tuple[str, dict, Plan, int]] = []  # case fields of rows that do not give the case
        self.response_ids: set[str] = set()
        self.per_model: dict[tuple[str, str], int] = {}
        self.cohorts: list[str] = []
        self.left_out: dict[str, list[str]] = {}

    def add(self, name: str, obj: dict, chosen: Plan, row: int) -> None:
        self.files[name].append(obj)
        self.origins[name].append((chosen.table.label, row))

    def table(self, chosen: Plan) -> None:
        self.plans[chosen.table.label] = chosen
        index = chosen.index()
        metadata = {h: metadata_key(h) for h in chosen.others()} if chosen.kind == RESPONSES else {}
        if chosen.kind != RESPONSES and chosen.others():
            self.left_out[chosen.table.label] = chosen.others()
        positions = {h: chosen.table.headers.index(h) for h in metadata}
        kind = KINDS[chosen.kind]
        for row, cells in chosen.table.rows():
            values = {}
            for name, i in index.items():
                value = _value(kind.field(name), cells[i], chosen, row)
                if value is not None:
                    values[name] = value.strip().casefold() if name in LOWERCASE_FIELDS else value
            if chosen.kind == RESPONSES:
                meta = {}
                for header, key in metadata.items():
                    value = _metadata_value(key, cells[positions[header]])
                    if value is not None:
                        meta[key] = value
                self._response_row(values, meta, chosen, row)
            elif chosen.kind == LABELS:
                self._decision(values)
                if values.get("cohort") and values["cohort"] not in self.cohorts:
                    self.cohorts.append(values["cohort"])
                self.add("labels.jsonl", values, chosen, row)
            else:
                self._decision(values)
                if not {"verdict", "option", "value"} & values.keys():
                    values["verdict"] = None  # no decision: an invalid judgment
                self.add("judgments.jsonl", values, chosen, row)

    @staticmethod
    def _decision(values: dict) -> None:
        verdict = values.get("verdict")
        if verdict is not None:
            values["verdict"] = _VERDICT_WORDS.get(re.sub(r"[\s_-]+", "_", verdict.strip().casefold()), verdict)

    def _response_row(self, values: dict, meta: dict, chosen: Plan, row: int) -> None:
        case_id = values.get("case_id")
        if case_id is None:
            raise chosen.table.error("no case id", row=row, column=chosen.columns["case_id"], field="case_id")
        case = {k: values[k] for k in ("prompt", "messages", "reference_answer", "criteria") if k in values}
        if meta:
            case["metadata"] = meta
        if "prompt" in case or "messages" in case:
            given = self.cases.get(case_id)
            if given is None:
                self.cases[case_id] = ({"case_id": case_id, **case}, chosen, row)
                self.add("cases.jsonl", self.cases[case_id][0], chosen, row)
            else:
                self._same_case(case_id, case, chosen, row)
        elif case:
            self.case_cells.append((case_id, case, chosen, row))
        if not {"response_id", "model", "text"} & values.keys():
            return  # a row of a case without a response
        response = {"case_id": case_id, **{k: values[k] for k in ("response_id", "model", "author_kind") if k in values},
                    "text": values.get("text", "")}
        if "model" not in response:
            raise chosen.table.error("a response needs its model", row=row, column=chosen.columns["model"], field="model")
        if "response_id" not in response:
            seen = self.per_model.get((case_id, response["model"]), 0) + 1
            self.per_model[(case_id, response["model"])] = seen
            response["response_id"] = f"{case_id}:{response['model']}" + (f":{seen}" if seen > 1 else "")
        self.add("responses.jsonl", response, chosen, row)

    def _same_case(self, case_id: str, case: dict, chosen: Plan, row: int) -> None:
        """A further row of a case: what it gives of the case must be what its first row gave."""
        first, first_plan, first_row = self.cases[case_id]
        for key, value in case.items():
            if key == "metadata":
                for meta_key, meta_value in value.items():
                    if (first.get("metadata") or {}).get(meta_key) != meta_value:
                        header = next(h for h in chosen.others() if metadata_key(h) == meta_key)
                        raise self._differs(case_id, chosen, row, header, first_plan, first_row)
            elif first.get(key) != value:
                raise self._differs(case_id, chosen, row, chosen.columns[key], first_plan, first_row, field=key)

    @staticmethod
    def _differs(case_id, chosen, row, header, first_plan, first_row, field=None) -> TableError:
        where = f"row {first_row}" if first_plan is chosen else f"{first_plan.table.label}, row {first_row}"
        return chosen.table.error(f"case {case_id!r} is given differently on {where} (a case's cells must be the "
                                  "same on each of its rows, or left empty)", row=row, column=header, field=field)

    def finish(self) -> None:
        for case_id, case, chosen, row in self.case_cells:
            if case_id not in self.cases:
                first = next(iter(case))
                header = chosen.columns.get(first) or next(
                    h for h in chosen.others() if metadata_key(h) in case.get("metadata", {}))
                raise chosen.table.error(f"case {case_id!r} gets its fields here but no prompt (or messages) in this "
                                         "import: give its prompt on the same row", row=row, column=header)
            self._same_case(case_id, case, chosen, row)

    def named(self, exc) -> Exception:
        """The importer's error, named by the table, row and column it came from: an error on a line
        of a bundle file by the row that line came from (``converted_import`` names it by the table's
        label), one of a whole bundle file by the first table of its kind, one in the cohorts of
        project.json by the labels' cohort column."""
        field = exc.field or ""
        chosen, row = self.plans.get(exc.file), exc.line
        if field.startswith("cohorts"):
            chosen, row, field = next((p for p in self.plans.values() if p.kind == LABELS), chosen), None, "cohort"
        if chosen is None:
            kind = next((k for k, names in BUNDLE_FILES.items() if exc.file in names), None)
            chosen, row = next((p for p in self.plans.values() if p.kind == kind), None), None
            if chosen is None:
                return exc
        root = re.split(r"[.\[]", field, maxsplit=1)[0]
        column = chosen.columns.get(root)
        if root == "metadata" and "." in field:
            key = field.split(".", 1)[1].split("[", 1)[0]
            column = next((h for h in chosen.others() if metadata_key(h) == key), None)
        return chosen.table.error(exc.message, row=row, column=column, field=field or None)


def _value(field, cell, chosen: Plan, row: int, *, column: str | None = None):
    """A cell as its field's value (None when empty); a bad number or JSON is named by row and column."""
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return None
    column = column or chosen.columns[field.name]

    def bad(message):
        return chosen.table.error(message, row=row, column=column, field=field.name)

    if field.type == "text":
        return cell_text(cell)
    if field.type == "quotes":
        text = cell_text(cell)
        return _value(_JSON, text, chosen, row, column=column) if text.lstrip().startswith("[") else [text]
    if field.type == "json":
        if not isinstance(cell, str):
            raise bad(f"{cell_text(cell)!r} is not JSON")
        try:
            return json.loads(cell)
        except ValueError as exc:
            raise bad(f"not JSON: {exc}") from None
    if isinstance(cell, bool):
        raise bad(f"{cell_text(cell)!r} is not a number")
    number = cell
    if isinstance(cell, str):
        try:
            number = float(cell.strip())
        except ValueError:
            raise bad(f"{cell.strip()!r} is not a number") from None
    if not isinstance(number, (int, float)) or not math.isfinite(number):
        raise bad(f"{cell_text(cell)!r} is not a number")
    if field.type == "integer":
        if not float(number).is_integer():
            raise bad(f"{cell_text(cell)!r} is not a whole number")
        return int(number)
    return float(number)


def _metadata_value(key: str, cell):
    """A metadata cell: a JSON list or object as what it holds, a list key's "a; b" as a list, a
    workbook's number as a number, other text as it is; None when empty."""
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return None
    if not isinstance(cell, str):
        return cell if isinstance(cell, (int, float)) else cell_text(cell)
    if cell.lstrip().startswith(("[", "{")):
        try:
            return json.loads(cell)
        except ValueError:
            pass
    if key in MULTI_LABEL_KEYS:
        return [part.strip() for part in re.split(r"[;,]", cell) if part.strip()]
    return cell


def read(request: ImportRequest) -> dict:
    from annotation.models import Project  # lazy: the models load when a file is read, not at discovery
    from grading.bundles import BundleError  # lazy: the bundle code brings pandas: loaded on import

    path = Path(request.path)
    if not request.project:
        raise TableError(path.name, "a spreadsheet import goes into a project: give --project SLUG (or import it "
                                    "from the project's page)", field="project")
    mapping_file = request.files.get("mapping")
    mapping = mapping_load(mapping_file)
    converter = _Converter()
    with ExitStack() as stack:
        tables = _tables(path, stack)
        known = {t.key for t in tables}
        unknown = sorted(set(mapping.get("tables") or {}) - known)
        if unknown:
            raise TableError(Path(mapping_file).name, f"no table {unknown[0]!r} in {path.name} (it has "
                                                      f"{', '.join(sorted(known))})", field=f"tables.{unknown[0]}")
        plans = [plan(t, mapping, mapping_name=Path(mapping_file).name if mapping_file else "mapping") for t in tables]
        for chosen in plans:
            if chosen.problems:
                raise chosen.table.error(chosen.problems[0])
        if not any(p.kind in KINDS for p in plans):
            raise TableError(path.name, "every table is skipped: nothing to import")
        for chosen in sorted((p for p in plans if p.kind != SKIP), key=lambda p: list(KINDS).index(p.kind)):
            converter.table(chosen)
    converter.finish()
    name = Project.objects.filter(slug=request.project).values_list("name", flat=True).first() or request.project
    project = {"slug": request.project, "name": name, "cohorts": [{"name": c} for c in converter.cohorts]}
    try:
        result = converted_import(request=request, project=project, files=converter.files, origins=converter.origins)
    except TableError:
        raise
    except BundleError as exc:
        raise converter.named(exc) from exc
    if converter.left_out:
        result["left_out"] = {"columns": converter.left_out}
    return result
