"""Reading an Autorubric dataset: recognizing it (``detect``) and converting it into an evalsite bundle
that ``healthbench.converted_import`` imports (``read``); the rules are in the package's docstring."""
import json
import re
from pathlib import Path

from django.utils.text import slugify

from annotation.vocabulary import CANNOT_ASSESS, MET, NOT_MET
from grading.bundles.errors import BundleError

from ..healthbench import converted_import
from ..registry import ImportRequest
from .located import lines_of, walk

KEYS = frozenset({"rubric", "items"})  # what makes a JSON object an Autorubric dataset
HEAD_BYTES = 1 << 20
DEFAULT_WEIGHT = 10.0  # autorubric.Criterion.weight
COHORT = "ground-truth"
VERDICTS = {"MET": MET, "UNMET": NOT_MET, "CANNOT_ASSESS": CANNOT_ASSESS, "N/A": CANNOT_ASSESS, "NA": CANNOT_ASSESS}
MAPPING_NAMES = ("cohort", "annotator", "model", "case_prefix")
SLUG_MAX = 100  # Project.slug


def detect(path: Path) -> bool:
    """A .json file holding one object with ``rubric`` and ``items``. Reads the first megabyte, which
    holds both keys in the order Autorubric writes them; a file whose head is not enough (its keys
    sorted, say, so ``items`` comes first) is read whole."""
    path = Path(path)
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
    text = head.decode("utf-8-sig", errors="ignore")
    if not text.lstrip().startswith("{"):
        return False
    try:
        return KEYS <= walk(text, until=KEYS)[0].keys()
    except (ValueError, RecursionError):
        if len(head) < HEAD_BYTES:
            return False
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and KEYS <= data.keys()


# -- the mapping file -----------------------------------------------------------------------------
def _mapping(request: ImportRequest) -> dict:
    """The names and project settings the mapping file gives (empty without one)."""
    from annotation.projects import SETTINGS, settings_clean  # lazy: the models load when a file is read

    path = request.files.get("mapping")
    if path is None:
        return {}
    path = Path(path)
    try:
        given = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise BundleError(path.name, f"not a JSON mapping: {exc}") from exc
    if not isinstance(given, dict):
        raise BundleError(path.name, "the mapping must be a JSON object")
    for key, value in given.items():
        if key == "project":
            if not isinstance(value, dict):
                raise BundleError(path.name, "field 'project' must be a JSON object of project settings", field=key)
            unknown = sorted(set(value) - set(SETTINGS))
            if unknown:
                raise BundleError(path.name, f"unknown project setting {unknown[0]!r} (use {', '.join(SETTINGS)})",
                                  field=f"project.{unknown[0]}")
            try:
                settings_clean(value, prefix="project.")
            except ValueError as exc:
                raise BundleError(path.name, str(exc), field="project") from exc
        elif key not in MAPPING_NAMES:
            raise BundleError(path.name, f"unknown key {key!r} (use {', '.join(MAPPING_NAMES)} or project)", field=key)
        elif not isinstance(value, str) or not value.strip():
            raise BundleError(path.name, f"field {key!r} must be a non-empty string", field=key)
    return given


# -- the conversion -------------------------------------------------------------------------------
class _Converter:
    """The dataset as bundle parts, checked as it is read; ``origins`` remembers the line of the item
    each bundle line came from."""

    def __init__(self, name: str, names: dict):
        from grading.bundles import validate  # lazy: the bundle code brings pandas: loaded when a file is read

        self.v = validate
        self.name, self.names = name, names
        self.cases, self.responses, self.labels = [], [], []
        self.origins: dict[str, list[tuple[str, int]]] = {"cases.jsonl": [], "responses.jsonl": [], "labels.jsonl": []}
        self.criterion_ids: set[str] = set()

    def fail(self, message: str, *, line: int | None = None, field: str | None = None):
        raise BundleError(self.name, message, line=line, field=field)

    # -- criteria -------------------------------------------------------------------------------
    def rubric(self, raw, *, where: str, id_prefix: str, tag: str) -> tuple[list[dict], str | None]:
        """Autorubric's rubric (a list of criteria or of sections holding them; a dict with
        ``criteria`` and ``guidelines``, ``sections`` or ``rubric``) as bundle criteria, and its
        guidelines. Criteria are numbered in the order they come, sections flattened, as Autorubric does."""
        v, guidelines = self.v, None
        if isinstance(raw, dict):
            if "criteria" in raw:
                guidelines = v.string(raw, "guidelines", prefix=where + ".", required=False, blank=True) or None
                key = "criteria"
            elif "sections" in raw or "rubric" in raw:
                key = "sections" if "sections" in raw else "rubric"
            else:
                raise v.FieldError(where, f"field {where!r} must be a list of criteria or an object with 'criteria'")
            return self.rubric(raw[key], where=f"{where}.{key}", id_prefix=id_prefix, tag=tag)[0], guidelines
        if not isinstance(raw, list) or not raw:
            raise v.FieldError(where, f"field {where!r} must be a non-empty list of criteria")
        flat = []  # (field path, criterion)
        for i, entry in enumerate(raw):
            if isinstance(entry, dict) and "criteria" in entry:
                inner = entry["criteria"]
                if not isinstance(inner, list):
                    raise v.FieldError(f"{where}[{i}].criteria", f"field '{where}[{i}].criteria' must be a list")
                flat += [(f"{where}[{i}].criteria[{k}]", c) for k, c in enumerate(inner)]
            else:
                flat.append((f"{where}[{i}]", entry))
        if not flat:
            raise v.FieldError(where, f"field {where!r} holds no criteria")
        return [self.criterion(c, path=path, number=n, id_prefix=id_prefix, tag=tag)
                for n, (path, c) in enumerate(flat, start=1)], guidelines

    def criterion(self, raw, *, path: str, number: int, id_prefix: str, tag: str) -> dict:
        v, prefix = self.v, path + "."
        if not isinstance(raw, dict):
            raise v.FieldError(path, "a criterion must be a JSON object")
        if "requirement" not in raw:
            raise v.FieldError(prefix + "requirement", f"missing field '{prefix}requirement'")
        name = v.string(raw, "name", prefix=prefix, required=False, max_length=200 - len(id_prefix)) or f"C{number}"
        criterion_id = id_prefix + name
        if criterion_id in self.criterion_ids:
            raise v.FieldError(prefix + "name", f"duplicate criterion name {name!r}")
        self.criterion_ids.add(criterion_id)
        spec = {"criterion_id": criterion_id, "text": v.string(raw, "requirement", prefix=prefix),
                "weight": v.number(raw, "weight", prefix=prefix, default=DEFAULT_WEIGHT),
                "kind": "binary", "options": [], "tags": [tag], "min_evidence": 0}
        options = raw.get("options")
        if options is None:
            return spec
        if not isinstance(options, list) or not options:
            raise v.FieldError(prefix + "options", f"field '{prefix}options' must be a non-empty list (or null: binary)")
        spec["kind"] = raw.get("scale_type") or "ordinal"  # Autorubric's default
        if spec["kind"] not in ("ordinal", "nominal"):
            raise v.FieldError(prefix + "scale_type", f"{prefix}scale_type {spec['kind']!r} is not ordinal or nominal")
        for i, option in enumerate(options):
            where = f"{prefix}options[{i}]."
            if not isinstance(option, dict):
                raise v.FieldError(where.rstrip("."), "an option must be a JSON object")
            label = v.string(option, "label", prefix=where, max_length=200)
            if any(label == known["label"] for known in spec["options"]):
                raise v.FieldError(where + "label", f"duplicate option label {label!r}")
            if option.get("value") is None:
                raise v.FieldError(where + "value", f"field '{where}value' must be a number")
            na = option.get("na", False)
            if not isinstance(na, bool):
                raise v.FieldError(where + "na", f"field '{where}na' must be true or false")
            spec["options"].append({"label": label, "value": v.number(option, "value", prefix=where), "na": na})
        if all(option["na"] for option in spec["options"]):
            raise v.FieldError(prefix + "options", "a multi-choice criterion needs an option that is not N/A")
        return spec

    # -- items ----------------------------------------------------------------------------------
    def item(self, obj, *, number: int, line: int, case_id: str, dataset: dict) -> None:
        """Item ``number`` (1-based), starting on ``line``: its case, response and labels."""
        try:
            self._item(obj, number=number, line=line, case_id=case_id, dataset=dataset)
        except self.v.FieldError as exc:
            self.fail(f"item {number}: {exc.message}", line=line, field=f"items[{number - 1}].{exc.field}".rstrip("."))

    def _item(self, obj, *, number: int, line: int, case_id: str, dataset: dict) -> None:
        v = self.v
        if not isinstance(obj, dict):
            raise v.FieldError("", "an item must be a JSON object")
        if "submission" not in obj:
            raise v.FieldError("submission", "missing field 'submission'")
        submission = v.string(obj, "submission", blank=True)
        description = v.string(obj, "description", required=False, blank=True)
        prompt = v.string(obj, "prompt", required=False) or dataset["prompt"]
        reference = v.string(obj, "reference_submission", required=False, blank=True) or dataset["reference"]
        case = {"case_id": case_id,
                "metadata": {"task_themes": [], "specialties": [], "source": dataset["source"], "item_index": number - 1}}
        if obj.get("rubric") is not None:
            criteria, guidelines = self.rubric(obj["rubric"], where="rubric", id_prefix=f"{case_id}#",
                                               tag=dataset["source"])
            case["criteria"] = criteria
            if guidelines:
                case["metadata"]["guidelines"] = guidelines
        elif dataset["criteria"]:
            criteria = dataset["criteria"]
        else:
            raise v.FieldError("rubric", "the item has no rubric and the dataset's rubric is null")
        turns = _conversation(submission)
        if turns is not None and len(turns) > 1:
            case["messages"] = turns[:-1]
            if obj.get("prompt"):
                case["metadata"]["prompt"] = obj["prompt"]
        elif prompt:
            case["prompt"] = prompt
        else:
            raise v.FieldError("prompt", "the submission is not a chat with the user's turns, and neither the item nor "
                                         "the dataset has a prompt: the case would have no input")
        if reference:
            case["reference_answer"] = reference
        response_id = f"{case_id}-assistant"
        self.cases.append(case)
        self.responses.append({"response_id": response_id, "case_id": case_id, "model": self.names["model"],
                               "text": turns[-1]["content"] if turns is not None else submission, "author_kind": "model"})
        self.origins["cases.jsonl"].append((self.name, line))
        self.origins["responses.jsonl"].append((self.name, line))
        truth = obj.get("ground_truth")
        if truth is None:
            return
        if not isinstance(truth, list) or len(truth) != len(criteria):
            raise v.FieldError("ground_truth", f"field 'ground_truth' must be a list of {len(criteria)} entries, one per "
                                               f"criterion (or null)" + (f", not {len(truth)}" if isinstance(truth, list) else ""))
        rationale = description  # the item's first label carries it
        for j, (criterion, value) in enumerate(zip(criteria, truth)):
            if value is None:
                continue
            label = {"response_id": response_id, "criterion_id": criterion["criterion_id"], "cohort": self.names["cohort"],
                     "annotator": self.names["annotator"], "role": "annotator",
                     **_decision(criterion, value, field=f"ground_truth[{j}]", v=v)}
            if rationale:
                label["rationale"], rationale = rationale, ""
            self.labels.append(label)
            self.origins["labels.jsonl"].append((self.name, line))


def _conversation(submission: str) -> list[dict] | None:
    """A submission's chat turns (role and content) when it is a JSON-encoded chat ending with the
    assistant's turn; None when it is text. FieldError when it looks like a chat and is not one."""
    from grading.bundles.validate import FieldError  # lazy: the bundle code brings pandas: loaded when a file is read

    start = submission.lstrip()
    if not (start.startswith("[") and start[1:].lstrip().startswith("{")):
        return None
    try:
        turns = json.loads(submission)
    except (ValueError, RecursionError) as exc:
        raise FieldError("submission", f"the submission looks like a JSON-encoded chat but is malformed JSON: {exc}") from exc
    if not all(isinstance(turn, dict) and "role" in turn for turn in turns):
        return None  # JSON of some other shape: the text graded
    for i, turn in enumerate(turns):
        if not isinstance(turn["role"], str) or not turn["role"].strip() or not isinstance(turn.get("content"), str):
            raise FieldError("submission", f"turn {i + 1} of the submission's chat needs a role and a text content")
    if turns[-1]["role"] != "assistant":
        raise FieldError("submission", "the submission's chat must end with the assistant's turn (the response graded)")
    return [{"role": turn["role"], "content": turn["content"]} for turn in turns]


def _decision(criterion: dict, value, *, field: str, v) -> dict:
    """``{"verdict": ...}`` or ``{"option": ...}`` for one ground-truth entry."""
    if not isinstance(value, str):
        raise v.FieldError(field, f"field {field!r} must be a string (a verdict or an option label) or null")
    if criterion["kind"] == "binary":
        verdict = VERDICTS.get(value.strip().upper())
        if verdict is None:
            raise v.FieldError(field, f"{field} {value!r} is not a verdict of the binary criterion "
                                      f"{criterion['criterion_id']!r} (MET, UNMET or CANNOT_ASSESS)")
        return {"verdict": verdict}
    labels = [option["label"] for option in criterion["options"]]
    if value in labels:
        return {"option": value}
    wanted = value.strip().lower()
    for label in labels:
        if label.strip().lower() == wanted:
            return {"option": label}
    raise v.FieldError(field, f"{field} {value!r} is not an option of criterion {criterion['criterion_id']!r} "
                              f"({'; '.join(labels)})")


# -- the import -----------------------------------------------------------------------------------
def _parsed(path: Path) -> tuple[dict, dict]:
    """The dataset's JSON object, and the lines where its members' values (``line_of[key]``) and the
    elements of its ``items`` and ``rubric`` lists (``line_of["items[]"]``, ``line_of["rubric[]"]``) start."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BundleError(path.name, f"not a readable UTF-8 file: {exc}") from exc
    if not text.lstrip().startswith("{"):
        raise BundleError(path.name, "an Autorubric dataset is one JSON object with 'rubric' and 'items'", line=1)
    try:
        data, value_at, starts = walk(text, arrays=KEYS)
    except json.JSONDecodeError as exc:
        raise BundleError(path.name, f"malformed JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from exc
    except RecursionError:
        raise BundleError(path.name, "malformed JSON: nested too deeply") from None
    line_of = dict(zip(value_at, lines_of(text, list(value_at.values()))))
    for key, offsets in starts.items():
        line_of[f"{key}[]"] = lines_of(text, offsets)
    for key in ("rubric", "items"):
        if key not in data:
            raise BundleError(path.name, f"missing field {key!r}", line=1, field=key)
    if not isinstance(data["items"], list) or not data["items"]:
        raise BundleError(path.name, "field 'items' must be a non-empty list", line=line_of["items"], field="items")
    return data, line_of


def read(request: ImportRequest) -> dict:
    from annotation.models import Project  # lazy: the models load when a file is read, not at discovery
    from grading.bundles import validate as v  # lazy: the bundle code brings pandas: loaded when a file is read

    path = Path(request.path)
    names = _mapping(request)
    data, line_of = _parsed(path)
    try:
        dataset_name = v.string(data, "name", required=False)
        prompt = v.string(data, "prompt", required=False)
        reference = v.string(data, "reference_submission", required=False, blank=True)
    except v.FieldError as exc:
        raise BundleError(path.name, exc.message, line=line_of[exc.field], field=exc.field) from exc
    slug = request.project_slug(named=slugify(dataset_name)[:SLUG_MAX].strip("-_"))
    if not slug:
        raise BundleError(path.name, "the dataset has no name to make the project's slug of: give --project SLUG "
                                     "(or import it from the project's page)", field="project")
    source = slugify(dataset_name)[:SLUG_MAX].strip("-_") or slug
    names = {"cohort": COHORT, "annotator": f"{source}-reference", "model": f"{source}-assistant",
             "case_prefix": source, **names}

    converter = _Converter(path.name, names)
    criteria, guidelines = [], None
    if data["rubric"] is not None:
        try:
            criteria, guidelines = converter.rubric(data["rubric"], where="rubric", id_prefix="", tag=source)
        except v.FieldError as exc:
            place, lines = _rubric_place(exc.field), line_of.get("rubric[]", [])
            line = lines[place] if place is not None and place < len(lines) else line_of["rubric"]
            raise BundleError(path.name, exc.message, line=line, field=exc.field) from exc
    dataset = {"criteria": criteria, "prompt": prompt, "reference": reference, "source": source}
    width = max(3, len(str(len(data["items"]))))
    for number, (obj, line) in enumerate(zip(data["items"], line_of["items[]"]), start=1):
        converter.item(obj, number=number, line=line, case_id=f"{names['case_prefix']}-{number:0{width}d}", dataset=dataset)

    # A new project takes its name, description and guidelines from the dataset; an existing one keeps
    # its own unless asked to take the file's (--update-settings). The mapping's settings are asked for.
    settings = {"name": dataset_name or slug, **({"description": prompt} if prompt else {}),
                **({"guidelines": guidelines} if guidelines else {})}
    existing = Project.objects.filter(slug=slug).values_list("name", flat=True).first()
    if existing is not None and not request.update_settings:
        settings = {"name": existing}
    project = {"slug": slug, **settings, **names.get("project", {}), "rubric": criteria,
               "cohorts": [{"name": names["cohort"]}]}
    files = {"cases.jsonl": converter.cases, "responses.jsonl": converter.responses, "labels.jsonl": converter.labels}
    return converted_import(request=request, project=project, files=files, origins=converter.origins)


def _rubric_place(field: str) -> int | None:
    """The index in the top-level list of a field path ``rubric[3]...``."""
    found = re.match(r"rubric\[(\d+)\]", field or "")
    return int(found.group(1)) if found else None
