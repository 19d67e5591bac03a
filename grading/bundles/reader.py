"""Reading a bundle from a directory or a .zip of one, line by line, without loading whole
files into memory. A zip may hold the files at its root or inside one top-level folder.
"""
import hashlib
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import orjson

from .errors import BundleError

JSONL_FILES = ("cases.jsonl", "responses.jsonl", "labels.jsonl", "judgments.jsonl", "adjudications.jsonl")


class BundleReader:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._zip: zipfile.ZipFile | None = None
        self._prefix = ""
        if self.path.is_dir():
            pass
        elif self.path.is_file() and zipfile.is_zipfile(self.path):
            self._zip = zipfile.ZipFile(self.path)
            names = [n for n in self._zip.namelist() if n.endswith("project.json")]
            if not names:
                raise BundleError(self.path.name, "no project.json in the zip")
            self._prefix = min(names, key=len)[: -len("project.json")]
        else:
            raise BundleError(str(path), "not a bundle directory or .zip file")

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
        return open(self.path / name, "rb")

    def read_json(self, name: str) -> dict:
        if not self.exists(name):
            raise BundleError(name, "missing from the bundle")
        with self._open(name) as fh:
            try:
                data = json.loads(fh.read().decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise BundleError(name, f"malformed JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise BundleError(name, "must hold one JSON object")
        return data

    def iter_jsonl(self, name: str) -> Iterator[tuple[int, dict]]:
        """(line number, object) for every non-blank line; bad JSON raises with its line."""
        if not self.exists(name):
            return
        with self._open(name) as fh:
            for number, raw in enumerate(fh, start=1):
                if not raw.strip():
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


def _json_error(raw: bytes) -> str:
    """The standard library's wording of what is wrong with a line (orjson's is terser)."""
    try:
        json.loads(raw)
    except UnicodeDecodeError as exc:
        return f"not UTF-8 ({exc.reason})"
    except json.JSONDecodeError as exc:
        return exc.args[0]
    return "invalid JSON"
