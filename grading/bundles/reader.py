"""Reading a bundle from a directory or a .zip of one, line by line, without loading whole
files into memory. A zip may hold the files at its root or inside one top-level folder.

Hostile bundles are refused before anything is read or written (issue 15): a zip entry with an
absolute path, a ``..`` component or a symbolic link; a file whose uncompressed size is beyond
``EVALSITE_BUNDLE_MAX_BYTES`` in all, or that expands more than ``EVALSITE_BUNDLE_MAX_RATIO``
times (a zip bomb; Python's zipfile never reads past an entry's declared size, so the declared
sizes bound what is read); a zip of more than ``EVALSITE_BUNDLE_MAX_ENTRIES`` entries (counted
from its end record, before zipfile reads its directory); ``project.json`` over 16 MiB. While the
files stream (``limits.StreamLimits``, issue 27): a line over ``EVALSITE_BUNDLE_MAX_LINE_BYTES``
(read with a bounded ``readline``, so a one-line gigabyte never sits in memory), more than
``EVALSITE_BUNDLE_MAX_BYTES`` read in all, more than ``EVALSITE_BUNDLE_MAX_BLANK_LINES`` blank lines
or ``EVALSITE_BUNDLE_MAX_BLANK_BYTES`` of blank space in a file; JSON nested deeper than the parser
allows. The digest of the import record (``sha256``) is made while the importer reads the files, so
nothing inflates a file before its lines are checked.

A bundle's objects are bound for the database: each is checked against what its columns can store
(``columns``: NUL characters, lone surrogates, numbers that are not finite, strings longer than
their column, numbers out of its range) before the importer sees it. Each refusal is a
``BundleError`` naming the file (and line and field).
"""
import hashlib
import io
import json
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import orjson
from django.conf import settings

from . import columns, limits
from .errors import BundleError
from .validate import FieldError

PROJECT_JSON_MAX_BYTES = 16 * 1024 * 1024
RATIO_APPLIES_ABOVE = 1024 * 1024  # small files may compress well without being a bomb

JSONL_FILES = ("cases.jsonl", "responses.jsonl", "labels.jsonl", "judgments.jsonl", "adjudications.jsonl", "quality.jsonl")
DIGESTED = ("project.json", *JSONL_FILES)  # the files of the import record's digest, in its order


class BundleReader:
    """``records``: the objects read are a bundle's records, checked against their columns (the
    importer's reader); False for a format's own files read line by line (they become a bundle,
    which is checked when it is imported)."""

    def __init__(self, path: str | Path, *, records: bool = True):
        self.path = Path(path)
        self.records = records
        self._zip: zipfile.ZipFile | None = None
        self._prefix = ""
        self._limits = limits.StreamLimits()  # the reading pass of the importer (sha256 makes its own)
        self._digest = hashlib.sha256()  # of the files read whole, in DIGESTED order (see sha256)
        self._digested: list[str] = []
        if self.path.is_dir():
            pass
        elif self.path.is_file() and zipfile.is_zipfile(self.path):
            limits.zip_directory_check(self.path)
            self._zip = zipfile.ZipFile(self.path)
            try:
                self._zip_check()
            except BundleError:
                self._zip.close()
                raise
            names = [n for n in self._zip.namelist() if n.endswith("project.json")]
            if not names:
                raise BundleError(self.path.name, "no project.json in the zip")
            self._prefix = min(names, key=len)[: -len("project.json")]
        else:
            raise BundleError(str(path), "not a bundle directory or .zip file")

    def _zip_check(self) -> None:
        total = 0
        limit, ratio = settings.EVALSITE_BUNDLE_MAX_BYTES, settings.EVALSITE_BUNDLE_MAX_RATIO
        limits.zip_entries_check(self.path.name, len(self._zip.infolist()))
        for info in self._zip.infolist():
            name = info.filename
            parts = PurePosixPath(name.replace("\\", "/")).parts
            if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in parts:
                raise BundleError(self.path.name, f"zip entry {name[:200]!r} points outside the bundle (absolute or ..)")
            if stat.S_ISLNK(info.external_attr >> 16):
                raise BundleError(self.path.name, f"zip entry {name[:200]!r} is a symbolic link")
            total += info.file_size
            if total > limit:
                raise BundleError(self.path.name, f"the files add up to more than {limits.size_text(limit)} uncompressed "
                                                  "(EVALSITE_BUNDLE_MAX_BYTES)")
            if info.file_size > RATIO_APPLIES_ABOVE and info.file_size > ratio * max(info.compress_size, 1):
                raise BundleError(self.path.name, f"zip entry {name[:200]!r} expands {info.file_size / max(info.compress_size, 1):,.0f} "
                                                  f"times (more than {ratio}: refused as a zip bomb)")

    def __enter__(self) -> "BundleReader":
        return self

    def __exit__(self, *exc) -> None:
        if self._zip is not None:
            self._zip.close()

    def exists(self, name: str) -> bool:
        if self._zip is not None:
            return self._prefix + name in self._zip.namelist()
        return (self.path / name).is_file()

    def _open(self, name: str) -> io.BufferedIOBase:
        if self._zip is not None:
            return self._zip.open(self._prefix + name)
        path = self.path / name
        if path.is_symlink():
            raise BundleError(name, "is a symbolic link; bundles hold plain files")
        return open(path, "rb")

    def read_json(self, name: str) -> dict:
        if not self.exists(name):
            raise BundleError(name, "missing from the bundle")
        with self._open(name) as fh:
            raw = fh.read(PROJECT_JSON_MAX_BYTES + 1)
            if len(raw) > PROJECT_JSON_MAX_BYTES:
                raise BundleError(name, f"is larger than {limits.size_text(PROJECT_JSON_MAX_BYTES)}")
            self._limits.count(name, len(raw))
            if self._digesting(name):
                self._digest.update(raw)
                self._digested.append(name)
            try:
                data = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise BundleError(name, f"malformed JSON: {exc}") from exc
            except RecursionError:
                raise BundleError(name, "malformed JSON: nested too deeply") from None
        if not isinstance(data, dict):
            raise BundleError(name, "must hold one JSON object")
        if self.records:  # Python's parser takes NaN, 1e400 and lone surrogates: every value is looked at
            problem = columns.stored_value_problem(data)
            if problem:
                raise BundleError(name, problem[1], field=problem[0])
            check = columns.record_checker(name)
            try:
                if check is not None:
                    check(data)
            except FieldError as exc:
                raise BundleError(name, exc.message, field=exc.field) from None
        return data

    def iter_jsonl(self, name: str) -> Iterator[tuple[int, dict]]:
        """(line number, object) for every non-blank line; bad JSON raises with its line."""
        if not self.exists(name):
            return
        check = columns.record_checker(name) if self.records else None
        digest = self._digest.update if self._digesting(name) else None
        with self._open(name) as fh:
            for number, raw, blank in self._limits.lines(name, fh):
                if digest is not None:
                    digest(raw)
                if blank:
                    continue
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    raise _malformed(name, number, raw) from None
                if not isinstance(obj, dict):
                    raise BundleError(name, "each line must be a JSON object", line=number)
                if self.records:
                    # orjson refuses lone surrogates and numbers that are not finite: only an escaped NUL
                    # gets through, so the whole object is looked at only when the line has one.
                    if b"\\u0000" in raw:
                        problem = columns.stored_value_problem(obj)
                        if problem:
                            raise BundleError(name, problem[1], line=number, field=problem[0])
                    try:
                        if check is not None:
                            check(obj)
                    except FieldError as exc:
                        raise BundleError(name, exc.message, line=number, field=exc.field) from None
                yield number, obj
        if digest is not None:
            self._digested.append(name)

    def _digesting(self, name: str) -> bool:
        """Whether reading ``name`` whole now continues the digest: it is the next of DIGESTED
        that the bundle holds."""
        expected = [n for n in DIGESTED if self.exists(n)]
        return expected[len(self._digested):len(self._digested) + 1] == [name]

    def sha256(self) -> str:
        """One digest over the bundle's files (project.json, then the .jsonl files, as DIGESTED
        orders them), for the import record. The importer reads them in that order, so the digest
        is made as it reads them, through its limits; asked earlier, it reads them in a pass of its
        own, through the same limits, so a hostile file is refused at its bad line rather than after
        everything was inflated."""
        if self._digested == [n for n in DIGESTED if self.exists(n)]:
            return self._digest.hexdigest()
        digest = hashlib.sha256()
        stream = limits.StreamLimits()
        for name in DIGESTED:
            if self.exists(name):
                with self._open(name) as fh:
                    if name == "project.json":
                        raw = fh.read(PROJECT_JSON_MAX_BYTES + 1)
                        stream.count(name, len(raw))
                        digest.update(raw)
                        continue
                    for _, raw, _ in stream.lines(name, fh):
                        digest.update(raw)
        return digest.hexdigest()


def _malformed(name: str, number: int, raw: bytes) -> BundleError:
    """The error of a line orjson refused. Python's parser reads what orjson will not (a lone
    surrogate, NaN, a number beyond a double, a raw control character): when it reads the line,
    the field is named."""
    try:
        obj = json.loads(raw, strict=False)
    except (ValueError, RecursionError):
        return BundleError(name, f"malformed JSON: {_json_error(raw)}", line=number)
    problem = columns.stored_value_problem(obj)
    if problem:
        return BundleError(name, problem[1], line=number, field=problem[0])
    return BundleError(name, f"malformed JSON: {_json_error(raw)}", line=number)


def _json_error(raw: bytes) -> str:
    """The standard library's wording of what is wrong with a line (orjson's is terser)."""
    try:
        json.loads(raw)
    except UnicodeDecodeError as exc:
        return f"not UTF-8 ({exc.reason})"
    except json.JSONDecodeError as exc:
        return exc.args[0]
    except RecursionError:
        return "nested too deeply"
    return "invalid JSON"
