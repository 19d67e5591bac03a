"""Rubric version hashing: same content → same hash, an edit → a new version, and labels keep
pointing at the version they were made against."""
import hashlib
import json

import pytest

from annotation.models import Criterion, Label, RubricVersion
from annotation.rubrics import rubric_freeze, rubric_hash
from grading.bundles import bundle_import
from tests.bundles import bundle_parts, write_bundle

RUBRIC = [
    {"criterion_id": "a", "text": "Recommends an ECG", "weight": 2},
    {"criterion_id": "b", "text": "Tone", "kind": "ordinal", "options": [{"label": "bad", "value": 0}, {"label": "good", "value": 1}]},
]


class RubricHashTests:
    def test_hash_is_sha256_of_canonical_json(self):
        canonical = [
            {"criterion_id": "a", "kind": "binary", "min_evidence": 0, "options": [], "tags": [], "text": "Recommends an ECG",
             "weight": 2.0},
            {"criterion_id": "b", "kind": "ordinal", "min_evidence": 0,
             "options": [{"label": "bad", "na": False, "value": 0.0}, {"label": "good", "na": False, "value": 1.0}],
             "tags": [], "text": "Tone", "weight": 1.0},
        ]
        expected = hashlib.sha256(json.dumps(canonical, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        assert rubric_hash(RUBRIC) == expected

    def test_same_content_in_another_spelling_hashes_the_same(self):
        respelled = [dict(reversed(list(c.items()))) for c in RUBRIC]
        respelled[0]["weight"] = 2  # int vs float
        respelled[0]["kind"] = "binary"  # explicit default
        assert rubric_hash(respelled) == rubric_hash(RUBRIC)

    def test_any_edit_changes_the_hash(self):
        for change in ({"text": "Recommends an ECG."}, {"weight": 3}, {"min_evidence": 1}, {"tags": ["x"]}):
            edited = [dict(RUBRIC[0], **change), RUBRIC[1]]
            assert rubric_hash(edited) != rubric_hash(RUBRIC), change
        assert rubric_hash(list(reversed(RUBRIC))) != rubric_hash(RUBRIC)


@pytest.mark.django_db
class RubricVersionTests:
    def test_freezing_the_same_rubric_keeps_the_version(self, mini_project):
        version = RubricVersion.objects.get(project=mini_project, case=None)
        specs = bundle_parts()["project"]["rubric"]
        again, changed = rubric_freeze(project=mini_project, case=None, specs=specs)
        assert (again.pk, changed) == (version.pk, False)
        assert RubricVersion.objects.filter(project=mini_project).count() == 2

    def test_edited_rubric_gets_a_new_version_and_old_labels_keep_the_old(self, tmp_path, mini_project):
        old_version = RubricVersion.objects.get(project=mini_project, case__external_id="c1")
        old_labels = set(Label.objects.filter(criterion__case__external_id="c1").values_list("pk", flat=True))
        parts = bundle_parts()
        parts["cases"][0]["criteria"][0]["text"] = "Recommends a 12-lead ECG within 10 minutes"
        result = bundle_import(path=write_bundle(tmp_path / "v2", parts))
        assert result.criteria == 3 and result.labels == 0
        new_version = RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True)
        assert new_version.pk != old_version.pk and new_version.content_hash != old_version.content_hash
        old_version.refresh_from_db()
        assert not old_version.is_current
        criterion = Criterion.objects.get(external_id="c1-ecg")
        assert criterion.text.startswith("Recommends a 12-lead") and criterion.rubric_version_id == new_version.pk
        assert set(Label.objects.filter(rubric_version=old_version).values_list("pk", flat=True)) == old_labels
        # The project rubric did not change, so its version did not either.
        assert RubricVersion.objects.filter(project=mini_project, case=None).count() == 1

    def test_going_back_to_an_earlier_rubric_revives_its_version(self, tmp_path, mini_project):
        original = RubricVersion.objects.get(project=mini_project, case__external_id="c1")
        parts = bundle_parts()
        parts["cases"][0]["criteria"][2]["weight"] = -3
        bundle_import(path=write_bundle(tmp_path / "v2", parts))
        bundle_import(path=write_bundle(tmp_path / "v3", bundle_parts()))
        current = RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True)
        assert current.pk == original.pk
        assert RubricVersion.objects.filter(project=mini_project, case__external_id="c1").count() == 2


def test_a_number_beyond_a_double_is_a_field_error_not_an_overflow():
    """Issue 27: a weight such as 10**400 (json.loads reads it as an int) is named, not an OverflowError."""
    from annotation.rubrics import rubric_specs_clean
    from annotation.specs import FieldError

    with pytest.raises(FieldError) as info:
        rubric_specs_clean([{"criterion_id": "a", "text": "Recommends an ECG", "weight": 10**400}])
    assert (info.value.field, info.value.message) == ("[0].weight", "field '[0].weight' must be a number")
