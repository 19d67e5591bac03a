"""What reports join decisions with: responses (source model, author kind, text length),
cases (difficulty, register, task themes, specialties) and criteria (kind, weight,
options and their value range), each one query into a DataFrame indexed by primary key.

Case and criterion texts are loaded only on request (``with_text=True``): they are needed
to align two separately imported studies and nowhere else.
"""
import json
import math

import pandas as pd
from django.db.models.functions import Length

from annotation.models import Case, Criterion, Project, Response


def response_frame(*, project: Project) -> pd.DataFrame:
    """One row per response: external_id, case_id, model, author_kind, position, length_chars."""
    rows = (
        Response.objects.filter(project=project)
        .order_by()
        .annotate(length_chars=Length("text"))
        .values_list("pk", "external_id", "case_id", "model", "author_kind", "position", "length_chars")
    )
    columns = ["response_id", "external_id", "case_id", "model", "author_kind", "position", "length_chars"]
    return pd.DataFrame.from_records(list(rows), columns=columns).set_index("response_id")


def _case_text(prompt: str, messages) -> str:
    if messages:
        return "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    return prompt or ""


def case_frame(*, project: Project, with_text: bool = False) -> pd.DataFrame:
    """One row per case: external_id, position, difficulty, register, task_themes and
    specialties (lists, from metadata), and ``case_text`` (prompt or the messages' contents)
    when ``with_text``."""
    fields = ["pk", "external_id", "position", "difficulty", "register", "metadata"]
    if with_text:
        fields += ["prompt", "messages"]
    records = []
    for row in Case.objects.filter(project=project).order_by().values_list(*fields):
        pk, ext, position, difficulty, register, metadata = row[:6]
        metadata = metadata or {}
        record = [pk, ext, position, difficulty or None, register or None,
                  _as_list(metadata.get("task_themes")), _as_list(metadata.get("specialties"))]
        if with_text:
            record.append(_case_text(row[6], row[7]))
        records.append(record)
    columns = ["case_id", "case_external_id", "case_position", "difficulty", "register", "task_themes", "specialties"]
    if with_text:
        columns.append("case_text")
    return pd.DataFrame.from_records(records, columns=columns).set_index("case_id")


def _as_list(value) -> list:
    if value is None or value == "":
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def option_range(options: list[dict]) -> tuple[float, float]:
    """Lowest and highest value of the options that are not flagged not-applicable (0, 1 if none)."""
    values = [float(o["value"]) for o in options or [] if not o.get("na")]
    return (min(values), max(values)) if values else (0.0, 1.0)


def _json_list(raw) -> list:
    """A JSON list column read raw from the cursor ('[]' for nearly every binary criterion)."""
    if raw is None or raw == "[]":
        return []
    return json.loads(raw) if isinstance(raw, (str, bytes)) else list(raw)


def criterion_frame(*, project: Project, with_text: bool = False) -> pd.DataFrame:
    """One row per criterion: external_id, case_id (NaN = project-wide), position, kind,
    weight, options, min_value, max_value, option_values (sorted applicable values),
    na_labels (labels flagged not-applicable) and ``criterion_text`` when ``with_text``."""
    from .cohorts import fetch_frame

    fields = ["pk", "external_id", "case_id", "position", "kind", "weight", "options"]
    if with_text:
        fields.append("text")
    columns = ["criterion_id", "criterion_external_id", "case_id", "criterion_position", "kind", "weight", "options"]
    raw = fetch_frame(Criterion.objects.filter(project=project).values_list(*fields), columns + (["criterion_text"] if with_text else []))
    options = [_json_list(o) for o in raw["options"].tolist()]
    empty: frozenset = frozenset()
    ranges = [option_range(o) if o else (0.0, 1.0) for o in options]
    raw["options"] = options
    raw["min_value"] = [r[0] for r in ranges]
    raw["max_value"] = [r[1] for r in ranges]
    raw["option_values"] = [sorted({float(o["value"]) for o in opts if not o.get("na")}) if opts else [] for opts in options]
    raw["na_labels"] = [frozenset(o["label"] for o in opts if o.get("na")) if opts else empty for opts in options]
    raw["weight"] = raw["weight"].astype(float)
    frame = raw.set_index("criterion_id")
    frame["case_id"] = frame["case_id"].astype("Int64")
    return frame


def applicable_pairs(*, responses: pd.DataFrame, criteria: pd.DataFrame) -> pd.DataFrame:
    """Every (response_id, criterion_id) of the rubric: a case's own criteria, or the
    project-wide rubric for cases that have none (the importer's rule)."""
    own = criteria[criteria["case_id"].notna()]
    shared = criteria[criteria["case_id"].isna()]
    left = responses[["case_id"]].reset_index()
    pairs = left.merge(own[["case_id"]].reset_index(), on="case_id", how="inner")
    with_own = set(own["case_id"].astype(int).unique())
    without = left[~left["case_id"].isin(with_own)]
    if len(shared) and len(without):
        extra = without.merge(pd.DataFrame({"criterion_id": shared.index}), how="cross")
        pairs = pd.concat([pairs, extra], ignore_index=True)
    return pairs[["response_id", "criterion_id"]]


def option_value(options: list[dict], label: str) -> float:
    """The value of the option called ``label`` (NaN if there is none)."""
    for option in options or []:
        if option["label"] == label:
            return float(option["value"])
    return math.nan
