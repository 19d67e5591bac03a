"""The hostile-bundle corpus (issue 27, points 4 and 5): the kinds of malformed bundle an attacker
sent, each a variation of the small test bundle (``tests.bundles``) with the file, line and field
its refusal must name.

- values the database cannot store: a NUL character in each kind of string field (names, ids,
  texts, list items, nested metadata, keys), a lone surrogate, strings longer than their column,
  numbers out of their column's range or not finite, numbers beyond a double;
- resource limits: too many zip entries (also with an end record that lies), a line too long,
  blank space in whitespace-only lines and around a line's JSON, too many blank lines, too many
  bytes in all.

``field_cases()`` do not depend on the limits; ``limit_cases(limits)`` are sized from the limits
given (the tests pass small ones through the settings; ``bench/hostile_bundles.py`` passes the
real defaults). ``Hostile.build(folder)`` writes the bundle and returns what to import.
"""
import json
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.bundles import bundle_parts, write_bundle

NUL = "bad\x00value"
SURROGATE = "bad\ud800value"
ADJUDICATION = {"response_id": "r2", "criterion_id": "c1-ecg", "verdict": "met", "adjudicator": "adj",
                "confidence": "probable", "category": "annotator_slip", "note": "ECG is implied"}
FILES = {"project": "project.json", "cases": "cases.jsonl", "responses": "responses.jsonl", "labels": "labels.jsonl",
         "judgments": "judgments.jsonl", "adjudications": "adjudications.jsonl"}


class Raw(str):
    """A number written as this literal (``1e400``), which json.dumps cannot produce."""


@dataclass(frozen=True)
class Hostile:
    name: str
    build: Callable[[Path], Path]  # writes the bundle under a folder; returns the path to import
    file: str  # what the refusal names: file, line, field
    line: int | None
    field: str | None
    message: str  # a fragment of the refusal's message
    settings: dict = field(default_factory=dict)  # the limits it is sized for


def write_parts(folder: Path, parts: dict) -> Path:
    """The bundle of ``parts`` (an adjudications.jsonl included), with Raw numbers as literals."""
    raws: dict[str, str] = {}

    def literal(value):
        if isinstance(value, Raw):
            raws[f"__raw{len(raws)}__"] = str(value)
            return f"__raw{len(raws) - 1}__"
        if isinstance(value, dict):
            return {k: literal(v) for k, v in value.items()}
        if isinstance(value, list):
            return [literal(v) for v in value]
        return value

    parts = literal(parts)
    write_bundle(folder, parts)
    (folder / "adjudications.jsonl").write_text("".join(json.dumps(a) + "\n" for a in parts["adjudications"]))
    for path in folder.iterdir() if raws else ():
        text = path.read_text(encoding="ascii")  # json.dumps escapes everything else
        for key, value in raws.items():
            text = text.replace(f'"{key}"', value)
        path.write_text(text, encoding="ascii")
    return folder


def base_parts() -> dict:
    parts = bundle_parts()
    parts["adjudications"] = [dict(ADJUDICATION)]
    return parts


def _set(obj, path: str, value) -> None:
    """Set ``a.b[0].c`` in ``obj``; a path ending in ``{}`` adds ``value`` as a key (to an object)."""
    steps = path.replace("[", ".[").split(".")
    for step in steps[:-1]:
        obj = obj[int(step[1:-1])] if step.startswith("[") else obj.setdefault(step, {})
    last = steps[-1]
    if last == "{}":
        obj[value] = 1
    elif last.startswith("["):
        obj[int(last[1:-1])] = value
    else:
        obj[last] = value


def _mutated(part: str, index: int | None, path: str, value) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        parts = base_parts()
        target = parts[part] if index is None else parts[part][index]
        _set(target, path, value)
        return write_parts(folder, parts)
    return build


def _case(kind: str, part: str, index: int | None, path: str, value, field_name: str, message: str) -> Hostile:
    return Hostile(name=f"{kind}:{FILES[part]}:{field_name}", build=_mutated(part, index, path, value), file=FILES[part],
                   line=None if index is None else index + 1, field=field_name, message=message)


NUL_FIELDS = [  # (part, index, path): a NUL in each kind of string field the importer stores
    ("project", None, "slug"), ("project", None, "name"), ("project", None, "description"),
    ("project", None, "guidelines"), ("project", None, "cohorts[0].name"), ("project", None, "judges[0].name"),
    ("project", None, "judges[0].model"), ("project", None, "rubric[0].criterion_id"), ("project", None, "rubric[0].text"),
    ("project", None, "rubric[0].options[0].label"), ("project", None, "rubric[0].guidance"),
    ("cases", 0, "case_id"), ("cases", 0, "prompt"), ("cases", 0, "metadata.task_themes[0]"),
    ("cases", 0, "criteria[0].criterion_id"), ("cases", 0, "criteria[0].text"), ("cases", 0, "criteria[2].tags[0]"),
    ("cases", 1, "messages[0].content"), ("cases", 1, "reference_answer"),
    ("responses", 0, "response_id"), ("responses", 0, "case_id"), ("responses", 0, "model"), ("responses", 0, "text"),
    ("labels", 0, "annotator"), ("labels", 0, "cohort"), ("labels", 0, "response_id"), ("labels", 0, "criterion_id"),
    ("labels", 0, "rationale"), ("labels", 18, "evidence[0]"), ("labels", 18, "option"),
    ("judgments", 0, "judge"), ("judgments", 0, "judge_model"), ("judgments", 0, "explanation"), ("judgments", 0, "raw"),
    ("judgments", 0, "evidence[0]"),
    ("adjudications", 0, "adjudicator"), ("adjudications", 0, "note"),
]
SURROGATE_FIELDS = [("project", None, "name"), ("cases", 0, "prompt"), ("responses", 1, "text"), ("labels", 2, "rationale"),
                    ("judgments", 1, "explanation"), ("adjudications", 0, "note")]
LONG_FIELDS = [  # (part, index, path, length, what the column holds)
    ("project", None, "slug", 1000, 100), ("project", None, "name", 201, 200), ("project", None, "cohorts[0].name", 101, 100),
    ("project", None, "judges[0].name", 101, 100), ("project", None, "judges[0].model", 201, 200),
    ("project", None, "judges[0].base_url", 501, 500), ("project", None, "rubric[0].criterion_id", 201, 200),
    ("project", None, "rubric[0].options[0].label", 201, 200),
    ("cases", 0, "case_id", 1000, 200), ("cases", 0, "criteria[0].criterion_id", 201, 200),
    ("cases", 0, "criteria[1].checklist_of", 201, 200),
    ("responses", 0, "response_id", 201, 200), ("responses", 1, "model", 201, 200),
    ("labels", 3, "annotator", 151, 150),
    ("judgments", 0, "judge", 101, 100), ("judgments", 2, "judge_model", 201, 200),
    ("adjudications", 0, "adjudicator", 151, 150),
]
NUMBERS = [  # (part, index, path, value, message): numbers their column cannot hold
    ("project", None, "judges[0].price_in_per_mtok", 1e300, "less than 1,000,000"),
    ("project", None, "judges[0].price_out_per_mtok", -1e7, "less than 1,000,000"),
    ("project", None, "judges[0].price_in_per_mtok", 999999.99999, "less than 1,000,000"),  # rounds to seven digits
    ("project", None, "judges[0].price_in_per_mtok", 10**400, "beyond the range of a double"),
    ("project", None, "judges[0].price_out_per_mtok", float("inf"), "must be a finite number"),
    ("project", None, "judges[0].temperature", float("nan"), "must be a finite number"),
    ("project", None, "judges[0].samples", 40000, "must be at most 32767"),
    ("project", None, "judges[0].concurrency", 10**6, "must be at most 32767"),
    ("project", None, "judges[0].max_retries", -1, "must be at least 0"),
    ("project", None, "coverage_k", 10**9, "must be at most 32767"),
    ("project", None, "overlap", 70000, "must be at most 32767"),
    ("project", None, "low_agreement_threshold", float("-inf"), "must be a finite number"),
    ("project", None, "rubric[0].options[1].value", float("nan"), "must be a finite number"),
    ("project", None, "rubric[1].min_evidence", 70000, "must be at most 32767"),
    ("cases", 0, "criteria[0].min_evidence", 40000, "must be at most 32767"),
    ("cases", 0, "criteria[1].weight", Raw("1e400"), "must be a finite number"),
    ("cases", 1, "metadata.size", Raw("-1e999"), "must be a finite number"),
    ("labels", 0, "time_spent_seconds", Raw("1e400"), "must be a finite number"),
    ("labels", 18, "value", Raw("NaN"), "must be a finite number"),
    ("judgments", 1, "sample", 40000, "must be at most 32767"),
    ("judgments", 2, "tokens_in", 2**31, "must be at most 2147483647"),
    ("judgments", 2, "tokens_out", 2**63, "must be at most 2147483647"),
    ("judgments", 0, "latency_ms", Raw("Infinity"), "must be a finite number"),
    ("adjudications", 0, "value", Raw("1" + "0" * 400), "beyond the range of a double"),
]


def field_cases() -> list[Hostile]:
    """Values the database cannot store, each in its own bundle: refused by file, line and field."""
    cases = [_case("nul", part, index, path, NUL, path, "holds a NUL character") for part, index, path in NUL_FIELDS]
    cases.append(Hostile(name="nul:cases.jsonl:metadata key", build=_mutated("cases", 0, "metadata.{}", "note\x00"),
                         file="cases.jsonl", line=1, field="metadata.note\\x00", message="holds a NUL character"))
    cases.append(Hostile(name="nul:project.json:judges settings key",
                         build=_mutated("project", None, "judges[0].settings.{}", "\x00"), file="project.json", line=None,
                         field="judges[0].settings.\\x00", message="holds a NUL character"))
    cases.append(Hostile(name="nul-byte:labels.jsonl:rationale", build=_raw_nul_byte, file="labels.jsonl", line=3,
                         field="rationale", message="holds a NUL character"))
    cases += [_case("surrogate", part, index, path, SURROGATE, path, "holds a lone surrogate")
              for part, index, path in SURROGATE_FIELDS]
    cases += [_case("length", part, index, path, "x" * length, path, f"may hold at most {most:,} characters")
              for part, index, path, length, most in LONG_FIELDS]
    cases += [_case(f"number={value!s:.12}", part, index, path, value, path, message)
              for part, index, path, value, message in NUMBERS]
    return cases


def _raw_nul_byte(folder: Path) -> Path:
    """A NUL byte written as such (not as \\u0000) inside a string: not JSON, but named by field."""
    write_parts(folder, base_parts())
    lines = (folder / "labels.jsonl").read_bytes().splitlines(keepends=True)
    lines[2] = lines[2][:-2] + b', "rationale": "a\x00b"}\n'
    (folder / "labels.jsonl").write_bytes(b"".join(lines))
    return folder


# -- resource limits ----------------------------------------------------------------------------

def _zip(folder: Path, target: Path, padding: int = 0) -> Path:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)
        for i in range(padding):
            archive.writestr(f"pad/{i}", b"")
    return target


def empty_entries_zip(target: Path, entries: int) -> Path:
    """A valid zip of ``entries`` empty entries (zip64 records past 65,535), written directly: the
    writer of ``zipfile`` would hold an object per entry."""
    local, central = struct.Struct("<4s5H3L2H"), struct.Struct("<4s6H3L5H2L")
    with open(target, "wb", buffering=1 << 20) as out:
        offsets = []
        for i in range(entries):
            name = b"e%07d" % i
            offsets.append(out.tell())
            out.write(local.pack(b"PK\x03\x04", 20, 0, 0, 0, 0x21, 0, 0, 0, len(name), 0) + name)
        start = out.tell()
        for i, offset in enumerate(offsets):
            name = b"e%07d" % i
            out.write(central.pack(b"PK\x01\x02", 20, 20, 0, 0, 0, 0x21, 0, 0, 0, len(name), 0, 0, 0, 0, 0,
                                   min(offset, 0xFFFFFFFF)) + name)
        size, end64 = out.tell() - start, out.tell()
        if entries > 0xFFFF:
            out.write(struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, size, start))
            out.write(struct.pack("<4sLQL", b"PK\x06\x07", 0, end64, 1))
        out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, min(entries, 0xFFFF), min(entries, 0xFFFF),
                              size, start, 0))
    return target


def _lying_zip(folder: Path, target: Path, padding: int) -> Path:
    """A zip whose end record says it holds 6 entries while its directory lists more."""
    _zip(folder, target, padding)
    data = bytearray(target.read_bytes())
    at = data.rfind(b"PK\x05\x06")
    struct.pack_into("<2H", data, at + 8, 6, 6)
    target.write_bytes(bytes(data))
    return target


def _append(name: str, data: bytes) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        write_parts(folder, base_parts())
        with open(folder / name, "ab") as out:
            out.write(data)
        return folder
    return build


def _padded_line(folder: Path, padding: int) -> Path:
    write_parts(folder, base_parts())
    lines = (folder / "labels.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = lines[1][:-1] + b" " * padding + b"\n"
    (folder / "labels.jsonl").write_bytes(b"".join(lines))
    return folder


def limit_cases(limits: dict) -> list[Hostile]:
    """Bundles just past each limit, sized from ``limits`` (the EVALSITE_BUNDLE_MAX_* settings). The
    bytes a folder holds are counted as it is read: ``total_bytes_bundle`` writes one, for small
    limits only (its lines are valid cases, which the importer holds until the file ends)."""
    entries, line_bytes = limits["EVALSITE_BUNDLE_MAX_ENTRIES"], limits["EVALSITE_BUNDLE_MAX_LINE_BYTES"]
    blank_bytes, blank_lines = limits["EVALSITE_BUNDLE_MAX_BLANK_BYTES"], limits["EVALSITE_BUNDLE_MAX_BLANK_LINES"]
    parts = base_parts()
    base_lines = {name: len(parts[name.split(".")[0]]) for name in ("cases.jsonl", "responses.jsonl", "judgments.jsonl")}
    blank_line_bytes = max(1, blank_bytes // 4)
    return [
        Hostile(name="entries", build=lambda folder: _zip(write_parts(folder / "b", base_parts()), folder / "entries.zip", entries),
                file="entries.zip", line=None, field=None, message="a bundle may hold at most"),
        Hostile(name="entries, end record lying", file="lying.zip", line=None, field=None,
                build=lambda folder: _lying_zip(write_parts(folder / "b", base_parts()), folder / "lying.zip", entries),
                message="a bundle may hold at most"),
        Hostile(name="line bytes", build=_append("cases.jsonl", b'{"case_id": "' + b"x" * line_bytes + b'"}\n'),
                file="cases.jsonl", line=base_lines["cases.jsonl"] + 1, field=None, message="line longer than"),
        Hostile(name="blank bytes, whitespace lines",
                build=_append("responses.jsonl", (b" " * (blank_line_bytes - 1) + b"\n") * 5),
                file="responses.jsonl", line=base_lines["responses.jsonl"] + 5, field=None, message="of blank space"),
        Hostile(name="blank bytes, around the JSON", build=lambda folder: _padded_line(folder, blank_bytes + 1),
                file="labels.jsonl", line=2, field=None, message="of blank space"),
        Hostile(name="blank lines", build=_append("judgments.jsonl", b"\n" * (blank_lines + 1)),
                file="judgments.jsonl", line=base_lines["judgments.jsonl"] + blank_lines + 1, field=None,
                message="blank lines"),
        Hostile(name="total bytes, declared", file="declared.zip", line=None, field=None, message="add up to more than",
                build=lambda folder: declared_size_zip(folder / "declared.zip", limits["EVALSITE_BUNDLE_MAX_BYTES"],
                                                       limits["EVALSITE_BUNDLE_MAX_RATIO"])),
    ]


def total_bytes_bundle(folder: Path, max_bytes: int) -> tuple[Path, str, int]:
    """A folder bundle (no declared sizes) whose cases.jsonl takes it past ``max_bytes`` with valid
    cases; returns the folder, and the file and line the refusal names. Sized for small limits:
    the importer holds new cases until the file ends."""
    write_parts(folder, base_parts())
    cases = folder / "cases.jsonl"
    size = (folder / "project.json").stat().st_size + cases.stat().st_size
    number = len(cases.read_bytes().splitlines())
    with open(cases, "ab") as out:
        while size <= max_bytes:
            number += 1
            line = json.dumps({"case_id": f"pad-{number}", "prompt": "x" * 60}).encode() + b"\n"
            out.write(line)
            size += len(line)
    return folder, "cases.jsonl", number


def declared_size_zip(target: Path, max_bytes: int, ratio: int) -> Path:
    """The small bundle in a zip, plus entries whose directory records declare more than
    ``max_bytes`` in all (each expanding less than ``ratio`` times) and hold nothing."""
    files = {path.name: path.read_bytes() for path in sorted(write_parts(target.parent / "declared", base_parts()).iterdir())}
    entry = min(1 << 30, max_bytes // 4 + 1)
    fakes = [(f"pad/{i}", entry, entry // (ratio // 2)) for i in range(max_bytes // entry + 1)]
    return _raw_zip(target, files, fakes)


def _raw_zip(target: Path, files: dict[str, bytes], declared: list[tuple[str, int, int]]) -> Path:
    """A zip of ``files`` (stored) and of ``declared`` (name, size, compressed size) entries with no
    data, written by hand: the directory is all that is read of the latter."""
    local, central = struct.Struct("<4s5H3L2H"), struct.Struct("<4s6H3L5H2L")
    with open(target, "wb") as out:
        records = []
        for name, data in [*files.items(), *((n, None) for n, _, _ in declared)]:
            encoded, offset = name.encode(), out.tell()
            size, packed, crc = (len(data), len(data), zlib.crc32(data)) if data is not None else \
                next((s, c, 0) for n, s, c in declared if n == name)
            out.write(local.pack(b"PK\x03\x04", 20, 0, 0, 0, 0x21, crc, packed, size, len(encoded), 0) + encoded)
            out.write(data or b"")
            records.append(central.pack(b"PK\x01\x02", 20, 20, 0, 0, 0, 0x21, crc, packed, size, len(encoded), 0, 0, 0,
                                        0, 0, offset) + encoded)
        start = out.tell()
        out.write(b"".join(records))
        out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(records), len(records), out.tell() - start, start, 0))
    return target
