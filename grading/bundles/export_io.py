"""What the exporter (``grading.bundles.exporter``) writes with and reads through: JSON Lines
encoding, a file writer that hashes and counts as it goes, the cycle-collector policy of the
chunk loop, and rows straight from the cursor."""
import gc
import hashlib
from contextlib import contextmanager
from pathlib import Path

import orjson
from django.core.exceptions import EmptyResultSet
from django.db import connection

JSONL = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def json_line(obj: dict) -> bytes:
    return orjson.dumps(obj, option=JSONL)


class FileWriter:
    """Writes one file while hashing and counting its lines (bytes written a chunk at a time)."""

    def __init__(self, directory: Path, name: str):
        self.name, self.count = name, 0
        self._digest = hashlib.sha256()
        self._fh = open(directory / name, "wb")
        self._pending: list[bytes] = []

    def write(self, line: bytes, lines: int = 1) -> None:
        self._pending.append(line)
        self.count += lines
        if len(self._pending) >= 4096:
            self.flush()

    def write_lines(self, lines: list[bytes]) -> None:
        """A chunk's lines at once (one call instead of one per line)."""
        if lines:
            self._pending.append(b"".join(lines))
            self.count += len(lines)
            self.flush()

    def flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._fh.write(data)
            self._digest.update(data)
            self._pending = []

    def append(self, path: Path, lines: int) -> None:
        """Another writer's finished file (a forked process's part) at the end of this one."""
        self.flush()
        with open(path, "rb") as part:
            while block := part.read(1 << 22):
                self._fh.write(block)
                self._digest.update(block)
        self.count += lines

    def close(self) -> str:
        self.flush()
        self._fh.close()
        return self._digest.hexdigest()


@contextmanager
def collector_per_chunk():
    """Python's cycle collector off while the chunks are written, and run once per chunk instead
    (the exporter's chunk loop). The export makes millions of short-lived tuples and dicts, which keep
    triggering collections that walk every object alive, the project's lookup tables included
    (about a tenth of the export's time on the 825,000-decision bench); the tables are frozen
    out of the collector's sight, and what a chunk leaves in cycles (pandas' frames) is freed
    when the chunk ends, so memory stays flat."""
    enabled = gc.isenabled()
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def part_name(name: str, k: int) -> str:
    return f"{name}.part{k}"


def cursor_rows(sql_queryset, chunk: int = 5000):
    """Rows of a ``values_list`` straight from the cursor (JSON columns arrive as text). Without an
    explicit order the models' Meta ordering is dropped: it joins and sorts several tables, and
    the caller sorts the rows it needs anyway (with planner statistics, SQLite ran the joined
    labels query of a 2,500-case export for eleven minutes)."""
    if not sql_queryset.query.order_by:
        sql_queryset = sql_queryset.order_by()
    try:
        sql, params = sql_queryset.query.sql_with_params()
    except EmptyResultSet:  # a filter that can match nothing (an empty ``__in``): no rows, as through the ORM
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk):
            yield from rows


def json_list(raw) -> list:
    if raw is None or raw == "[]":
        return []
    return orjson.loads(raw) if isinstance(raw, (str, bytes)) else list(raw)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()
