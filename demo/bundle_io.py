"""Reading and writing evalsite bundles (SPEC §4) without Django.

A bundle is a directory holding ``project.json`` and four JSON Lines files
(``cases.jsonl``, ``responses.jsonl``, ``labels.jsonl``, ``judgments.jsonl``).
Every generator and converter in :mod:`demo` writes through this module so that
all bundles share one byte-level convention: each line is
``json.dumps(obj, ensure_ascii=False, sort_keys=True)`` followed by ``\\n``,
``project.json`` is indented with sorted keys, everything is UTF-8, and rows are
written in the order they are given (callers supply a deterministic order).
:class:`BundleWriter` streams rows to disk so that a generator never has to
hold a whole study in memory; :func:`write_bundle` is the convenience wrapper
for converters that already have iterables. :func:`validate_bundle` re-reads a
bundle and checks its cross-references, which the tests and the benchmark use.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

JSONL_FILES = ("cases.jsonl", "responses.jsonl", "labels.jsonl", "judgments.jsonl")
ADJUDICATIONS_FILE = "adjudications.jsonl"  # optional: written only by a bundle that has adjudications
PROJECT_FILE = "project.json"

# One shared encoder: byte-identical to json.dumps(obj, ensure_ascii=False,
# sort_keys=True) but without building a new encoder for every line.
# allow_nan=False because NaN is not JSON and the importer would reject it.
_encode_line = json.JSONEncoder(ensure_ascii=False, sort_keys=True, allow_nan=False).encode

# Fixed timestamp for zip members so that zipping is deterministic too.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def encode_line(obj: dict) -> str:
    """Return the canonical one-line JSON text of ``obj`` (without newline)."""
    return _encode_line(obj)


def encode_project(project: dict) -> str:
    """Return the canonical text of ``project.json`` (with final newline)."""
    return json.dumps(project, ensure_ascii=False, sort_keys=True, indent=2, allow_nan=False) + "\n"


class BundleWriter:
    """Stream the rows of one bundle into ``out_dir``.

    Use as a context manager; call :meth:`finish` with the project dict once
    every row is written (``project.json`` is written last so that a generator
    can put figures derived from the rows, such as ``coverage_k``, into it).
    ``counts`` holds the number of rows written per kind.
    """

    def __init__(self, out_dir: str | os.PathLike) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.counts = {"cases": 0, "criteria": 0, "responses": 0, "labels": 0, "judgments": 0}
        self._files = {
            name: open(self.out_dir / name, "w", encoding="utf-8", newline="\n")
            for name in JSONL_FILES
        }
        # Bound methods cached: these are called millions of times at bench scale.
        self._write_case = self._files["cases.jsonl"].write
        self._write_response = self._files["responses.jsonl"].write
        self._write_label = self._files["labels.jsonl"].write
        self._write_judgment = self._files["judgments.jsonl"].write
        self._write_adjudication = None  # opened on the first adjudication, so other bundles stay as they were
        self._finished = False

    def case(self, obj: dict) -> None:
        self._write_case(_encode_line(obj) + "\n")
        self.counts["cases"] += 1
        self.counts["criteria"] += len(obj.get("criteria") or ())

    def response(self, obj: dict) -> None:
        self._write_response(_encode_line(obj) + "\n")
        self.counts["responses"] += 1

    def label(self, obj: dict) -> None:
        self._write_label(_encode_line(obj) + "\n")
        self.counts["labels"] += 1

    def judgment(self, obj: dict) -> None:
        self._write_judgment(_encode_line(obj) + "\n")
        self.counts["judgments"] += 1

    def adjudication(self, obj: dict) -> None:
        if self._write_adjudication is None:
            self._files[ADJUDICATIONS_FILE] = open(self.out_dir / ADJUDICATIONS_FILE, "w", encoding="utf-8", newline="\n")
            self._write_adjudication = self._files[ADJUDICATIONS_FILE].write
            self.counts["adjudications"] = 0
        self._write_adjudication(_encode_line(obj) + "\n")
        self.counts["adjudications"] += 1

    def finish(self, project: dict) -> dict:
        """Write ``project.json``, close the files and return the row counts."""
        self.close()
        (self.out_dir / PROJECT_FILE).write_text(encode_project(project), encoding="utf-8", newline="\n")
        self.counts["criteria"] += len(project.get("rubric") or ())
        self._finished = True
        return dict(self.counts)

    def close(self) -> None:
        for handle in self._files.values():
            if not handle.closed:
                handle.close()

    def __enter__(self) -> BundleWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()


def write_bundle(
    out_dir: str | os.PathLike,
    *,
    project: dict,
    cases: Iterable[dict],
    responses: Iterable[dict],
    labels: Iterable[dict],
    judgments: Iterable[dict],
) -> dict:
    """Write a whole bundle to ``out_dir`` and return the row counts.

    The iterables are consumed in the order cases, responses, labels,
    judgments; generators are fine. Counts are
    ``{"cases", "criteria", "responses", "labels", "judgments"}`` where
    ``criteria`` counts the project rubric plus every case's own criteria.
    """
    with BundleWriter(out_dir) as writer:
        for row in cases:
            writer.case(row)
        for row in responses:
            writer.response(row)
        for row in labels:
            writer.label(row)
        for row in judgments:
            writer.judgment(row)
        return writer.finish(project)


def zip_bundle(bundle_dir: str | os.PathLike, zip_path: str | os.PathLike | None = None) -> Path:
    """Zip a bundle directory deterministically; files sit at the archive root.

    Members are sorted by name and carry a fixed timestamp, so zipping the same
    bundle twice gives identical bytes. Returns the path of the archive
    (default: ``<bundle_dir>.zip``).
    """
    bundle_dir = Path(bundle_dir)
    zip_path = Path(zip_path) if zip_path is not None else bundle_dir.with_name(bundle_dir.name + ".zip")
    names = sorted(p.name for p in bundle_dir.iterdir() if p.is_file())
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(bundle_dir / name, "rb") as source, archive.open(info, "w") as target:
                while chunk := source.read(1 << 20):
                    target.write(chunk)
    return zip_path


def iter_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    """Yield the objects of a JSON Lines file (blank lines are skipped)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def read_project(bundle_dir: str | os.PathLike) -> dict:
    """Return the parsed ``project.json`` of a bundle directory."""
    return json.loads((Path(bundle_dir) / PROJECT_FILE).read_text(encoding="utf-8"))


_WHITESPACE = re.compile(r"\s+")


def _normalize_space(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


class BundleError(ValueError):
    """A bundle breaks one of the cross-reference rules of SPEC §4."""


def _check_options(where: str, criterion: dict, row: dict) -> None:
    kind = criterion.get("kind", "binary")
    if kind == "binary":
        if "verdict" not in row:
            raise BundleError(f"{where}: binary criterion {criterion['criterion_id']} needs a verdict")
        if row["verdict"] not in ("met", "not_met", "cannot_assess", None):
            raise BundleError(f"{where}: bad verdict {row['verdict']!r}")
        return
    labels = {option["label"] for option in criterion.get("options") or ()}
    if "option" in row:
        if row["option"] is not None and row["option"] not in labels:
            raise BundleError(f"{where}: unknown option {row['option']!r} for {criterion['criterion_id']}")
    elif "value" not in row and row.get("verdict", "missing") is not None:
        raise BundleError(f"{where}: {kind} criterion {criterion['criterion_id']} needs an option or value")


def validate_bundle(bundle_dir: str | os.PathLike, *, check_evidence: bool = True) -> dict:
    """Check a bundle's internal references and return its row counts.

    Checks: ``criterion_id`` unique in the project; every response names an
    existing case; every label and judgment names an existing response and a
    criterion that applies to that response's case (the case's own criteria,
    or the project rubric when the case has none); cohorts of labels and
    judges of judgments are declared in ``project.json``; verdicts and option
    labels are valid; and (``check_evidence``) every evidence quote is a
    substring of its response text after whitespace normalization (SPEC §3).
    Raises :class:`BundleError` naming the file and line of the first problem.
    """
    bundle_dir = Path(bundle_dir)
    project = read_project(bundle_dir)
    rubric = {c["criterion_id"]: c for c in project.get("rubric") or ()}
    if len(rubric) != len(project.get("rubric") or ()):
        raise BundleError("project.json: duplicate criterion_id in rubric")
    seen_ids = set(rubric)
    cohorts = {c["name"] for c in project.get("cohorts") or ()}
    judges = {j["name"] for j in project.get("judges") or ()}

    case_criteria: dict[str, dict] = {}
    for line_no, case in enumerate(iter_jsonl(bundle_dir / "cases.jsonl"), start=1):
        where = f"cases.jsonl:{line_no}"
        if case["case_id"] in case_criteria:
            raise BundleError(f"{where}: duplicate case_id {case['case_id']}")
        if ("prompt" in case) == ("messages" in case):
            raise BundleError(f"{where}: give exactly one of prompt / messages")
        own = {}
        for criterion in case.get("criteria") or ():
            if criterion["criterion_id"] in seen_ids:
                raise BundleError(f"{where}: duplicate criterion_id {criterion['criterion_id']}")
            seen_ids.add(criterion["criterion_id"])
            own[criterion["criterion_id"]] = criterion
        case_criteria[case["case_id"]] = own or rubric

    response_case: dict[str, str] = {}
    response_text: dict[str, str] = {}
    for line_no, response in enumerate(iter_jsonl(bundle_dir / "responses.jsonl"), start=1):
        where = f"responses.jsonl:{line_no}"
        if response["response_id"] in response_case:
            raise BundleError(f"{where}: duplicate response_id {response['response_id']}")
        if response["case_id"] not in case_criteria:
            raise BundleError(f"{where}: unknown case {response['case_id']}")
        if response.get("author_kind") not in ("model", "human"):
            raise BundleError(f"{where}: author_kind must be model or human")
        response_case[response["response_id"]] = response["case_id"]
        if check_evidence:
            response_text[response["response_id"]] = _normalize_space(response["text"])

    counts = {
        "cases": len(case_criteria),
        "criteria": len(seen_ids),
        "responses": len(response_case),
        "labels": 0,
        "judgments": 0,
    }
    for file_name, kind, group_key, declared in (
        ("labels.jsonl", "labels", "cohort", cohorts),
        ("judgments.jsonl", "judgments", "judge", judges),
    ):
        for line_no, row in enumerate(iter_jsonl(bundle_dir / file_name), start=1):
            where = f"{file_name}:{line_no}"
            case_id = response_case.get(row["response_id"])
            if case_id is None:
                raise BundleError(f"{where}: unknown response {row['response_id']}")
            criterion = case_criteria[case_id].get(row["criterion_id"])
            if criterion is None:
                raise BundleError(f"{where}: criterion {row['criterion_id']} does not belong to case {case_id}")
            if row[group_key] not in declared:
                raise BundleError(f"{where}: {group_key} {row[group_key]!r} is not declared in project.json")
            if kind == "labels" and row.get("role") not in ("annotator", "checker"):
                raise BundleError(f"{where}: role must be annotator or checker")
            if kind == "labels" and row.get("verdict", "") is None:
                raise BundleError(f"{where}: a human label cannot have a null verdict")
            _check_options(where, criterion, row)
            if check_evidence:
                text = response_text[row["response_id"]]
                for quote in row.get("evidence") or ():
                    if _normalize_space(quote) not in text:
                        raise BundleError(f"{where}: evidence {quote!r} is not in the response text")
            counts[kind] += 1
    return counts
