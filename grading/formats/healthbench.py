"""HealthBench (openai simple-evals, issue 24 point 1): the examples JSONL, with optional
completions and graded results, imported into the project ``--project``.

- PATH, one example a line: ``prompt_id``, ``prompt`` (chat messages), ``rubrics``
  (``{"criterion", "points", "tags"}``; negative points are penalties), ``example_tags`` and, when
  given, ``ideal_completions_data`` (its ``ideal_completion`` becomes the reference answer). An
  example becomes a case (id = ``prompt_id``) whose metadata keeps ``example_tags`` (and, as task
  themes, the part after ``theme:``); each rubric item a case-specific binary criterion
  ``PROMPT_ID#N`` (N from 1 in file order) with weight = points and its tags.
- ``--completions``, a line ``{"prompt_id", "model", "completion"}``: a response ``PROMPT_ID:MODEL``
  (``:2``, ``:3``, ... for a further, different completion of the same model).
- ``--grades`` with ``--judge NAME``, a line ``{"prompt_id", "model", "completion", "rubric_items":
  [{"criterion", "points", "tags", "criteria_met", "explanation"}]}`` (simple-evals' per-example
  grades): the completion is the response of that text (made when the completions did not hold
  it), each item the judge's judgment of the criterion of that text (met when ``criteria_met`` is
  true, not met when false, invalid when null). A completion graded again is the judge's next sample
  (simple-evals' repeats), after those the project holds already; a grading the project holds already
  (the same verdicts and explanations for the same completion) is that sample again, so importing the
  same grades twice writes nothing.
- A completion the project holds already (same example, model and text) is that response; a further
  one of the same model gets the next number.

Lines may carry further keys (simple-evals' outputs add scores, the prompt, a canary): only the
fields above are read and checked.

The files are checked line by line while they are turned into an evalsite bundle in a temporary
folder, which ``grading.bundles.bundle_import`` then imports (its checks, history rows and
all-or-nothing transaction). Every error names the HealthBench file, its line and the field; an
error the bundle importer finds on a line it got from a HealthBench line is named by that line.
"""
import hashlib
import json
import tempfile
from pathlib import Path

import orjson

from annotation.vocabulary import MET, NOT_MET

from .registry import DataFormat, ImportRequest, register

DETECT_MAX_BYTES = 4 * 1024 * 1024
ID_MAX = 200  # the case, response and criterion id columns' length
PROMPT_ID_MAX = ID_MAX - 40  # room for a criterion's "#N" and a response's ":MODEL:N" (a long model name: its digest)


def first_record(path: Path) -> dict | None:
    """The first non-blank line of a .jsonl file, when it is a JSON object (what recognizing a
    HealthBench file reads: at most ``DETECT_MAX_BYTES``); None otherwise."""
    if not path.is_file() or path.suffix != ".jsonl":
        return None
    with open(path, "rb") as handle:
        while line := handle.readline(DETECT_MAX_BYTES):
            if line.strip():
                try:
                    first = json.loads(line)
                except ValueError:
                    return None
                return first if isinstance(first, dict) else None
    return None


def _detect(path: Path) -> bool:
    first = first_record(path)
    return first is not None and "prompt_id" in first and "rubrics" in first


class LineReader:
    """Reads a format's JSONL files line by line (the bundle reader's limits and messages) and
    turns a field error into the BundleError naming the file, the line and the field."""

    def __init__(self):
        from grading.bundles import validate as v  # lazy: the bundle code brings pandas: loaded when a file is read

        self.v = v

    def lines(self, path: Path):
        """(line number, object) of each line of ``path``; a path named on the command line may be
        a symbolic link (read where it points)."""
        from grading.bundles import BundleReader  # lazy: the bundle code brings pandas: loaded when a file is read

        path = Path(path)
        if not path.is_file():
            raise self.error(path.name, None, "path", "no such file")
        real = path.resolve() if path.is_symlink() else path
        with BundleReader(real.parent, records=False) as reader:  # checked as a bundle once converted
            yield from reader.iter_jsonl(real.name)

    def error(self, name: str, line: int | None, field: str, message: str):
        from grading.bundles import BundleError  # lazy: the bundle code brings pandas: loaded when a file is read

        return BundleError(name, message, line=line, field=field)

    def checked(self, name: str, line: int, check):
        """Run ``check()``; a field error becomes the BundleError naming this file and line."""
        try:
            return check()
        except self.v.FieldError as exc:
            raise self.error(name, line, exc.field, exc.message) from exc


class _Converter(LineReader):
    """HealthBench files → bundle parts, checked as they are read; ``origins`` remembers, for each
    bundle file's line, the HealthBench file and line it came from."""

    def __init__(self, request: ImportRequest):
        super().__init__()
        self.request = request
        self.cases: list[dict] = []
        self.responses: list[dict] = []
        self.judgments: list[dict] = []
        self.origins: dict[str, list[tuple[str, int]]] = {"cases.jsonl": [], "responses.jsonl": [], "judgments.jsonl": []}
        self.rubrics: dict[str, list[dict]] = {}  # prompt_id -> its criteria
        self.response_ids: dict[tuple[str, str, str], str] = {}  # (prompt_id, model, text) -> response id
        self.per_model: dict[tuple[str, str], int] = {}  # (prompt_id, model) -> completions so far
        self.taken: set[str] = set()  # response ids given out
        # response id -> {sample: {criterion id: (verdict, explanation)}}: the judge's gradings stored
        # already (``known``) and those of this import
        self.gradings: dict[str, dict[int, dict]] = {}
        self.stored: dict[str, set[int]] = {}  # response id -> samples stored already that no line matched yet

    def known(self, slug: str, judge: str | None) -> None:
        """What the project holds already: its responses to these examples (a completion met again is
        that response; a further one of the same model the next number) and the judge's gradings (a
        grading met again is that sample, not a new one: importing the same grades twice writes
        nothing; a further grading of a completion is the judge's next sample after the stored ones)."""
        from annotation.models import Response  # lazy: the models load when a file is read, not at discovery
        from grading.models import Judgment  # lazy: as above

        responses = Response.objects.filter(project__slug=slug).order_by("position", "pk")
        self.taken.update(responses.values_list("external_id", flat=True))
        for response_id, prompt_id, model, text in responses.filter(case__external_id__in=list(self.rubrics)).values_list(
                "external_id", "case__external_id", "model", "text"):
            if (prompt_id, model, text) not in self.response_ids:
                self.response_ids[(prompt_id, model, text)] = response_id
                self.per_model[(prompt_id, model)] = self.per_model.get((prompt_id, model), 0) + 1
        if not judge:
            return
        for response_id, sample, criterion_id, verdict, explanation in Judgment.objects.filter(
                judge__project__slug=slug, judge__name=judge, response__case__external_id__in=list(self.rubrics),
        ).values_list("response__external_id", "sample", "criterion__external_id", "verdict", "explanation"):
            self.gradings.setdefault(response_id, {}).setdefault(sample, {})[criterion_id] = (verdict, explanation)
            self.stored.setdefault(response_id, set()).add(sample)

    # -- the examples ---------------------------------------------------------------------------
    def examples(self, path: Path) -> None:
        for number, obj in self.lines(path):
            self.checked(path.name, number, lambda: self._example(obj, path.name, number))
        if not self.cases:
            raise self.error(path.name, 1, "prompt_id", "no examples in the file")

    def _example(self, obj: dict, name: str, number: int) -> None:
        v = self.v
        prompt_id = v.string(obj, "prompt_id", max_length=PROMPT_ID_MAX)
        if prompt_id in self.rubrics:
            raise v.FieldError("prompt_id", f"duplicate prompt_id {prompt_id!r}")
        try:
            messages = v.messages(obj.get("prompt"))
        except v.FieldError as exc:
            raise v.FieldError("prompt" + exc.field.removeprefix("messages"),
                               exc.message.replace("'messages'", "'prompt'")) from exc
        rubrics = obj.get("rubrics")
        if not isinstance(rubrics, list) or not rubrics:
            raise v.FieldError("rubrics", "field 'rubrics' must be a non-empty list")
        criteria = []
        for i, item in enumerate(rubrics):
            where = f"rubrics[{i}]."
            if not isinstance(item, dict):
                raise v.FieldError(where.rstrip("."), "a rubric item must be a JSON object")
            v.check_keys(item, required=("criterion", "points"), optional=("tags",), prefix=where)
            if item["points"] is None:
                raise v.FieldError(where + "points", f"field '{where}points' must be a number")
            criteria.append({"criterion_id": f"{prompt_id}#{i + 1}", "text": v.string(item, "criterion", prefix=where),
                             "kind": "binary", "weight": v.number(item, "points", prefix=where),
                             "tags": v.string_list(item, "tags", prefix=where)})
        tags = v.string_list(obj, "example_tags")
        case = {"case_id": prompt_id, "messages": messages,
                "metadata": {"example_tags": tags,
                             "task_themes": [t.split(":", 1)[1] for t in tags if t.startswith("theme:")]},
                "criteria": criteria}
        ideal = obj.get("ideal_completions_data")
        if ideal is not None:
            if not isinstance(ideal, dict):
                raise v.FieldError("ideal_completions_data", "field 'ideal_completions_data' must be a JSON object or null")
            reference = v.string(ideal, "ideal_completion", prefix="ideal_completions_data.", required=False, blank=True)
            if reference:
                case["reference_answer"] = reference
        self.rubrics[prompt_id] = criteria
        self.cases.append(case)
        self.origins["cases.jsonl"].append((name, number))

    # -- completions and grades -----------------------------------------------------------------
    def _response(self, obj: dict, name: str, number: int) -> str:
        """The response id of a line's completion, made on first sight."""
        v = self.v
        prompt_id = v.string(obj, "prompt_id")
        if prompt_id not in self.rubrics:
            raise v.FieldError("prompt_id", f"prompt_id {prompt_id!r} is not an example of {self.request.path.name}")
        model = v.string(obj, "model", max_length=200)
        text = v.string(obj, "completion", blank=True)
        key = (prompt_id, model, text)
        if key not in self.response_ids:
            seen = self.per_model.get((prompt_id, model), 0) + 1
            self.per_model[(prompt_id, model)] = seen
            model_part = model if len(prompt_id) + len(model) <= ID_MAX - 8 else hashlib.sha256(model.encode()).hexdigest()[:16]
            response_id = f"{prompt_id}:{model_part}" + (f":{seen}" if seen > 1 else "")
            if response_id in self.taken:  # model "m:2" beside a second completion of model "m"
                response_id = f"{prompt_id}:{hashlib.sha256(f'{model}{chr(0)}{text}'.encode()).hexdigest()[:24]}"
            self.taken.add(response_id)
            self.response_ids[key] = response_id
            self.responses.append({"response_id": response_id, "case_id": prompt_id, "model": model, "text": text})
            self.origins["responses.jsonl"].append((name, number))
        return self.response_ids[key]

    def completions(self, path: Path) -> None:
        for number, obj in self.lines(path):
            self.checked(path.name, number, lambda: self._completion(obj, path.name, number))

    def _completion(self, obj: dict, name: str, number: int) -> None:
        _required(obj, ("prompt_id", "model", "completion"), self.v)
        self._response(obj, name, number)

    def grades(self, path: Path, judge: str) -> None:
        for number, obj in self.lines(path):
            self.checked(path.name, number, lambda: self._graded(obj, path.name, number, judge))

    def _graded(self, obj: dict, name: str, number: int, judge: str) -> None:
        v = self.v
        _required(obj, ("prompt_id", "model", "completion", "rubric_items"), v)
        response_id = self._response(obj, name, number)
        items = obj["rubric_items"]
        if not isinstance(items, list):
            raise v.FieldError("rubric_items", "field 'rubric_items' must be a list")
        by_text: dict[str, list[dict]] = {}
        for criterion in self.rubrics[obj["prompt_id"]]:
            by_text.setdefault(criterion["text"], []).append(criterion)
        judgments = []
        for i, item in enumerate(items):
            where = f"rubric_items[{i}]."
            if not isinstance(item, dict):
                raise v.FieldError(where.rstrip("."), "a rubric item must be a JSON object")
            v.check_keys(item, required=("criterion", "criteria_met"), optional=("points", "tags", "explanation"),
                         prefix=where)
            text = v.string(item, "criterion", prefix=where)
            if not by_text.get(text):
                raise v.FieldError(where + "criterion", f"{where}criterion is not a rubric item of example "
                                                        f"{obj['prompt_id']!r} (or is graded twice)")
            criterion = by_text[text].pop(0)
            points = v.number(item, "points", prefix=where)
            if points is not None and points != criterion["weight"]:
                raise v.FieldError(where + "points", f"{where}points {points:g} differ from the example's "
                                                     f"{criterion['weight']:g}")
            met = item["criteria_met"]
            if met is not None and not isinstance(met, bool):
                raise v.FieldError(where + "criteria_met", f"field '{where}criteria_met' must be true, false or null")
            explanation = v.string(item, "explanation", prefix=where, required=False, blank=True)
            judgments.append({
                "response_id": response_id, "criterion_id": criterion["criterion_id"], "judge": judge,
                "verdict": None if met is None else MET if met else NOT_MET, "explanation": explanation or "",
                "raw": json.dumps(item, ensure_ascii=False, sort_keys=True),
            })
        sample = self._sample(response_id, {j["criterion_id"]: (j["verdict"], j["explanation"]) for j in judgments})
        for judgment in judgments:
            self.judgments.append({**judgment, "sample": sample})
            self.origins["judgments.jsonl"].append((name, number))

    def _sample(self, response_id: str, graded: dict) -> int:
        """The sample a grading of ``response_id`` is: a stored sample with the same grading that no
        other line took, else the next after every sample of the response."""
        stored = self.stored.get(response_id, set())
        gradings = self.gradings.setdefault(response_id, {})
        same = next((s for s in sorted(stored) if gradings[s] == graded), None)
        if same is not None:
            stored.discard(same)
            return same
        sample = max(gradings, default=-1) + 1
        gradings[sample] = graded
        return sample


def _required(obj: dict, keys: tuple[str, ...], v) -> None:
    """Lines of simple-evals' outputs may carry more (a score, metrics, the prompt): only the
    fields read here are required, the others are left alone."""
    for key in keys:
        if key not in obj:
            raise v.FieldError(key, f"missing field {key!r}")


def _read(request: ImportRequest) -> dict:
    from grading.bundles import BundleError  # lazy: the bundle code brings pandas: loaded on import

    path = Path(request.path)
    slug = request.project_slug()
    if not slug:
        raise BundleError(path.name, "a HealthBench import goes into a project: give --project SLUG "
                                     "(or import from the project's page)", field="project")
    grades = request.files.get("grades")
    if bool(grades) != bool(request.judge):
        raise BundleError(path.name, "graded results come with the judge that graded them: give --grades FILE and "
                                     "--judge NAME together", field="judge" if grades else "grades")
    converter = _Converter(request)
    converter.examples(path)
    converter.known(slug, request.judge)
    if request.files.get("completions"):
        converter.completions(Path(request.files["completions"]))
    if grades:
        converter.grades(Path(grades), request.judge)
    files = {"cases.jsonl": converter.cases, "responses.jsonl": converter.responses,
             "judgments.jsonl": converter.judgments}
    return converted_import(request=request, project={"slug": slug, "name": slug}, files=files,
                            origins=converter.origins)


def converted_import(*, request: ImportRequest, project: dict, files: dict[str, list[dict]],
                     origins: dict[str, list[tuple[str, int]]]) -> dict:
    """Import what a converter made of a format's files: ``project`` (project.json) and the bundle
    files' rows, written to a temporary bundle and read by ``bundle_import``. ``origins`` gives, per
    bundle file, the (file, line) each of its lines came from, so that an error the bundle importer
    finds is named by the user's file and line; an error in project.json is the ``project``'s."""
    from grading.bundles import BundleError, bundle_import  # lazy: the bundle code brings pandas: loaded on import

    with tempfile.TemporaryDirectory(prefix="converted-") as folder:
        bundle = Path(folder)
        # A lone surrogate is written as its JSON escape, which the bundle reader refuses by field.
        (bundle / "project.json").write_text(json.dumps(project, ensure_ascii=False), encoding="utf-8",
                                             errors="backslashreplace")
        for name in ("cases.jsonl", "responses.jsonl", "labels.jsonl", "judgments.jsonl"):
            with open(bundle / name, "wb") as out:  # orjson: the rows are plain JSON values; UTF-8 as the reader reads
                for row in files.get(name, ()):
                    try:
                        out.write(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE))
                    except orjson.JSONEncodeError:  # a lone surrogate: written escaped, and the bundle's checks name it
                        out.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace"))
        try:
            result = bundle_import(path=bundle, user=request.user, update_settings=request.update_settings)
        except BundleError as exc:
            if exc.file == "project.json":  # what the converter made of the user's file and --project
                field = "project" if exc.field in ("slug", "name", None) else exc.field
                raise BundleError(Path(request.path).name, exc.message, field=field) from exc
            lines = origins.get(exc.file)
            if lines and exc.line is not None and exc.line <= len(lines):
                name, line = lines[exc.line - 1]
                raise BundleError(name, exc.message, line=line, field=exc.field) from exc
            raise
    return result.as_dict()


register(DataFormat(
    name="healthbench",
    title="HealthBench examples",
    upload_help="the HealthBench examples JSONL (prompt_id, prompt, rubrics, example_tags; .jsonl)",
    suffixes=(".jsonl",),
    detect=_detect,
    read=_read,
    options=("judge", "completions", "grades"),
))
