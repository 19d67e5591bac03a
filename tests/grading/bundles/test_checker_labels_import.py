"""Importing checker labels, which belong to (response, criterion, cohort) and not to the checker
who recorded them: a bundle with two for one item is refused, a re-import naming another checker
of the cohort changes the one label (with history), and an unchanged re-import writes nothing."""
import pytest
from django.contrib.auth import get_user_model

from annotation.models import Case, Cohort, CohortMembership, Criterion, ImportBatch, Label, LabelHistory, Project, Response, RubricVersion
from grading.bundles import BundleError, bundle_import
from grading.models import Judge, Judgment
from tests.bundles import bundle_parts, write_bundle

MODELS = (Project, Case, Criterion, RubricVersion, Response, Cohort, CohortMembership, Label, LabelHistory, Judge, Judgment,
          ImportBatch)


def counts():
    return {m.__name__: m.objects.count() for m in MODELS} | {"users": get_user_model().objects.count()}


def checker_line(parts) -> int:
    """The 0-based index of the mini bundle's one checker label (chk1 on r1 / c1-abx, group-1)."""
    return next(i for i, row in enumerate(parts["labels"]) if row.get("role") == "checker")


def checker_labels():
    return Label.objects.filter(response__external_id="r1", criterion__external_id="c1-abx", cohort__name="group-1",
                                role="checker")


@pytest.mark.django_db
class CheckerLabelImportTests:
    def test_two_checkers_labelling_one_item_of_a_cohort_is_refused(self, tmp_path):
        parts = bundle_parts()
        second = {**parts["labels"][checker_line(parts)], "annotator": "chk1b", "verdict": "met"}
        parts["labels"].append(second)
        line = len(parts["labels"])
        before = counts()
        with pytest.raises(BundleError) as info:
            bundle_import(path=write_bundle(tmp_path / "bad", parts))
        error = info.value
        assert (error.file, error.line, error.field) == ("labels.jsonl", line, "annotator")
        assert str(error).startswith(f"labels.jsonl line {line}: ")
        assert "(r1, c1-abx)" in error.message and "'group-1'" in error.message
        assert counts() == before, "a rejected import must write nothing"
        assert not get_user_model().objects.filter(username="chk1b").exists()

    def test_two_checkers_refused_on_reimport_too(self, tmp_path, mini_project):
        parts = bundle_parts()
        parts["labels"].append({**parts["labels"][checker_line(parts)], "annotator": "chk1b"})
        before = counts()
        with pytest.raises(BundleError) as info:
            bundle_import(path=write_bundle(tmp_path / "bad", parts))
        assert (info.value.line, info.value.field) == (len(parts["labels"]), "annotator")
        assert counts() == before
        assert list(checker_labels().values_list("annotator__username", "verdict")) == [("chk1", "not_met")]

    def test_reimport_by_another_checker_of_the_cohort_updates_the_one_checker_label(self, tmp_path, mini_project):
        label = checker_labels().get()
        history_before = list(label.history.values_list("pk", flat=True))
        parts = bundle_parts()
        parts["labels"][checker_line(parts)]["annotator"] = "chk1b"
        result = bundle_import(path=write_bundle(tmp_path / "again", parts))

        assert result.labels == 1
        chk1b = get_user_model().objects.get(username="chk1b")
        membership = CohortMembership.objects.get(project=mini_project, user=chk1b)
        assert (membership.cohort.name, membership.role) == ("group-1", "checker")
        assert list(checker_labels().values_list("pk", "annotator__username", "verdict")) == [(label.pk, "chk1b", "not_met")]
        assert Label.objects.filter(annotator=chk1b).count() == 1
        new_history = label.history.exclude(pk__in=history_before)
        assert list(new_history.values_list("action", "changed_by_id")) == [("import", None)]
        assert new_history.get().project_id == mini_project.pk

    def test_reimport_of_the_unchanged_bundle_writes_nothing(self, mini_bundle, mini_project):
        label = checker_labels().get()
        before = counts()
        result = bundle_import(path=mini_bundle)
        assert (result.cases, result.criteria, result.responses, result.labels, result.judgments) == (0, 0, 0, 0, 0)
        assert counts() == before
        fresh = checker_labels().get()
        assert (fresh.pk, fresh.annotator.username, fresh.revision) == (label.pk, "chk1", label.revision)
