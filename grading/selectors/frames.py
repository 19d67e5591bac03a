"""What reports join decisions with: responses (source model, author kind, text length, the
rubric version they are judged against), cases (difficulty, register, task themes,
specialties) and criteria (kind, weight, options and their value range, rubric version),
each one query into a DataFrame indexed by primary key; and ``fetch_frame``, the way every
selector reads rows straight from the cursor.

Case and criterion texts are loaded only on request (``with_text=True``): they are needed
to align two separately imported studies and nowhere else.
"""
import io
import json
import select

import pandas as pd
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import IntegerField, Value
from django.db.models.functions import Length

from annotation.models import Case, Criterion, Project, Response


def fetch_frame(queryset, columns: list[str], *, numeric: bool = False) -> pd.DataFrame:
    """Rows of a plain ``values_list`` straight from the cursor (the ORM's per-row work
    dominates at a million labels). A filter that can match nothing (an empty ``__in``: a project
    without judges, an unknown response) gives no rows, as it does through the ORM.

    ``numeric``: every column is a number (integer columns without NULL). On PostgreSQL the rows
    then travel as one ``COPY ... TO STDOUT`` in CSV, parsed by pandas' C reader into numpy arrays
    (``_copy_frame``): at millions of rows, a Python tuple and objects per row is most of the time
    and of the memory. The frame is the same: int64 columns, float64 with NaN for NULL."""
    if not queryset.query.order_by:
        # The models' Meta ordering joins and sorts several tables: a 20x slowdown on PostgreSQL.
        queryset = queryset.order_by()
    try:
        sql, params = queryset.query.sql_with_params()
    except EmptyResultSet:  # the ORM's own iterator answers this with no rows without asking the database
        return pd.DataFrame.from_records([], columns=columns)
    connection = connections[queryset.db]
    if numeric and connection.vendor == "postgresql":
        return _copy_frame(connection, sql, params, columns)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return pd.DataFrame.from_records(cursor.fetchall(), columns=columns)


def _copy_out(connection, statement: str, buffer) -> None:
    """Write what ``statement`` (a ``COPY ... TO STDOUT``) sends into ``buffer``, taking each row
    from libpq as it comes (``PQgetCopyData``). psycopg's ``Copy`` iterator spends about a
    microsecond of Python per row on its wait loop: at the millions of rows of a full-scale report
    that was more than the server took to send them; this loop takes less than half of it. An error is
    raised as Django raises database errors, and the connection is left ready for the next query
    (a COPY cut short is cancelled and its rest read away)."""
    from psycopg import errors as pg_errors  # lazy: only PostgreSQL connections come here
    from psycopg.pq import ExecStatus  # lazy: as above

    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    encoding = connection.connection.info.encoding
    with connection.wrap_database_errors:
        pgconn.send_query(statement.encode(encoding))
        result = pgconn.get_result()
        if result is None or result.status != ExecStatus.COPY_OUT:
            _results_drain(pgconn)
            raise pg_errors.error_from_result(result, encoding=encoding) if result is not None else \
                pg_errors.InterfaceError("the COPY statement gave no result")
        take, write, socket = pgconn.get_copy_data, buffer.write, pgconn.socket
        try:
            while True:
                size, row = take(1)  # without blocking: the wait below lets other threads run meanwhile
                if size > 0:
                    write(row)
                elif size == 0:  # nothing arrived yet
                    select.select([socket], [], [])
                    pgconn.consume_input()
                else:  # -1: every row sent (-2, a failure, raises)
                    break
        except BaseException:  # interrupted: cancel the rest, so the connection takes the next query
            try:
                pgconn.get_cancel().cancel()
                while pgconn.get_copy_data(0)[0] >= 0:  # blocking: the server ends the COPY once cancelled
                    pass
                _results_drain(pgconn)
            except Exception:  # noqa: S110 - the connection is broken: Django discards it on the error raised below
                pass
            raise
        result = pgconn.get_result()
        _results_drain(pgconn)
        if result is None or result.status != ExecStatus.COMMAND_OK:
            raise pg_errors.error_from_result(result, encoding=encoding) if result is not None else \
                pg_errors.InterfaceError("the COPY statement did not end")


def _results_drain(pgconn) -> None:
    """Read the results left of a statement, so that the connection takes the next one."""
    while pgconn.get_result() is not None:
        pass


def _copy_frame(connection, sql: str, params, columns: list[str]) -> pd.DataFrame:
    """The numeric rows of ``sql`` through PostgreSQL's COPY, in CSV (NULL is an empty field)."""
    buffer = io.BytesIO()
    _copy_out(connection, f"COPY ({connection.ops.compose_sql(sql, params)}) TO STDOUT WITH (FORMAT csv)", buffer)
    if not buffer.tell():
        return pd.DataFrame.from_records([], columns=columns)
    buffer.seek(0)
    # pandas 3 reads back the shortest text PostgreSQL writes for a double as that same double
    return pd.read_csv(buffer, names=columns, header=None)


def response_frame(*, project: Project, response_ids=None, with_length: bool = True) -> pd.DataFrame:
    """One row per response (of ``response_ids`` only, when given): external_id, case_id, model,
    author_kind, position, length_chars and rubric_version_id (the rubric its case is judged against).
    ``with_length=False``: length_chars left empty (measuring every text is most of the read)."""
    qs = Response.objects.filter(project=project)
    if response_ids is not None:
        qs = qs.filter(pk__in=list(response_ids))
    length = Length("text") if with_length else Value(None, output_field=IntegerField())
    rows = (
        qs.order_by()
        .annotate(length_chars=length)
        .values_list("pk", "external_id", "case_id", "model", "author_kind", "position", "length_chars",
                     "case__rubric_version_id")
    )
    columns = ["response_id", "external_id", "case_id", "model", "author_kind", "position", "length_chars",
               "rubric_version_id"]
    frame = pd.DataFrame.from_records(list(rows), columns=columns).set_index("response_id")
    frame["rubric_version_id"] = frame["rubric_version_id"].astype("Int64")
    return frame


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


def case_metadata_lists(*, project: Project, key: str) -> dict[int, list[str]]:
    """Each case's metadata list ``key`` (a free key, e.g. HealthBench's ``example_tags``) by case
    id; a case without it has an empty list."""
    rows = Case.objects.filter(project=project).order_by().values_list("pk", "metadata")
    return {pk: _as_list((metadata or {}).get(key)) for pk, metadata in rows}


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


def criterion_frame(*, project: Project, with_text: bool = False, rubric_version_ids=None) -> pd.DataFrame:
    """One row per criterion (of the rubric versions ``rubric_version_ids`` only, when given):
    external_id, case_id (NaN = project-wide), position, kind, weight, options, rubric_version_id,
    tags, checklist_of (the trait a checklist item scores, "" otherwise), min_value, max_value,
    option_values (sorted applicable values), na_labels (labels flagged not-applicable) and
    ``criterion_text`` when ``with_text``."""
    fields = ["pk", "external_id", "case_id", "position", "kind", "weight", "options", "rubric_version_id", "tags",
              "checklist_of"]
    if with_text:
        fields.append("text")
    columns = ["criterion_id", "criterion_external_id", "case_id", "criterion_position", "kind", "weight", "options",
               "rubric_version_id", "tags", "checklist_of"]
    qs = Criterion.objects.filter(project=project)
    if rubric_version_ids is not None:
        qs = qs.filter(rubric_version_id__in=list(rubric_version_ids))
    raw = fetch_frame(qs.values_list(*fields), columns + (["criterion_text"] if with_text else []))
    options = [_json_list(o) for o in raw["options"].tolist()]
    empty: frozenset = frozenset()
    ranges = [option_range(o) if o else (0.0, 1.0) for o in options]
    raw["options"] = options
    raw["tags"] = [_json_list(t) for t in raw["tags"].tolist()]
    raw["min_value"] = [r[0] for r in ranges]
    raw["max_value"] = [r[1] for r in ranges]
    raw["option_values"] = [sorted({float(o["value"]) for o in opts if not o.get("na")}) if opts else [] for opts in options]
    raw["na_labels"] = [frozenset(o["label"] for o in opts if o.get("na")) if opts else empty for opts in options]
    raw["weight"] = raw["weight"].astype(float)
    frame = raw.set_index("criterion_id")
    frame["case_id"] = frame["case_id"].astype("Int64")
    return frame


def applicable_pairs(*, responses: pd.DataFrame, criteria: pd.DataFrame) -> pd.DataFrame:
    """Every (response_id, criterion_id) of the rubric each response is judged against (the
    criteria of its case's rubric version)."""
    left = responses[["rubric_version_id"]].dropna().reset_index()
    right = criteria[["rubric_version_id"]].reset_index()
    left["rubric_version_id"] = left["rubric_version_id"].astype("int64")
    right["rubric_version_id"] = right["rubric_version_id"].astype("int64")
    return left.merge(right, on="rubric_version_id", how="inner")[["response_id", "criterion_id"]]


def response_links(*, project: Project, external_ids) -> dict[str, int]:
    """{public response id: database id} of the project's responses named (a page's links)."""
    ids = list(dict.fromkeys(external_ids))
    if not ids:
        return {}
    return dict(Response.objects.filter(project=project, external_id__in=ids).values_list("external_id", "pk"))


def project_model_names(*, project: Project) -> list[str]:
    """The project's response models, by name (choosers)."""
    return list(Response.objects.filter(project=project).order_by("model").values_list("model", flat=True).distinct())
