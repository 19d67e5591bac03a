"""Reading a bundle from a directory or a .zip of one, line by line, without loading whole
files into memory. A zip may hold the files at its root or inside one top-level folder.

Hostile bundles are refused before anything is read or written (issue 15): a zip entry with an
absolute path, a ``..`` component or a symbolic link; a file whose uncompressed size is beyond
``EVALSITE_BUNDLE_MAX_BYTES`` in all, or that expands more than ``EVALSITE_BUNDLE_MAX_RATIO``
times (a zip bomb; Python's zipfile never reads past an entry's declared size, so the declared
sizes bound what is read); ``project.json`` over 16 MiB; a line over
``EVALSITE_BUNDLE_MAX_LINE_BYTES`` (read with a bounded ``readline``, so a one-line gigabyte never
sits in memory); more than ``EVALSITE_BUNDLE_MAX_BLANK_LINES`` blank lines in a file; JSON
nested deeper than the parser allows. Each is a ``BundleError`` naming the file (and line).
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

from .errors import BundleError

PROJECT_JSON_MAX_BYTES = 16 * 1024 * 1024
RATIO_APPLIES_ABOVE = 1024 * 1024  # small files may compress well without being a bomb

JSONL_FILES = ("cases.jsonl", "responses.jsonl", "labels.jsonl", "judgments.jsonl", "adjudications.jsonl", "quality.jsonl")


class BundleReader:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._zip: zipfile.ZipFile | None = None
        self._prefix = ""
        if self.path.is_dir():
            pass
        elif self.path.is_file() and zipfile.is_zipfile(self.path):
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
        for info in self._zip.infolist():
            name = info.filename
            parts = PurePosixPath(name.replace("\\", "/")).parts
            if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in parts:
                raise BundleError(self.path.name, f"zip entry {name[:200]!r} points outside the bundle (absolute or ..)")
            if stat.S_ISLNK(info.external_attr >> 16):
                raise BundleError(self.path.name, f"zip entry {name[:200]!r} is a symbolic link")
            total += info.file_size
            if total > limit:
                raise BundleError(self.path.name, f"the files add up to more than {_size(limit)} uncompressed "
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
                raise BundleError(name, f"is larger than {_size(PROJECT_JSON_MAX_BYTES)}")
            try:
                data = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise BundleError(name, f"malformed JSON: {exc}") from exc
            except RecursionError:
                raise BundleError(name, "malformed JSON: nested too deeply") from None
        if not isinstance(data, dict):
            raise BundleError(name, "must hold one JSON object")
        return data

    def iter_jsonl(self, name: str) -> Iterator[tuple[int, dict]]:
        """(line number, object) for every non-blank line; bad JSON raises with its line."""
        if not self.exists(name):
            return
        max_line, max_blank = settings.EVALSITE_BUNDLE_MAX_LINE_BYTES, settings.EVALSITE_BUNDLE_MAX_BLANK_LINES
        blank = 0
        with self._open(name) as fh:
            number = 0
            while raw := fh.readline(max_line + 1):
                number += 1
                if len(raw) > max_line and not raw.endswith(b"\n"):
                    raise BundleError(name, f"line longer than {_size(max_line)} (EVALSITE_BUNDLE_MAX_LINE_BYTES)", line=number)
                if not raw.strip():
                    blank += 1
                    if blank > max_blank:
                        raise BundleError(name, f"more than {max_blank:,} blank lines (EVALSITE_BUNDLE_MAX_BLANK_LINES)",
                                          line=number)
                    continue
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    raise BundleError(name, f"malformed JSON: {_json_error(raw)}", line=number) from None
                if not isinstance(obj, dict):
                    raise BundleError(name, "each line must be a JSON object", line=number)
                yield number, obj

    def sha256(self) -> str:
        """One digest over the bundle's files, for the import record."""
        digest = hashlib.sha256()
        for name in ("project.json", *JSONL_FILES):
            if self.exists(name):
                with self._open(name) as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(chunk)
        return digest.hexdigest()


def _size(n: int) -> str:
    return f"{n / 1024**3:g} GiB" if n >= 1024**3 else f"{n / 1024**2:g} MiB"


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
