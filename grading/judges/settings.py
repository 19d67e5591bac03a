"""The judge options kept in ``Judge.settings`` (free JSON, so bundles can carry them), read
and checked in one place. Unknown keys are errors, so a typo never silently does nothing.

Keys (all optional): ``json_mode`` (true), ``timeout_seconds`` (60, per request), ``max_tokens``
(1024: the answer's output tokens), ``reasoning_effort`` (minimal / low / medium / high, sent
only when set; a server that does not know it is asked again without it),
``backoff_base_seconds`` (0.5), ``backoff_max_seconds`` (30), ``shuffle_options`` (false),
``shuffle_seed`` (0), ``requests_per_minute`` and ``tokens_per_minute`` (0: no limit; the
provider's limits for the judge's endpoint, shared with every judge on it, see ``ratelimit``),
``min_evidence`` (0: the criterion's own minimum applies; a larger
number raises it), ``few_shot`` (``{"cohort": NAME, "k": 4, "seed": 0, "split": {"share": 0.2} | {"cases":
[ids]}}``: examples come only from the split's cases, which reports of the judge then leave out;
default split: a seeded fifth of the cases), ``threshold``
(baseline coverage, 0.5), and for panels ``members`` (judge names), ``vote``
(majority / weighted / unanimous / any) and ``weights`` ({name: weight}); ``compiled`` (false:
RULERS compiled mode, one call per trait with its locked checklist and the response as a numbered
sentence bank, see ``compiled``); ``variant`` (reversed / paraphrased: a rubric-perturbation run,
options and checklists in reverse order, or the criteria's paraphrased texts) and ``variant_of``
(the judge it perturbs; ``judges.services.judge_variant``).
"""
from dataclasses import dataclass, field

VOTE_RULES = ("majority", "weighted", "unanimous", "any")
KNOWN_KEYS = {
    "json_mode", "timeout_seconds", "max_tokens", "backoff_base_seconds", "backoff_max_seconds", "shuffle_options",
    "shuffle_seed", "min_evidence", "few_shot", "threshold", "members", "vote", "weights", "reasoning_effort",
    "requests_per_minute", "tokens_per_minute", "compiled", "variant", "variant_of",
}
RUBRIC_VARIANTS = ("reversed", "paraphrased")
DEFAULT_FEW_SHOT_SHARE = 0.2  # the share of cases few-shot examples come from, when no split is given
REASONING_EFFORTS = ("minimal", "low", "medium", "high")


class SettingsError(ValueError):
    def __init__(self, key: str, message: str):
        super().__init__(f"settings.{key}: {message}")
        self.key = key
        self.message = message


@dataclass(frozen=True)
class JudgeSettings:
    json_mode: bool = True
    timeout_seconds: float = 60.0
    max_tokens: int | None = 1024
    reasoning_effort: str = ""
    backoff_base_seconds: float = 0.5
    backoff_max_seconds: float = 30.0
    requests_per_minute: int = 0
    tokens_per_minute: int = 0
    shuffle_options: bool = False
    shuffle_seed: int = 0
    min_evidence: int = 0
    few_shot_cohort: str = ""
    few_shot_k: int = 0
    few_shot_seed: int = 0
    few_shot_split: dict = field(default_factory=dict)  # {"share": x} or {"cases": [ids]}; see judges.fewshot
    threshold: float = 0.5
    members: list[str] = field(default_factory=list)
    vote: str = "majority"
    weights: dict[str, float] = field(default_factory=dict)
    compiled: bool = False
    variant: str = ""
    variant_of: str = ""


def _number(data: dict, key: str, default, *, minimum: float = 0.0, integer: bool = False):
    value = data.get(key, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SettingsError(key, f"must be a number, not {value!r}")
    if integer and int(value) != value:
        raise SettingsError(key, f"must be a whole number, not {value!r}")
    if value < minimum:
        raise SettingsError(key, f"must be at least {minimum:g}")
    return int(value) if integer else float(value)


def _flag(data: dict, key: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise SettingsError(key, f"must be true or false, not {value!r}")
    return value


def judge_settings_parse(data: dict | None) -> JudgeSettings:
    """Read ``Judge.settings``; raises ``SettingsError`` naming the offending key."""
    data = data or {}
    if not isinstance(data, dict):
        raise SettingsError("", "must be a JSON object")
    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        raise SettingsError(unknown[0], f"unknown key (known: {', '.join(sorted(KNOWN_KEYS))})")
    few_shot = data.get("few_shot") or {}
    if not isinstance(few_shot, dict) or set(few_shot) - {"cohort", "k", "seed", "split"}:
        raise SettingsError("few_shot", 'must be {"cohort": NAME, "k": N, "seed": N, "split": {...}}')
    split = few_shot.get("split") or {"share": DEFAULT_FEW_SHOT_SHARE}
    if not isinstance(split, dict) or len(split) != 1 or not set(split) <= {"share", "cases"}:
        raise SettingsError("few_shot.split", 'must be {"share": 0.2} (a seeded share of the cases) or {"cases": [ids]}')
    if "share" in split:
        share = split["share"]
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
            raise SettingsError("few_shot.split.share", f"must be a number between 0 and 1, not {share!r}")
    elif not isinstance(split["cases"], list) or not split["cases"] or not all(isinstance(c, str) for c in split["cases"]):
        raise SettingsError("few_shot.split.cases", "must be a non-empty list of case ids")
    cohort = few_shot.get("cohort", "")
    if not isinstance(cohort, str):
        raise SettingsError("few_shot.cohort", "must be a cohort name")
    k = _number(few_shot, "k", 4 if cohort else 0, integer=True)
    if k and not cohort:
        raise SettingsError("few_shot.cohort", "few-shot examples need a cohort to draw labels from")
    members = data.get("members", [])
    if not isinstance(members, list) or not all(isinstance(m, str) and m for m in members):
        raise SettingsError("members", "must be a list of judge names")
    vote = data.get("vote", "majority")
    if vote not in VOTE_RULES:
        raise SettingsError("vote", f"{vote!r} is not one of {', '.join(VOTE_RULES)}")
    weights = data.get("weights", {})
    if not isinstance(weights, dict):
        raise SettingsError("weights", "must be an object of judge name to weight")
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
            raise SettingsError(f"weights.{name}", f"must be a number >= 0, not {w!r}")
    effort = data.get("reasoning_effort") or ""
    if effort and effort not in REASONING_EFFORTS:
        raise SettingsError("reasoning_effort", f"{effort!r} is not one of {', '.join(REASONING_EFFORTS)}")
    variant = data.get("variant") or ""
    if variant and variant not in RUBRIC_VARIANTS:
        raise SettingsError("variant", f"{variant!r} is not one of {', '.join(RUBRIC_VARIANTS)}")
    variant_of = data.get("variant_of") or ""
    if not isinstance(variant_of, str):
        raise SettingsError("variant_of", "must be the name of the judge this one perturbs")
    return JudgeSettings(
        json_mode=_flag(data, "json_mode", True),
        reasoning_effort=effort,
        timeout_seconds=_number(data, "timeout_seconds", 60.0, minimum=0.001),
        max_tokens=_number(data, "max_tokens", 1024, minimum=1, integer=True) if data.get("max_tokens", 1) is not None else None,
        backoff_base_seconds=_number(data, "backoff_base_seconds", 0.5),
        backoff_max_seconds=_number(data, "backoff_max_seconds", 30.0),
        requests_per_minute=_number(data, "requests_per_minute", 0, integer=True),
        tokens_per_minute=_number(data, "tokens_per_minute", 0, integer=True),
        shuffle_options=_flag(data, "shuffle_options", False),
        shuffle_seed=_number(data, "shuffle_seed", 0, integer=True, minimum=-(2**63)),
        min_evidence=_number(data, "min_evidence", 0, integer=True),
        few_shot_cohort=cohort,
        few_shot_k=k,
        few_shot_seed=_number(few_shot, "seed", 0, integer=True, minimum=-(2**63)),
        few_shot_split=dict(split) if k else {},
        threshold=_number(data, "threshold", 0.5),
        members=list(members),
        vote=vote,
        weights={k: float(w) for k, w in weights.items()},
        compiled=_flag(data, "compiled", False),
        variant=variant,
        variant_of=variant_of,
    )


# --- what the API states and takes -----------------------------------------------------------
# Each key's JSON Schema (OpenAPI 3.0, so JSON Schema draft 4: ``exclusiveMinimum`` is a flag),
# stating what ``judge_settings_parse`` takes, or less: bounds a sane judge keeps to, names that
# are not blank, no NUL character (PostgreSQL cannot store one). A backend declares which keys it
# takes (``JudgeBackend.settings_keys``) and the API's request schema states them; the API checks
# a judge's settings against that same schema (``settings_schema_check``) before this module's
# parser reads them, so a request the schema allows is one the parser takes, and what the schema
# cannot say (that a name is of an existing cohort or judge) is a 404 or a 409, never a 400.
NO_NUL = r"^[^\u0000]*$"
NAME = {"type": "string", "minLength": 1, "maxLength": 100, "pattern": r"^[^\u0000]*[^\s\u0000][^\u0000]*$"}
SEED = {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1}
SECONDS = {"type": "number", "minimum": 0, "maximum": 3600}
PER_MINUTE = {"type": "integer", "minimum": 0, "maximum": 10**9, "description": "0: no limit"}
FEW_SHOT_SPLIT = {"oneOf": [
    {"type": "object", "additionalProperties": False, "required": ["share"], "properties": {
        "share": {"type": "number", "minimum": 0, "maximum": 1, "exclusiveMinimum": True, "exclusiveMaximum": True}}},
    {"type": "object", "additionalProperties": False, "required": ["cases"], "properties": {
        "cases": {"type": "array", "minItems": 1, "maxItems": 10000,
                  "items": {"type": "string", "maxLength": 200, "pattern": NO_NUL}}}},
]}
KEY_SCHEMAS = {
    "json_mode": {"type": "boolean"},
    "timeout_seconds": {"type": "number", "minimum": 0.001, "maximum": 3600},
    "max_tokens": {"type": "integer", "minimum": 1, "maximum": 10**7},
    "reasoning_effort": {"type": "string", "enum": ["", *REASONING_EFFORTS]},
    "backoff_base_seconds": SECONDS,
    "backoff_max_seconds": SECONDS,
    "requests_per_minute": PER_MINUTE,
    "tokens_per_minute": PER_MINUTE,
    "shuffle_options": {"type": "boolean"},
    "shuffle_seed": SEED,
    "min_evidence": {"type": "integer", "minimum": 0, "maximum": 100},
    "few_shot": {"type": "object", "additionalProperties": False, "required": ["cohort"], "properties": {
        "cohort": {**NAME, "description": "a cohort of the project (else 404)"},
        "k": {"type": "integer", "minimum": 0, "maximum": 100}, "seed": SEED, "split": FEW_SHOT_SPLIT}},
    "threshold": {"type": "number", "minimum": 0, "maximum": 1},
    "members": {"type": "array", "minItems": 2, "maxItems": 100, "uniqueItems": True,
                "items": {**NAME, "description": "a judge of the project, not a panel (else 404 / 409)"}},
    "vote": {"type": "string", "enum": list(VOTE_RULES)},
    "weights": {"type": "object", "maxProperties": 100, "additionalProperties": {"type": "number", "minimum": 0}},
    "compiled": {"type": "boolean"},
    "variant": {"type": "string", "enum": ["", *RUBRIC_VARIANTS]},
    "variant_of": {"type": "string", "maxLength": 100, "pattern": NO_NUL},
}
assert set(KEY_SCHEMAS) == KNOWN_KEYS, "every key the parser knows has its schema"


def settings_schema(keys, *, required=(), **extra) -> dict:
    """The JSON Schema of a settings object taking ``keys`` only (``required`` among them)."""
    schema = {"type": "object", "additionalProperties": False, "properties": {k: KEY_SCHEMAS[k] for k in keys}}
    if required:
        schema["required"] = list(required)
    return {**schema, **extra}


def settings_schema_check(schema: dict, data) -> None:
    """Raise ``SettingsError`` naming the first key of ``data`` that ``schema`` refuses."""
    from jsonschema import Draft4Validator  # lazy: only the API checks a schema

    error = next(iter(sorted(Draft4Validator(schema).iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])), None)
    if error is None:
        return
    path = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        path = ".".join(filter(None, [path, unknown[0] if unknown else ""]))
        raise SettingsError(path, f"unknown key (known: {', '.join(sorted(error.schema.get('properties', {})))})")
    raise SettingsError(path, error.message if len(error.message) < 300 else error.message[:300] + "…")
