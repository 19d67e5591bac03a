"""HealthBench's meta-evaluation JSONL (openai simple-evals, issue 24 point 1(d)), imported into the
project ``--project``: one line per (conversation, completion, criterion) with the physicians' binary
labels. ``pairwise_agreement`` over the cohort then reproduces HealthBench's meta-evaluation.

A line: ``prompt`` (chat messages), ``completion``, ``rubric`` (the criterion's text), ``category``,
``binary_labels`` (true = met) and ``anonymized_physician_ids`` (one per label); further keys
(``prompt_id``, ``completion_id``, a canary) are left alone.

- Conversations and completions repeat across lines and are merged by content: a case per distinct
  conversation (id ``conv-`` + a digest of its messages), a response per distinct completion of it
  (id ``resp-`` + a digest of the conversation and the text; model ``unspecified``, as the file
  does not say).
- Each distinct criterion text is one binary criterion of the project-wide rubric (id ``crit-`` +
  a digest of the text), tagged with its categories.
- Each physician is an annotator of the cohort ``physicians``, each label a final label of it. The
  same physician's label repeated with the same verdict is one label; with another it is an error.

Converted to a bundle and imported by ``grading.bundles.bundle_import`` (``healthbench.converted_import``):
all or nothing, every error named by this file's line and field.
"""
import hashlib
import json
from pathlib import Path

import orjson

from annotation.vocabulary import MET, NOT_MET

from .healthbench import LineReader, converted_import, first_record
from .registry import DataFormat, ImportRequest, register

COHORT = "physicians"
MODEL = "unspecified"
FIELDS = ("prompt", "completion", "rubric", "category", "binary_labels", "anonymized_physician_ids")


def _digest(text: str, size: int = 16) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:size]


def _detect(path: Path) -> bool:
    first = first_record(path)
    return first is not None and {"rubric", "binary_labels", "anonymized_physician_ids"} <= set(first)


class _Converter(LineReader):
    def __init__(self):
        super().__init__()
        self.cases: dict[str, dict] = {}  # case id -> case
        self.conversations: dict[bytes, str] = {}  # a conversation's compact JSON -> its case id
        self.criterion_ids: dict[str, str] = {}  # criterion text -> its id
        self.responses: dict[str, dict] = {}  # response id -> response
        self.criteria: dict[str, dict] = {}  # criterion id -> criterion (tags gathered over the file)
        self.labels: list[dict] = []
        self.verdicts: dict[tuple[str, str, str], tuple[str, int]] = {}  # (response, criterion, physician) -> (verdict, line)
        self.origins: dict[str, list[tuple[str, int]]] = {"cases.jsonl": [], "responses.jsonl": [], "labels.jsonl": []}

    def read(self, path: Path) -> None:
        name = path.name
        for number, obj in self.lines(path):
            self.checked(name, number, lambda: self._line(obj, name, number))
        if not self.labels:
            raise self.error(path.name, 1, "binary_labels", "no labels in the file")

    def _case(self, prompt: object, name: str, number: int) -> str:
        """The case of a line's conversation, made on first sight. A conversation repeats on every
        line of its completions and criteria: it is checked and digested once, found again by its
        compact serialization (orjson's, sorted keys: the same text for the same JSON value)."""
        try:
            seen = orjson.dumps(prompt, option=orjson.OPT_SORT_KEYS)
        except (orjson.JSONEncodeError, TypeError):  # not plain JSON after all: checked below
            seen = None
        case_id = self.conversations.get(seen) if seen is not None else None
        if case_id is not None:
            return case_id
        v = self.v
        try:
            messages = v.messages(prompt)
        except v.FieldError as exc:
            raise v.FieldError("prompt" + exc.field.removeprefix("messages"),
                               exc.message.replace("'messages'", "'prompt'")) from exc
        case_id = f"conv-{_digest(json.dumps(messages, ensure_ascii=False, sort_keys=True))}"
        if case_id not in self.cases:
            self.cases[case_id] = {"case_id": case_id, "messages": messages}
            self.origins["cases.jsonl"].append((name, number))
        if seen is not None:
            self.conversations[seen] = case_id
        return case_id

    def _line(self, obj: dict, name: str, number: int) -> None:
        v = self.v
        for key in FIELDS:
            if key not in obj:
                raise v.FieldError(key, f"missing field {key!r}")
        case_id = self._case(obj["prompt"], name, number)
        completion = v.string(obj, "completion", blank=True)
        text = v.string(obj, "rubric")
        category = v.string(obj, "category")
        labels, physicians = obj["binary_labels"], obj["anonymized_physician_ids"]
        if not isinstance(labels, list) or not labels:
            raise v.FieldError("binary_labels", "field 'binary_labels' must be a non-empty list")
        if not isinstance(physicians, list) or len(physicians) != len(labels):
            raise v.FieldError("anonymized_physician_ids", "field 'anonymized_physician_ids' must be a list with one id "
                                                           "per binary label")
        response_id = f"resp-{_digest(case_id + chr(0) + completion)}"
        if response_id not in self.responses:
            self.responses[response_id] = {"response_id": response_id, "case_id": case_id, "model": MODEL, "text": completion}
            self.origins["responses.jsonl"].append((name, number))
        criterion_id = self.criterion_ids.get(text) or self.criterion_ids.setdefault(text, f"crit-{_digest(text, 12)}")
        criterion = self.criteria.setdefault(criterion_id, {"criterion_id": criterion_id, "text": text, "kind": "binary",
                                                            "tags": []})
        if category not in criterion["tags"]:
            criterion["tags"].append(category)
        for i, (label, physician) in enumerate(zip(labels, physicians)):
            if not isinstance(label, bool):
                raise v.FieldError(f"binary_labels[{i}]", f"field 'binary_labels[{i}]' must be true or false")
            if not isinstance(physician, str) or not physician.strip():
                raise v.FieldError(f"anonymized_physician_ids[{i}]",
                                   f"field 'anonymized_physician_ids[{i}]' must be a non-empty string")
            verdict = MET if label else NOT_MET
            key = (response_id, criterion_id, physician)
            if key in self.verdicts:
                if self.verdicts[key][0] != verdict:
                    raise v.FieldError(f"binary_labels[{i}]", f"physician {physician!r} labelled this completion and "
                                                              f"criterion differently on line {self.verdicts[key][1]}")
                continue
            self.verdicts[key] = (verdict, number)
            self.labels.append({"response_id": response_id, "criterion_id": criterion_id, "cohort": COHORT,
                                "annotator": physician, "role": "annotator", "verdict": verdict})
            self.origins["labels.jsonl"].append((name, number))


def _read(request: ImportRequest) -> dict:
    from grading.bundles import BundleError  # lazy: the bundle code brings pandas: loaded on import

    path = Path(request.path)
    slug = request.project_slug()
    if not slug:
        raise BundleError(path.name, "a HealthBench meta-evaluation import goes into a project: give --project SLUG "
                                     "(or import from the project's page)", field="project")
    converter = _Converter()
    converter.read(path)
    rubric = [{**c, "tags": sorted(c["tags"])} for c in sorted(converter.criteria.values(), key=lambda c: c["text"])]
    project = {"slug": slug, "name": slug, "rubric": rubric, "cohorts": [{"name": COHORT}]}
    files = {"cases.jsonl": list(converter.cases.values()), "responses.jsonl": list(converter.responses.values()),
             "labels.jsonl": converter.labels}
    return converted_import(request=request, project=project, files=files, origins=converter.origins)


register(DataFormat(
    name="healthbench-meta",
    title="HealthBench meta-evaluation",
    upload_help="the HealthBench meta-evaluation JSONL (prompt, completion, rubric, category, binary_labels, "
                "anonymized_physician_ids; .jsonl)",
    suffixes=(".jsonl",),
    detect=_detect,
    read=_read,
))
