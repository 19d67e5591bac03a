"""Reading a Label Studio JSON export: recognizing it (``detect``) and converting its tasks into an
evalsite bundle in a temporary directory that ``grading.bundles.bundle_import`` imports (``read``);
the importer's errors are named back by the export's file, task and field."""
import json
import tempfile
from pathlib import Path

from grading.bundles.errors import BundleError

from ..registry import ImportRequest
from .controls import COHORT, MODEL_VERSION, SAMPLE_KEY, UNNAMED_JUDGE, USER_PREFIX, USERNAME_KEY, Control, config_controls

UNKNOWN_MODEL = "unknown"
MAPPING_KEYS = ("prompt", "response", "model", "case_id", "response_id", "reference_answer", "config")
DEFAULT_MAPPING = {"prompt": "prompt", "response": "response", "model": "model", "case_id": "case_id",
                   "response_id": "response_id", "reference_answer": "reference_answer"}
HEAD_BYTES = 1 << 20
JUDGE_NAME_MAX = 100  # Judge.name


def _tasks_file(path: Path) -> Path:
    return path / "tasks.json" if path.is_dir() else path


def detect(path: Path) -> bool:
    """A .json list whose first item has ``data`` and ``annotations`` (or a folder with such a
    tasks.json). Reads at most the first megabyte."""
    path = _tasks_file(Path(path))
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES).decode("utf-8", errors="ignore").lstrip()
    if not head.startswith("["):
        return False
    try:
        first, _ = json.JSONDecoder().raw_decode(head[1:].lstrip())
    except ValueError:  # the first task is longer than the head: its keys must be in it
        return len(head) >= HEAD_BYTES // 2 and '"data"' in head and '"annotations"' in head
    return isinstance(first, dict) and "data" in first and "annotations" in first


def _mapping(request: ImportRequest) -> tuple[dict, Path | None]:
    """The field names (defaults overridden by the mapping file) and the labeling config, if any."""
    mapping, config = dict(DEFAULT_MAPPING), None
    path = request.files.get("mapping")
    if path is not None:
        path = Path(path)
        try:
            given = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BundleError(path.name, f"not a JSON mapping: {exc}") from exc
        if not isinstance(given, dict):
            raise BundleError(path.name, "the mapping must be a JSON object of field names")
        for key, value in given.items():
            if key not in MAPPING_KEYS:
                raise BundleError(path.name, f"unknown key {key!r} (use {', '.join(MAPPING_KEYS)})", field=key)
            if not isinstance(value, str) or not value:
                raise BundleError(path.name, f"field {key!r} must be a non-empty string", field=key)
        config = path.parent / given.pop("config") if "config" in given else None
        mapping.update(given)
    tasks = _tasks_file(Path(request.path))
    if config is None and (tasks.parent / "config.xml").is_file():
        config = tasks.parent / "config.xml"
    return mapping, config


class _Converter:
    """The tasks as bundle parts, with where each bundle line came from (for naming errors)."""

    def __init__(self, name: str, mapping: dict, controls: dict[str, Control] | None):
        self.name, self.mapping, self.controls = name, mapping, controls
        self.inferred: dict[str, Control] = {}
        self.cases, self.responses, self.labels, self.judgments = [], [], [], []
        self.case_of_prompt: dict[str, str] = {}
        self.case_prompts: dict[str, str] = {}
        self.where: dict[tuple[str, int], tuple[int, str]] = {}  # (bundle file, line) -> (task, field prefix)
        self.left_out = {"drafts": 0, "cancelled": 0, "other_results": 0}

    def fail(self, task: int, field: str, message: str):
        raise BundleError(self.name, message, line=task, field=field)

    def text(self, data: dict, task: int, key: str, *, required: bool = True, blank: bool = False) -> str | None:
        name = self.mapping[key]
        value = data.get(name)
        if value is None and not required:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key.endswith("_id"):
            value = str(value)
        if not isinstance(value, str) or (not blank and not value.strip()):
            self.fail(task, f"data.{name}", f"data.{name} must be {'a' if blank else 'a non-empty'} string"
                      + ("" if name in data else f" (map the {key} with --mapping)"))
        return value

    def task(self, number: int, task: object) -> None:
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            self.fail(number, "data", "a task must be a JSON object with a 'data' object")
        data = task["data"]
        prompt = self.text(data, number, "prompt")
        response_id = self.text(data, number, "response_id", required=False)
        if response_id is None:
            if not isinstance(task.get("id"), (int, str)) or isinstance(task.get("id"), bool):
                self.fail(number, "id", "a task needs an id (or give the response id in its data)")
            response_id = str(task["id"])
        case_id = self.text(data, number, "case_id", required=False) or self.case_of_prompt.setdefault(prompt, response_id)
        if self.case_prompts.setdefault(case_id, prompt) != prompt:
            self.fail(number, f"data.{self.mapping['prompt']}", f"case {case_id!r} has another prompt in an earlier task")
        if len(self.case_prompts) > len(self.cases):
            case = {"case_id": case_id, "prompt": prompt}
            reference = self.text(data, number, "reference_answer", required=False, blank=True)
            if reference:
                case["reference_answer"] = reference
            self.cases.append(case)
            self.where[("cases.jsonl", len(self.cases))] = (number, "data")
        model = self.text(data, number, "model", required=False) or UNKNOWN_MODEL
        self.responses.append({"response_id": response_id, "case_id": case_id, "model": model,
                               "text": self.text(data, number, "response", blank=True)})
        self.where[("responses.jsonl", len(self.responses))] = (number, "data")
        self.left_out["drafts"] += len(task.get("drafts") or [])
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            self.fail(number, "annotations", "field 'annotations' must be a list")
        ground_truth = None
        for j, annotation in enumerate(annotations):
            where = f"annotations[{j}]"
            if not isinstance(annotation, dict):
                self.fail(number, where, "an annotation must be a JSON object")
            if annotation.get("was_cancelled"):
                self.left_out["cancelled"] += 1
                continue
            if annotation.get("ground_truth"):
                if ground_truth is not None:
                    self.fail(number, f"{where}.ground_truth", f"a second ground truth annotation (the first is "
                                                               f"annotations[{ground_truth}]): a task has one checker decision")
                ground_truth = j
            self.annotation(number, where, annotation, response_id)
        predictions = task.get("predictions") or []
        if not isinstance(predictions, list):
            self.fail(number, "predictions", "field 'predictions' must be a list")
        samples: dict[str, int] = {}
        for j, prediction in enumerate(predictions):
            self.prediction(number, f"predictions[{j}]", prediction, response_id, samples)

    def prediction(self, number: int, where: str, prediction: object, response_id: str, samples: dict) -> None:
        """A prediction as the judgments of the judge named by its ``model_version``, one per result;
        its sample: the ``evalsite_sample`` evalsite's export writes, else its place among the task's
        predictions of that model version (0, 1, ...)."""
        if not isinstance(prediction, dict):
            self.fail(number, where, "a prediction must be a JSON object (a full JSON export, not JSON-MIN)")
        judge = prediction.get(MODEL_VERSION)
        if judge is None or (isinstance(judge, str) and not judge.strip()):
            judge = UNNAMED_JUDGE
        if not isinstance(judge, str) or len(judge) > JUDGE_NAME_MAX:
            self.fail(number, f"{where}.{MODEL_VERSION}",
                      f"field '{MODEL_VERSION}' must be a string of at most {JUDGE_NAME_MAX} characters (a judge's name)")
        sample = prediction.get(SAMPLE_KEY)
        if sample is None:
            sample = samples.get(judge, 0)
        elif not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
            self.fail(number, f"{where}.{SAMPLE_KEY}", f"field '{SAMPLE_KEY}' must be a whole number from 0")
        samples[judge] = max(samples.get(judge, 0), sample + 1)
        results = prediction.get("result") or []
        if not isinstance(results, list):
            self.fail(number, f"{where}.result", "field 'result' must be a list")
        for k, result in enumerate(results):
            at = f"{where}.result[{k}]"
            if not isinstance(result, dict) or not isinstance(result.get("value"), dict):
                self.fail(number, at, "a result must be a JSON object with a 'value' object")
            kind = result.get("type")
            if kind not in ("choices", "rating"):
                self.left_out["other_results"] += 1
                continue
            decision = self.decision(number, at, result, kind)
            self.judgments.append({"response_id": response_id, "criterion_id": result["from_name"], "judge": judge,
                                   "sample": sample, **decision})
            self.where[("judgments.jsonl", len(self.judgments))] = (number, at)

    def user(self, number: int, where: str, annotation: dict) -> str:
        user = annotation.get(USERNAME_KEY) or annotation.get("completed_by")
        if isinstance(user, dict):
            user = user.get("id") if isinstance(user.get("id"), int) else user.get("email")  # the id, as in other tasks
        if isinstance(user, int) and not isinstance(user, bool):
            return f"{USER_PREFIX}{user}"
        if not isinstance(user, str) or not user.strip():
            self.fail(number, f"{where}.completed_by", "an annotation needs completed_by (a user id or object)")
        return user

    def annotation(self, number: int, where: str, annotation: dict, response_id: str) -> None:
        username = self.user(number, where, annotation)
        results = annotation.get("result") or []
        if not isinstance(results, list):
            self.fail(number, f"{where}.result", "field 'result' must be a list")
        seconds = annotation.get("lead_time")
        for k, result in enumerate(results):
            at = f"{where}.result[{k}]"
            if not isinstance(result, dict) or not isinstance(result.get("value"), dict):
                self.fail(number, at, "a result must be a JSON object with a 'value' object")
            kind = result.get("type")
            if kind not in ("choices", "rating"):
                self.left_out["other_results"] += 1
                continue
            decision = self.decision(number, at, result, kind)
            label = {"response_id": response_id, "criterion_id": result["from_name"], "cohort": COHORT,
                     "annotator": username, "role": "checker" if annotation.get("ground_truth") else "annotator", **decision}
            if seconds is not None:
                label["time_spent_seconds"], seconds = seconds, None  # the annotation's time, once
            self.labels.append(label)
            self.where[("labels.jsonl", len(self.labels))] = (number, at)

    def decision(self, number: int, at: str, result: dict, kind: str) -> dict:
        name = result.get("from_name")
        if not isinstance(name, str) or not name:
            self.fail(number, f"{at}.from_name", "a result needs from_name (its control's name)")
        if kind == "rating":
            word = result["value"].get("rating")
            if not isinstance(word, int) or isinstance(word, bool) or word < 1:
                self.fail(number, f"{at}.value.rating", "a rating must be a whole number from 1")
            word = str(word)
        else:
            chosen = result["value"].get("choices")
            if not isinstance(chosen, list) or len(chosen) != 1 or not isinstance(chosen[0], str):
                self.fail(number, f"{at}.value.choices", "choices must be a list of one chosen word")
            word = chosen[0]
        if self.controls is not None:
            control = self.controls.get(name)
            if control is None or control.kind != kind:
                self.fail(number, f"{at}.from_name", f"the labeling config has no {kind} control {name!r}")
            decision = control.decision(word)
            if decision is None:
                self.fail(number, f"{at}.value.{kind}", f"{word!r} is not a choice of control {name!r}")
            return decision
        control = self.inferred.setdefault(name, Control(name=name, text=name, kind=kind))
        if control.kind != kind:
            self.fail(number, f"{at}.type", f"control {name!r} is a {control.kind} control in an earlier task")
        if kind == "rating":
            control.max_rating = max(control.max_rating, int(word))
        elif all(word != known for known, _, _ in control.choices):
            control.choices.append((word, None, False))
        return {"word": word}  # decided once every choice of the control is known

    def rubric(self) -> list[dict]:
        if self.controls is not None:
            return [control.spec() for control in self.controls.values()]
        for label in (*self.labels, *self.judgments):
            if "word" in label:
                label.update(self.inferred[label["criterion_id"]].decision(label.pop("word")))
        return [control.spec() for control in self.inferred.values()]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    """A lone surrogate (json.loads reads one) is written as its JSON escape, which the bundle
    reader refuses by field."""
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8",
                    errors="backslashreplace")


def _named(exc: BundleError, converter: _Converter, config: Path | None) -> BundleError:
    """An error of the converted bundle, named by the Label Studio file, task and field."""
    found = converter.where.get((exc.file, exc.line))
    if found is None:
        return BundleError(config.name if exc.file == "project.json" and config else converter.name, exc.message,
                           field=exc.field)
    number, prefix = found
    fields = {"annotator": "completed_by", "cohort": "completed_by", "time_spent_seconds": "lead_time",
              "judge": MODEL_VERSION, "sample": SAMPLE_KEY}
    if exc.file in ("labels.jsonl", "judgments.jsonl"):
        where = prefix.rsplit(".result", 1)[0] + "." + fields[exc.field] if exc.field in fields else f"{prefix}.value"
    else:
        keys = {"text": "response", "prompt": "prompt", "model": "model", "case_id": "case_id",
                "response_id": "response_id", "reference_answer": "reference_answer"}
        where = f"data.{converter.mapping[keys[exc.field]]}" if exc.field in keys else prefix
    return BundleError(converter.name, exc.message, line=number, field=where)


def read(request: ImportRequest) -> dict:
    from annotation.models import Project  # lazy: the models load when a file is read, not at discovery
    from grading.bundles import bundle_import  # lazy: the bundle code brings pandas: loaded when a bundle is read

    path = _tasks_file(Path(request.path))
    slug = request.project_slug()
    if not slug:
        raise BundleError(path.name, "a Label Studio export names no project: import it from its project's page "
                                      "or give the project's slug (--project SLUG)",
                          field="project")
    mapping, config = _mapping(request)
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BundleError(path.name, f"not a Label Studio JSON export: {exc}") from exc
    if not isinstance(tasks, list):
        raise BundleError(path.name, "a Label Studio JSON export is a list of tasks")
    converter = _Converter(path.name, mapping, config_controls(config) if config else None)
    for number, task in enumerate(tasks, start=1):
        converter.task(number, task)
    name = Project.objects.filter(slug=slug).values_list("name", flat=True).first() or slug
    project = {"slug": slug, "name": name, "rubric": converter.rubric(), "cohorts": [{"name": COHORT}]}
    with tempfile.TemporaryDirectory(prefix="labelstudio-") as work:
        bundle = Path(work)
        (bundle / "project.json").write_text(json.dumps(project, ensure_ascii=False), encoding="utf-8",
                                             errors="backslashreplace")
        for name, rows in (("cases", converter.cases), ("responses", converter.responses), ("labels", converter.labels),
                           ("judgments", converter.judgments)):
            _write_jsonl(bundle / f"{name}.jsonl", rows)
        try:
            result = bundle_import(path=bundle, user=request.user, update_settings=request.update_settings).as_dict()
        except BundleError as exc:
            raise _named(exc, converter, config) from exc
    return {**result, "left_out": converter.left_out}
