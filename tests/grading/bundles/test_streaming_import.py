"""The import writes labels and judgments while it reads them (fastinsert.RowWriter): users,
memberships and judges first named in the middle of a file are created on the way, a bad line
after rows were already sent takes everything back, and criteria that share a kind and options
(but not the option values) are never confused by the validation memo."""
import pytest
from django.contrib.auth import get_user_model

from annotation.models import CohortMembership, ImportBatch, Label, Project
from grading.bundles import BundleError, bundle_import
from grading.models import Judge, Judgment
from tests.bundles import bundle_parts, write_bundle


def _late_names(parts):
    """Append a new annotator, a new checker role and a new judge after the existing lines."""
    parts["labels"] += [
        {"response_id": "r2", "criterion_id": "c1-ecg", "cohort": "group-2", "annotator": "late-annotator", "verdict": "met"},
        {"response_id": "r2", "criterion_id": "c1-call", "cohort": "group-2", "annotator": "late-annotator", "verdict": "not_met"},
        {"response_id": "r3", "criterion_id": "tone", "cohort": "group-2", "annotator": "late-annotator", "option": "good"},
    ]
    parts["judgments"] += [
        {"response_id": "r1", "criterion_id": "c1-call", "judge": "late-judge", "judge_model": "model-z", "verdict": "met"},
        {"response_id": "r2", "criterion_id": "c1-call", "judge": "late-judge", "judge_model": "model-z", "verdict": "not_met"},
        {"response_id": "r3", "criterion_id": "length", "judge": "judge-a", "judge_model": "gpt-x",
         "condition": "anonymized", "option": "short"},
    ]
    return parts


@pytest.mark.django_db
def test_users_memberships_and_judges_named_mid_file_are_created(tmp_path):
    parts = _late_names(bundle_parts())
    result = bundle_import(path=write_bundle(tmp_path / "b", parts))
    assert (result.labels, result.judgments) == (len(parts["labels"]), len(parts["judgments"]))
    late = get_user_model().objects.get(username="late-annotator")
    membership = CohortMembership.objects.get(user=late, project__slug="mini")
    assert (membership.cohort.name, membership.role) == ("group-2", "annotator")
    assert Label.objects.filter(annotator=late).count() == 3
    assert Label.objects.get(annotator=late, criterion__external_id="tone").value == 1.0
    judge = Judge.objects.get(name="late-judge", project__slug="mini")
    assert (judge.backend, judge.model, judge.condition) == (Judge.REPLAY, "model-z", Judge.ANONYMIZED)
    assert sorted(Judgment.objects.filter(judge=judge).values_list("verdict", flat=True)) == ["met", "not_met"]
    assert Judgment.objects.get(judge__name="judge-a", criterion__external_id="length").option_label == "short"


@pytest.mark.django_db
def test_a_bad_line_after_streamed_rows_and_new_names_leaves_nothing(tmp_path):
    parts = _late_names(bundle_parts())
    parts["judgments"].append({"response_id": "r1", "criterion_id": "no-such-criterion", "judge": "late-judge", "verdict": "met"})
    users_before = set(get_user_model().objects.values_list("username", flat=True))
    with pytest.raises(BundleError) as info:
        bundle_import(path=write_bundle(tmp_path / "b", parts))
    assert str(info.value) == (
        f"judgments.jsonl line {len(parts['judgments'])}: unknown criterion_id 'no-such-criterion'"
    )
    assert not Project.objects.exists() and not Label.objects.exists() and not Judgment.objects.exists()
    assert not Judge.objects.exists() and not ImportBatch.objects.exists() and not CohortMembership.objects.exists()
    assert set(get_user_model().objects.values_list("username", flat=True)) == users_before


@pytest.mark.django_db
def test_same_options_with_other_values_are_validated_per_criterion(tmp_path):
    parts = bundle_parts()
    parts["project"]["rubric"].append(
        {"criterion_id": "tone-strict", "text": "Tone, strictly", "kind": "ordinal",
         "options": [{"label": "poor", "value": 0}, {"label": "ok", "value": 0.2}, {"label": "good", "value": 0.4},
                     {"label": "n/a", "value": 0, "na": True}]},
    )
    parts["labels"] += [
        {"response_id": "r3", "criterion_id": "tone", "cohort": "group-2", "annotator": "rater-x", "option": "ok"},
        {"response_id": "r3", "criterion_id": "tone-strict", "cohort": "group-2", "annotator": "rater-x", "option": "ok"},
    ]
    parts["judgments"].append({"response_id": "r3", "criterion_id": "tone-strict", "judge": "judge-a",
                               "condition": "anonymized", "judge_model": "gpt-x", "value": 0.4})
    bundle_import(path=write_bundle(tmp_path / "b", parts))
    values = dict(Label.objects.filter(annotator__username="rater-x").values_list("criterion__external_id", "value"))
    assert values == {"tone": 0.5, "tone-strict": 0.2}
    parts["judgments"][-1]["value"] = 0.75  # inside tone's range (0..1), outside tone-strict's (0..0.4)
    parts["project"]["slug"] = "mini-2"
    with pytest.raises(BundleError, match=r"judgments.jsonl line 4: value 0.75 is outside the option range 0.0..0.4"):
        bundle_import(path=write_bundle(tmp_path / "c", parts))
