"""A row read by a plain statement becomes the instance the ORM would build (evalsite.statements,
``model_from_row``): the same values, converted by the same converters on either database, the
columns not read deferred, and an unknown column refused."""
import pytest
from django.db import connection
from django.db.models import DEFERRED
from django.utils import timezone

from annotation.models import Assignment, Label
from evalsite.statements import model_from_row, statement_cursor


def _raw(model, pk, columns):
    quoted = ", ".join(connection.ops.quote_name(model._meta.get_field(c).column) for c in columns)
    with statement_cursor() as cursor:
        cursor.execute(f"SELECT {quoted} FROM {connection.ops.quote_name(model._meta.db_table)} WHERE id = %s", [pk])
        return cursor.fetchone()


def _attnames(model):
    return [f.attname for f in model._meta.concrete_fields]


def test_every_field_is_what_the_orm_reads(mini_project):
    label = Label.objects.filter(project=mini_project).first()
    assignment = Assignment.objects.create(project=mini_project, cohort_id=label.cohort_id, response_id=label.response_id,
                                           annotator_id=label.annotator_id, status="submitted", position=3)
    Assignment.objects.filter(pk=assignment.pk).update(is_check=True, submitted_at=timezone.now())
    Label.objects.filter(pk=label.pk).update(evidence=[{"quote": "ECG", "start": 3}])
    for model, pk in ((Assignment, assignment.pk), (Label, label.pk)):
        names = _attnames(model)
        mine = model_from_row(model, names, _raw(model, pk, names))
        theirs = model.objects.get(pk=pk)
        assert [getattr(mine, n) for n in names] == [getattr(theirs, n) for n in names], model.__name__
        assert mine._state.db == "default" and not mine._state.adding
    mine = model_from_row(Assignment, _attnames(Assignment), _raw(Assignment, assignment.pk, _attnames(Assignment)))
    assert mine.is_check is True
    assert timezone.is_aware(mine.submitted_at) and timezone.is_aware(mine.created_at)  # naive on SQLite unconverted
    assert model_from_row(Label, _attnames(Label), _raw(Label, label.pk, _attnames(Label))).evidence == [
        {"quote": "ECG", "start": 3}]  # decoded JSON


def test_columns_in_any_order_and_the_rest_deferred(mini_project):
    label = Label.objects.filter(project=mini_project).first()
    columns = ["verdict", "id", "revision"]
    mine = model_from_row(Label, columns, _raw(Label, label.pk, columns))
    assert (mine.pk, mine.verdict, mine.revision) == (label.pk, label.verdict, label.revision)
    assert mine.get_deferred_fields() == set(_attnames(Label)) - set(columns)


def _name(converter) -> str:
    return getattr(converter, "__func__", converter).__qualname__  # a decimal's is a new closure per lookup


def test_the_converters_are_the_compilers_for_every_field(db):
    """What the ORM's compiler converts each selected column with, a foreign key included (its
    target's type decides: a UUID key would stay a string with the key's own column)."""
    from django.apps import apps
    from django.db import connections

    for model in apps.get_models():
        names = _attnames(model)
        query = model.objects.all().query
        compiler = query.get_compiler("default")
        compiler.setup_query()
        theirs = {i: [_name(c) for c in converters] for i, (converters, _) in compiler.get_converters(
            [col for col, _, _ in compiler.select]).items()}
        model_from_row(model, names, [None] * len(names))  # builds and keeps the plan
        _, fields = connections["default"].__dict__["_evalsite_row_plans"][(model, tuple(names))]
        mine = {i: [_name(c) for c in converters] for i, (_, _, converters) in enumerate(fields) if converters}
        assert mine == theirs, model.__name__


def test_the_names_reach_from_db_in_field_order(mini_project, monkeypatch):
    label = Label.objects.filter(project=mini_project).first()
    seen = []
    monkeypatch.setattr(Label, "from_db", classmethod(lambda cls, db, names, values: seen.append((names, values))))
    model_from_row(Label, ["verdict", "id"], _raw(Label, label.pk, ["verdict", "id"]))
    names, values = seen[0]
    assert names == ["id", "verdict"]
    assert [v for v in values if v is not DEFERRED] == [label.pk, label.verdict]


def test_an_unknown_or_repeated_column_or_a_short_row_is_refused(db):
    with pytest.raises(ValueError, match=r"Label has no column\(s\) \['nonsense'\]"):
        model_from_row(Label, ["id", "nonsense"], [1, 2])
    with pytest.raises(ValueError, match="Label has a column named twice"):
        model_from_row(Label, ["id", "id"], [1, 1])
    with pytest.raises(ValueError, match="1 values for 2 columns of Label"):
        model_from_row(Label, ["id", "verdict"], [1])
