"""The one place a data format is declared.

A format module (``grading/formats/<name>.py``) ends with ``register(DataFormat(...))``: its name,
what a user uploads (title, help, file suffixes), how a file of it is recognized (``detect``), and
what it can do: read a file into a project (``read``, through the one label write service and the
bundle importer's checks) and write a project out (``write``). Everything else follows from the
declaration: ``manage.py import_bundle --format`` and ``export_bundle --format`` (their choices and
auto-detection), the browser upload (a background job) with its format menu, and the API's upload
endpoints with the format in their OpenAPI schema. A format whose files are tables read column by
column (spreadsheets) also declares ``columns``: the upload then waits on a page where the user
picks which column is which field, and that choice (the column mapping) goes with the job.

Format modules are found by importing every module of this package on first use, so nothing here
names a format and Django starts without loading the importers.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from django.db import transaction

from evalsite.discovery import PackageModules
from grading.bundles.errors import BundleError

NOT_FORMATS = {"registry"}  # modules of this package that declare no format
SLUG_MAX = 100  # Project.slug


class FormatError(BundleError):
    """A file no declared format reads (or that several would), or a format that is not declared
    or cannot do what was asked; it names the file, like every import error."""

    def __init__(self, file: str, message: str):
        super().__init__(file, message, field="format")


@dataclass(frozen=True)
class ImportRequest:
    """What an import was asked to do, from whichever entry point (command, upload job, API)."""

    path: Path
    user: object = None
    project: str | None = None  # the slug of the project the data must go into (a project's own import page or API)
    update_settings: bool = False  # apply the file's project settings to an existing project (bundles)
    judge: str | None = None  # the judge that graded results are imported as (formats that carry judgments)
    files: dict = field(default_factory=dict)  # further inputs by name ("completions", "grades", "mapping"): Path
    # The name of the file a user uploaded on the new-project form (no project named): a format whose
    # file names no project makes a new one named after the file (``project_slug``).
    upload_name: str | None = None

    def option_names(self) -> list[str]:
        """The options this request sets beyond the file itself."""
        return [*(["judge"] if self.judge else []), *sorted(self.files)]

    def project_slug(self, *, named: str | None = None) -> str | None:
        """The slug of the project a format that names no project in its file imports into: the one
        asked for (``project``), else the one the file's content names (``named``, e.g. a dataset's
        name), else, for an upload on the new-project form, a new project named after the uploaded
        file (``oss_eval.jsonl`` → ``oss_eval``), which must not exist yet — a file name is no
        project's identity, so two files of one name never meet in one project unasked. None: no
        project (the format says what to give)."""
        if self.project:
            return self.project
        if named:
            return named
        if not self.upload_name:
            return None
        from django.utils.text import slugify  # lazy: nothing of Django's text tools at discovery

        from annotation.models import Project  # lazy: the models load when a file is read, not at discovery

        name = Path(self.upload_name).name
        slug = slugify(Path(name).stem)[:SLUG_MAX].strip("-_")
        if not slug:
            raise BundleError(name, "the file's name gives no project slug: name the new project", field="project")
        if Project.objects.filter(slug=slug).exists():
            raise BundleError(name, f"a project {slug!r} (named after the file) exists already: import into it from "
                                    f"its page, or name the new project", field="project")
        return slug


@dataclass(frozen=True)
class ColumnField:
    """One field of a table kind and the column chosen for it (the browser's column step)."""

    name: str
    required: bool
    help: str
    column: str | None  # the header chosen, None for no column


@dataclass(frozen=True)
class ColumnTable:
    """One table of an uploaded file (a CSV file, a sheet of a workbook) as a format would read it
    with a column mapping: its header, the kinds of table it may be, the kind chosen and that kind's
    fields with their columns, what becomes of the other columns, its first rows, and what is wrong."""

    name: str  # the file's or the sheet's name: the key of the column mapping's "tables"
    headers: tuple[str, ...]
    kinds: tuple[tuple[str, str], ...]  # (kind, title), "skip" among them
    kind: str  # the kind chosen ("" when none fits)
    fields: tuple[ColumnField, ...]
    others: str  # what becomes of the columns no field takes
    sample: tuple[tuple[str, ...], ...]  # the first rows, as text
    problems: tuple[str, ...]


# The column mapping a ``columns`` format reads (``ImportRequest.files["mapping"]``, a JSON file) and the
# browser's column step writes: {"tables": {NAME: {"table": KIND, "columns": {FIELD: HEADER or null}}}}.
ColumnMapping = dict


@dataclass(frozen=True)
class DataFormat:
    name: str  # what --format and the upload's "format" field take
    title: str  # the menu's words
    upload_help: str  # what to upload, in the user's words
    suffixes: tuple[str, ...]  # file names an upload may have (".zip", ".jsonl", ...)
    detect: Callable[[Path], bool]  # is this file (or folder) one of this format's? Cheap: reads at most the head
    # Import: (request) -> SPEC §5's counts {"project", "cases", "criteria", "responses", "labels", "judgments"}
    # (and more keys where the format has more to say); all or nothing; raises BundleError naming file, line, field.
    read: Callable[[ImportRequest], dict] | None = None
    # The project slug a file names, when the format names one (checked against ImportRequest.project).
    project_of: Callable[[Path], str | None] | None = None
    # Export: (project, out_dir) -> {"files": {name: sha256}, "counts": {name: lines}}.
    write: Callable[..., dict] | None = None
    # The options of an ImportRequest it reads besides the file ("judge", "completions", "grades", "mapping").
    options: tuple[str, ...] = ()
    # Tables mapped column by column: (file, column mapping) -> the file's tables as they would be read
    # (cheap: reads the headers and first rows). The browser's upload shows them and asks for the mapping.
    columns: Callable[[Path, ColumnMapping], list[ColumnTable]] | None = None


_FORMATS: dict[str, DataFormat] = {}


def register(fmt: DataFormat) -> DataFormat:
    """Declare ``fmt`` (a format module's last line). A name is declared once."""
    known = _FORMATS.get(fmt.name)
    if known is not None and known is not fmt:
        raise ValueError(f"data format {fmt.name!r} is declared twice")
    _FORMATS[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    """Forget a format (tests that declare one of their own)."""
    _FORMATS.pop(name, None)


_discover = PackageModules(__package__, skip=NOT_FORMATS).import_all  # each format module declares its format


def formats(*, reading: bool = False, writing: bool = False) -> list[DataFormat]:
    """The declared formats in name order; ``reading`` / ``writing``: only those that import / export."""
    _discover()
    return [f for _, f in sorted(_FORMATS.items())
            if (not reading or f.read is not None) and (not writing or f.write is not None)]


def format_names(*, reading: bool = False, writing: bool = False) -> list[str]:
    return [f.name for f in formats(reading=reading, writing=writing)]


def format_get(name: str, *, reading: bool = False, writing: bool = False, file: str = "format") -> DataFormat:
    """The declared format ``name`` that can do what is asked; FormatError names the choices."""
    fits = {f.name: f for f in formats(reading=reading, writing=writing)}
    if name not in fits:
        what = "imports" if reading else "exports" if writing else "is declared"
        raise FormatError(file, f"no format {name!r} {what} here; use one of {', '.join(fits) or 'none'}")
    return fits[name]


def upload_suffixes() -> tuple[str, ...]:
    """Every file suffix some importing format takes (the upload's first check)."""
    return tuple(sorted({s for f in formats(reading=True) for s in f.suffixes}))


def format_for(path: Path, *, name: str | None = None) -> DataFormat:
    """The format that reads ``path``: the one named, or the only one that recognizes the file."""
    path = Path(path)
    if name:
        return format_get(name, reading=True, file=path.name)
    found = [f for f in formats(reading=True) if f.detect(path)]
    if len(found) == 1:
        return found[0]
    if not found:
        known = "; ".join(f"{f.title} ({', '.join(f.suffixes)})" for f in formats(reading=True))
        raise FormatError(path.name, f"not a file any format here reads ({known}); name the format if it is one of them")
    raise FormatError(path.name, f"could be read as {' or '.join(f.name for f in found)}; name the format")


def format_import(request: ImportRequest, *, name: str | None = None) -> dict:
    """Import ``request.path`` with the named or recognized format, all or nothing: SPEC §5's counts.
    When the request is for one project and the file names its project, the two must agree."""
    fmt = format_for(request.path, name=name)
    unread = [option for option in request.option_names() if option not in fmt.options]
    if unread:
        raise FormatError(Path(request.path).name, f"the {fmt.title} format takes no {', '.join(unread)} "
                                                   f"(it takes {', '.join(fmt.options) or 'no further options'})")
    if request.project and fmt.project_of is not None:
        named = fmt.project_of(Path(request.path))
        if named != request.project:
            raise BundleError(Path(request.path).name, f"this bundle is for project {named!r}, not {request.project!r}",
                              field="slug")
    result = fmt.read(request)
    # The adjudication queue's counts are made as part of the import, once it committed: at full scale
    # they take seconds, and made here the queue is ready when the import is, rather than counted
    # while its first reader waits. Inside a caller's transaction, when that commits.
    transaction.on_commit(partial(_queue_count, result["project"]))
    return result


def _queue_count(slug: str) -> None:
    """Count the adjudication queue of the project ``slug`` just imported into. A failure is logged
    and shown on the queue page (``queue_count``); the import stands either way."""
    from annotation.models import Project  # lazy: this registry loads before the apps are ready
    from grading.reports.adjudication_queue import queue_count  # lazy: the report brings pandas

    project = Project.objects.filter(slug=slug).first()
    if project is not None:
        queue_count(project=project)


def format_export(*, project, out_dir, name: str = "evalsite") -> dict:
    """Write ``project`` into ``out_dir`` in the named format: files with their sha256 and counts."""
    return format_get(name, writing=True).write(project=project, out_dir=Path(out_dir))
