"""The resource limits of reading a bundle, checked while it streams (issue 27, point 5).

- ``zip_directory_check``: the number of entries a zip's central directory lists, read from its
  end record alone, before ``zipfile`` builds an object per entry (2 million empty entries took
  1.3 GB that way): more than ``EVALSITE_BUNDLE_MAX_ENTRIES`` entries, or a central directory larger
  than that many entries could need (a directory whose count lies), is refused unread.
- ``StreamLimits``: one pass over a bundle's files, line by line with a bounded ``readline``: the
  bytes of a line (``EVALSITE_BUNDLE_MAX_LINE_BYTES``), the bytes read in all
  (``EVALSITE_BUNDLE_MAX_BYTES``: what a folder holds, or what a zip really inflates to), and per
  file the blank lines (``EVALSITE_BUNDLE_MAX_BLANK_LINES``) and the blank bytes
  (``EVALSITE_BUNDLE_MAX_BLANK_BYTES``: whitespace-only lines and the whitespace around a line's
  JSON, without its line break), each refused at the line where it is passed. Every reader of a
  bundle's lines goes through it, the digest of the import record as much as the importer.

Every refusal is a ``BundleError`` naming the file (and line).
"""
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from django.conf import settings

from .errors import BundleError

END_RECORD = struct.Struct("<4s4H2LH")  # the end of central directory record, without its comment
END_RECORD64 = struct.Struct("<4sQ2H2L4Q")  # the zip64 end of central directory record
LOCATOR64 = struct.Struct("<4sLQL")  # the zip64 end of central directory locator
DIRECTORY_BYTES_PER_ENTRY = 1024  # a central directory entry: 46 bytes, its name, extra field and comment
MAX_COMMENT = 0xFFFF


def size_text(n: int) -> str:
    """A limit as the settings and the README state it: 16 MiB, 8 GiB, 512 bytes."""
    if n >= 1024**3:
        return f"{n / 1024**3:g} GiB"
    if n >= 1024**2:
        return f"{n / 1024**2:g} MiB"
    return f"{n / 1024:g} KiB" if n >= 1024 else f"{n:,} bytes"


def _directory_size(path: Path) -> tuple[int, int] | None:
    """(entries, central directory bytes) as the zip's end record declares them (its zip64 record
    when it has one); None when no end record is found (``zipfile`` then says it is no zip)."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        tail_at = max(0, size - END_RECORD.size - MAX_COMMENT)
        fh.seek(tail_at)
        tail = fh.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < END_RECORD.size:
            return None
        _, _, _, _, entries, directory_bytes, _, _ = END_RECORD.unpack_from(tail, at)
        locator_at = tail_at + at - LOCATOR64.size
        if locator_at - END_RECORD64.size >= 0:
            fh.seek(locator_at - END_RECORD64.size)
            head = fh.read(END_RECORD64.size + LOCATOR64.size)
            if head[END_RECORD64.size:END_RECORD64.size + 4] == b"PK\x06\x07" and head[:4] == b"PK\x06\x06":
                record = END_RECORD64.unpack_from(head)
                entries, directory_bytes = max(entries, record[7]), max(directory_bytes, record[8])
    return entries, directory_bytes


def zip_directory_check(path: Path) -> None:
    """Refuse a zip that lists more entries than ``EVALSITE_BUNDLE_MAX_ENTRIES``, from its end
    record alone; call it before opening the zip with ``zipfile``."""
    declared = _directory_size(path)
    if declared is None:
        return
    entries, directory_bytes = declared
    limit = settings.EVALSITE_BUNDLE_MAX_ENTRIES
    if entries > limit:
        raise BundleError(path.name, f"the zip holds {entries:,} entries; a bundle may hold at most {limit:,} "
                                     "(EVALSITE_BUNDLE_MAX_ENTRIES)")
    if directory_bytes > limit * DIRECTORY_BYTES_PER_ENTRY:
        raise BundleError(path.name, f"the zip's directory takes {size_text(directory_bytes)}, more than "
                                     f"{limit:,} entries need (EVALSITE_BUNDLE_MAX_ENTRIES)")


def zip_entries_check(name: str, count: int) -> None:
    """The entries ``zipfile`` found, against the limit (a directory may hold more than its end
    record says)."""
    limit = settings.EVALSITE_BUNDLE_MAX_ENTRIES
    if count > limit:
        raise BundleError(name, f"the zip holds {count:,} entries; a bundle may hold at most {limit:,} "
                                "(EVALSITE_BUNDLE_MAX_ENTRIES)")


class StreamLimits:
    """The limits of one pass over a bundle's files. ``lines`` reads a file through them; the
    bytes read add up over every file the pass reads."""

    def __init__(self):
        self.max_line = settings.EVALSITE_BUNDLE_MAX_LINE_BYTES
        self.max_total = settings.EVALSITE_BUNDLE_MAX_BYTES
        self.max_blank_lines = settings.EVALSITE_BUNDLE_MAX_BLANK_LINES
        self.max_blank_bytes = settings.EVALSITE_BUNDLE_MAX_BLANK_BYTES
        self.total = 0

    def count(self, name: str, n: int, line: int | None = None) -> None:
        """Add ``n`` bytes read from ``name``; refused past the bundle's total."""
        self.total += n
        if self.total > self.max_total:
            raise self._too_much(name, line)

    def _too_much(self, name: str, line: int | None) -> BundleError:
        return BundleError(name, f"the files add up to more than {size_text(self.max_total)} (EVALSITE_BUNDLE_MAX_BYTES)",
                           line=line)

    def lines(self, name: str, fh: BinaryIO) -> Iterator[tuple[int, bytes, bool]]:
        """(line number, the line's bytes, whether it is blank) for every line of ``fh``."""
        max_line, max_total = self.max_line, self.max_total
        blank_lines = blank_bytes = number = 0
        while raw := fh.readline(max_line + 1):
            number += 1
            self.total += len(raw)
            if self.total > max_total:
                raise self._too_much(name, number)
            if raw[0] == 123 and raw.endswith(b"}\n"):  # {...}: the usual line, no blank space around it
                yield number, raw, False
                continue
            if len(raw) > max_line and not raw.endswith(b"\n"):
                raise BundleError(name, f"line longer than {size_text(max_line)} (EVALSITE_BUNDLE_MAX_LINE_BYTES)",
                                  line=number)
            stripped = raw.strip()
            if stripped:
                padding = len(raw) - len(stripped) - (2 if raw.endswith(b"\r\n") else 1 if raw.endswith(b"\n") else 0)
            else:
                blank_lines += 1
                if blank_lines > self.max_blank_lines:
                    raise BundleError(name, f"more than {self.max_blank_lines:,} blank lines "
                                            "(EVALSITE_BUNDLE_MAX_BLANK_LINES)", line=number)
                padding = len(raw)
            if padding:
                blank_bytes += padding
                if blank_bytes > self.max_blank_bytes:
                    raise BundleError(name, f"more than {size_text(self.max_blank_bytes)} of blank space "
                                            "(EVALSITE_BUNDLE_MAX_BLANK_BYTES)", line=number)
            yield number, raw, not stripped
