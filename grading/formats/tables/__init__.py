"""Spreadsheets (issue 24 point 4): CSV and XLSX tables imported into a project (``--project``, or
the project whose page the file is uploaded on), and a project's tables exported as CSV files or as
one XLSX workbook. Two declared formats, ``csv`` and ``xlsx``, over the same tables:

- **responses** (cases and responses, one row per response): ``case_id``; ``prompt`` or ``messages``
  (JSON chat messages); optional ``reference_answer`` and ``criteria`` (the case's own criteria as
  JSON, bundle form); ``model`` and ``text`` of the response, optional ``response_id`` (else
  ``CASE:MODEL``, ``:2``, ... for a model's further responses) and ``author_kind``. Every other
  column is case metadata (``metadata.KEY`` or ``KEY``: a JSON list or object as what it holds;
  ``task_themes`` and ``specialties`` also as ``a; b``). A row without a response's cells gives a
  case only; a row without a prompt adds a response to a case given elsewhere (or already there).
  A case's cells must be the same on each of its rows (or left empty).
- **labels** (one row per response, criterion and rater; final labels, as a bundle's):
  ``response_id``, ``criterion_id``, ``cohort``, ``annotator``, ``role`` (annotator or checker),
  ``verdict`` (met / not met / cannot assess, any case) or ``option`` or ``value``, ``rationale``,
  ``evidence`` (a JSON list of quotes, or one quote), ``time_spent_seconds``.
- **judgments** (one row per response, criterion, judge and sample): ``response_id``,
  ``criterion_id``, ``judge``, ``judge_model``, ``condition``, ``sample``, ``verdict`` / ``option``
  / ``value`` (all empty: an invalid output), ``explanation``, ``evidence``, ``raw``.

A table's kind and columns are chosen by a column mapping (``--mapping FILE``, or the browser's
column step) and otherwise by its name and headers; see ``fields``. A CSV import reads one file or
a folder of them; an XLSX workbook has a table per sheet (``cases`` / ``responses`` / ``labels`` /
``judgments`` by name; ``gold`` is skipped). All tables of an import are one evalsite bundle,
imported all or nothing by the bundle importer (its checks, label history, re-import semantics);
every error names the file, the sheet, the row and the column.

Export (``export_bundle --format csv|xlsx``): ``responses.csv``, ``labels.csv``, ``judgments.csv``
and ``gold.csv``, or ``tables.xlsx`` with those four sheets; see ``writing``. They import again into
a project with the same rubric and cohorts, and export again as the same bytes.
"""
from ..registry import DataFormat, register
from .reading import columns as columns
from .reading import read as read
from .sheets import TableError as TableError
from .sheets import is_csv, is_workbook
from .writing import write_csv, write_xlsx

register(DataFormat(
    name="csv",
    title="CSV tables",
    upload_help="a CSV table of cases and responses, labels or judgments (.csv, UTF-8; you choose its columns next)",
    suffixes=(".csv",),
    detect=is_csv,
    read=read,
    write=write_csv,
    options=("mapping",),
    columns=columns,
))

register(DataFormat(
    name="xlsx",
    title="XLSX workbook",
    upload_help="an XLSX workbook with sheets of cases and responses, labels or judgments (.xlsx; you choose "
                "its columns next)",
    suffixes=(".xlsx",),
    detect=is_workbook,
    read=read,
    write=write_xlsx,
    options=("mapping",),
    columns=columns,
))
