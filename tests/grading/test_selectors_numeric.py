"""The numeric fast path of the selectors gives the frame the plain path gives (issue 26): on
PostgreSQL ``fetch_frame(numeric=True)`` reads rows through COPY, and ``label_rows`` of a whole
project or cohort reads them as numbers (role and verdict as codes, option labels apart). Checked
on the project with every decision kind (options, values, cannot assess, checkers, two cohorts)."""
import io

import pandas as pd
import pytest
from django.db import DataError, connection, transaction

from annotation.models import Cohort, Label, Project, Response
from bench.generate_bundle import generate_full_bundle
from grading.bundles import bundle_import
from grading.metrics.decisions import cohort_decide, samples_decide
from grading.models import Judge
from grading.selectors import ITEM, criterion_frame, fetch_frame, judgment_rows, label_rows
from grading.selectors.frames import _copy_out
from tests.grading.test_decision_consistency import every_kind  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif("connection.vendor != 'postgresql'")


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["response_id", "criterion_id", "rater"], kind="stable").reset_index(drop=True)


def test_whole_project_labels_read_as_numbers_equal_the_plain_read(every_kind):  # noqa: F811
    project = every_kind
    every_response = list(Response.objects.filter(project=project).values_list("pk", flat=True))
    numeric = label_rows(project=project)  # the whole project: the numeric read
    plain = label_rows(project=project, response_ids=every_response)  # restricted: the plain read
    assert len(numeric) == Label.objects.filter(project=project).count() > 0
    assert numeric["option"].notna().any() and numeric["value"].notna().any() and (numeric["role"] == "checker").any()
    for column in ("role", "verdict", "option"):  # object columns in both reads, None where missing
        assert numeric[column].dtype == object and plain[column].dtype == object
    assert numeric["verdict"].isna().any() and all(v is None for v in numeric["verdict"] if not isinstance(v, str))
    pd.testing.assert_frame_equal(_ordered(numeric), _ordered(plain))
    keys = [*ITEM, "cohort"]
    decided = [cohort_decide(rows, keys=keys).sort_values(keys).reset_index(drop=True) for rows in (numeric, plain)]
    pd.testing.assert_frame_equal(*decided)
    for cohort in Cohort.objects.filter(project=project):
        pd.testing.assert_frame_equal(_ordered(label_rows(project=project, cohort=cohort)),
                                      _ordered(plain[plain["cohort"] == cohort.pk]))


def test_copy_read_equals_the_cursor_read(every_kind):  # noqa: F811
    qs = Label.objects.filter(project=every_kind).values_list("pk", "response_id", "annotator_id", "value", "revision")
    columns = ["pk", "response_id", "rater", "value", "revision"]
    plain, copied = fetch_frame(qs, columns), fetch_frame(qs, columns, numeric=True)
    plain["value"] = plain["value"].astype(float)  # all-NULL floats come from the cursor as None
    pd.testing.assert_frame_equal(copied.sort_values("pk").reset_index(drop=True), plain.sort_values("pk").reset_index(drop=True))
    nothing = fetch_frame(qs.filter(pk__in=[]), columns, numeric=True)
    assert nothing.empty and list(nothing.columns) == columns


def test_many_responses_are_read_as_numbers_too(every_kind, monkeypatch):  # noqa: F811
    """A report's responses (``response_ids`` of many) take the numeric read; the same rows as the plain one."""
    from grading.selectors import decisions

    some = list(Response.objects.filter(project=every_kind).order_by("pk").values_list("pk", flat=True))[::2]
    plain = label_rows(project=every_kind, response_ids=some)
    monkeypatch.setattr(decisions, "NUMERIC_READ_MIN_RESPONSES", 1)
    monkeypatch.setattr(decisions, "_label_rows_numeric", wraps := _Spy(decisions._label_rows_numeric))
    numeric = label_rows(project=every_kind, response_ids=some)
    assert wraps.calls == 1 and set(numeric["response_id"]) == set(some)
    pd.testing.assert_frame_equal(_ordered(numeric), _ordered(plain))


class _Spy:
    def __init__(self, function):
        self.function, self.calls = function, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.function(*args, **kwargs)


@pytest.fixture
def binary_study(db, tmp_path):
    """One case of the full-scale bench study: binary criteria only, three judges (one with three
    samples, some invalid outputs), two cohorts with checkers."""
    generate_full_bundle(tmp_path / "bundle", scale=0.0004, seed=1)
    return Project.objects.get(slug=bundle_import(path=tmp_path / "bundle").project)


def test_judgments_of_binary_criteria_read_as_numbers_equal_the_plain_read(binary_study):
    criteria = criterion_frame(project=binary_study)
    judges = list(Judge.objects.filter(project=binary_study))
    every_response = list(Response.objects.filter(project=binary_study).values_list("pk", flat=True))
    numeric = judgment_rows(judges=judges, criteria=criteria)  # every response: the numeric read
    plain = judgment_rows(judges=judges, criteria=criteria, response_ids=every_response)  # 11 responses: plain
    assert len(numeric) == 11 * 30 * 5 and not numeric["valid"].all()
    for column in ("judge", "verdict", "option", "kind"):
        assert numeric[column].dtype == object and plain[column].dtype == object
    order = ["judge", "response_id", "criterion_id", "sample"]
    pd.testing.assert_frame_equal(numeric.sort_values(order).reset_index(drop=True),
                                  plain.sort_values(order).reset_index(drop=True))
    decided = [samples_decide(rows, keys=["judge", *ITEM]).sort_values(["judge", *ITEM]).reset_index(drop=True)
               for rows in (numeric, plain)]
    pd.testing.assert_frame_equal(*decided)
    pd.testing.assert_frame_equal(_ordered(label_rows(project=binary_study)),
                                  _ordered(label_rows(project=binary_study, response_ids=every_response)))


def test_rater_counts_from_the_label_rows_equal_those_counted_in_the_database(every_kind):  # noqa: F811
    """``label_rater_counts`` (agreement's annotators and checkers per model), counted from a
    cohort's label rows, equals a count of distinct final-label authors made by the database."""
    from django.db.models import Count

    from annotation.selectors import labels_final
    from grading.selectors import label_rater_counts, response_frame

    responses = response_frame(project=every_kind)
    some = sorted(responses.index)[::2]
    for cohort in Cohort.objects.filter(project=every_kind):
        rows = label_rows(project=every_kind, cohort=cohort)
        for ids in (None, some):
            counted = label_rater_counts(rows=rows, responses=responses if ids is None else responses.loc[ids])
            labels = labels_final(Label.objects.filter(cohort=cohort))
            labels = labels if ids is None else labels.filter(response_id__in=ids)
            expected = {(m, role): n for m, role, n in labels.order_by().values("response__model", "role")
                        .annotate(n=Count("annotator_id", distinct=True)).values_list("response__model", "role", "n")}
            assert counted.set_index(["model", "role"])["n"].to_dict() == expected != {}


# -- the COPY read itself (``frames._copy_out``) ---------------------------------------------------

def _read(statement: str, buffer=None) -> bytes:
    buffer = io.BytesIO() if buffer is None else buffer
    _copy_out(connection, statement, buffer)
    return buffer.getvalue()


def _answers() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 41 + 1")
        return cursor.fetchone()[0]


def test_the_copy_read_gives_every_row_as_csv(db):
    assert _read("COPY (SELECT n, n * 0.5, NULL::int FROM generate_series(1, 3) n) TO STDOUT WITH (FORMAT csv)") \
        == b"1,0.5,\n2,1.0,\n3,1.5,\n"
    assert _read("COPY (SELECT 1 WHERE false) TO STDOUT WITH (FORMAT csv)") == b""
    assert _answers() == 42


def test_the_copy_read_sees_its_transactions_own_rows(every_kind):  # noqa: F811 - the fixture
    with transaction.atomic():
        Label.objects.filter(project=every_kind).delete()  # not committed: only this transaction sees it
        assert _read(f"COPY (SELECT count(*) FROM annotation_label WHERE project_id = {every_kind.pk}) TO STDOUT") \
            == b"0\n"
        transaction.set_rollback(True)
    assert Label.objects.filter(project=every_kind).exists()


def test_a_failing_copy_raises_a_database_error_and_the_connection_goes_on(db):
    with pytest.raises(DataError, match="division by zero"), transaction.atomic():
        _read("COPY (SELECT 1 / (n - 3) FROM generate_series(1, 5) n) TO STDOUT")
    assert _answers() == 42


def test_a_copy_the_server_refuses_raises_and_the_connection_goes_on(db):
    from django.db import ProgrammingError

    with pytest.raises(ProgrammingError, match="no_such_table"), transaction.atomic():
        _read("COPY (SELECT * FROM no_such_table) TO STDOUT")
    assert _answers() == 42


def test_a_copy_cut_short_is_cancelled_and_the_connection_goes_on(db):
    """An error while the rows arrive (here the buffer's) stops the COPY on the server; the
    connection takes the next query once the transaction it aborted is rolled back."""
    class Full(io.BytesIO):
        def write(self, data):
            if self.tell() > 1000:
                raise RuntimeError("no room")
            return super().write(data)

    with pytest.raises(RuntimeError, match="no room"), transaction.atomic():
        _read("COPY (SELECT n FROM generate_series(1, 5000000) n) TO STDOUT", Full())
    assert _answers() == 42
