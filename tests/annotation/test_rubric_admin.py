"""Rubric versions cannot be bypassed: criteria are read-only in the admin, the "new version"
form freezes an edited rubric through the one freezing service, old labels keep the version
they were made against, cases point at their current rubric, and every stored hash verifies
against an independent sha256 of the canonical JSON."""
import hashlib
import json

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Case, Criterion, Label, Response, RubricVersion
from grading.selectors import project_fingerprint


def independent_hash(content) -> str:
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stored_criterion(criterion: Criterion) -> dict:
    """A criterion row in canonical form, written out here rather than with the app's helper."""
    return {"criterion_id": criterion.external_id, "text": criterion.text, "kind": criterion.kind,
            "weight": float(criterion.weight), "min_evidence": criterion.min_evidence, "tags": list(criterion.tags),
            "options": [{"label": o["label"], "value": float(o["value"]), "na": bool(o.get("na", False))}
                        for o in criterion.options]}


def assert_every_hash_verifies(project):
    versions = list(RubricVersion.objects.filter(project=project))
    assert versions
    for version in versions:
        assert version.content_hash == independent_hash(version.content), version
        if version.is_current:
            rows = Criterion.objects.filter(rubric_version=version).order_by("position")
            assert [stored_criterion(c) for c in rows] == version.content, version


@pytest.fixture
def admin_client(client, mini_project):
    user = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(user)
    return client


def _new_version_url(version) -> str:
    return f"/admin/annotation/rubricversion/{version.pk}/new-version/"


def test_criteria_are_read_only_in_the_admin(admin_client, mini_project):
    criterion = Criterion.objects.get(external_id="c1-ecg")
    page = admin_client.get(f"/admin/annotation/criterion/{criterion.pk}/change/").content.decode()
    assert "Edit in a new version of its rubric" in page and 'name="_save"' not in page
    before = criterion.text
    admin_client.post(f"/admin/annotation/criterion/{criterion.pk}/change/", {"text": "Edited in place", "project": mini_project.pk})
    criterion.refresh_from_db()
    assert criterion.text == before
    assert admin_client.get("/admin/annotation/criterion/add/").status_code == 403
    assert_every_hash_verifies(mini_project)


def test_an_admin_edit_makes_a_new_version_and_old_labels_keep_theirs(admin_client, mini_project):
    old = RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True)
    old_labels = set(Label.objects.filter(criterion__external_id="c1-ecg").values_list("pk", flat=True))
    assert old_labels and set(Label.objects.filter(pk__in=old_labels).values_list("rubric_version_id", flat=True)) == {old.pk}
    printed = project_fingerprint(project=mini_project)
    page = admin_client.get(_new_version_url(old)).content.decode()
    assert "Recommends an ECG" in page and "Freeze as a new version" in page
    edited = [dict(c) for c in old.content]
    edited[0]["text"] = "Recommends a 12-lead ECG within ten minutes"
    edited.append({"criterion_id": "c1-aspirin", "text": "Mentions aspirin unless allergic"})
    response = admin_client.post(_new_version_url(old), {"criteria": json.dumps(edited)})
    assert response.status_code == 302
    new = RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True)
    assert new.pk != old.pk and response["Location"].endswith(f"/rubricversion/{new.pk}/change/")
    old.refresh_from_db()
    assert not old.is_current and old.content[0]["text"] == "Recommends an ECG"  # the old version is unchanged
    ecg = Criterion.objects.get(external_id="c1-ecg")
    assert ecg.text.startswith("Recommends a 12-lead") and ecg.rubric_version_id == new.pk
    assert Criterion.objects.get(external_id="c1-aspirin").rubric_version_id == new.pk
    assert set(Label.objects.filter(pk__in=old_labels).values_list("rubric_version_id", flat=True)) == {old.pk}
    assert Case.objects.get(project=mini_project, external_id="c1").rubric_version_id == new.pk
    assert project_fingerprint(project=mini_project) != printed  # its reports go stale
    assert_every_hash_verifies(mini_project)


def test_a_project_rubric_version_moves_every_case_without_its_own(admin_client, mini_project):
    old = RubricVersion.objects.get(project=mini_project, case=None, is_current=True)
    edited = [dict(c) for c in old.content]
    edited[1]["weight"] = 2.0
    assert admin_client.post(_new_version_url(old), {"criteria": json.dumps(edited)}).status_code == 302
    new = RubricVersion.objects.get(project=mini_project, case=None, is_current=True)
    assert Case.objects.get(project=mini_project, external_id="c2").rubric_version_id == new.pk  # no own rubric
    assert Case.objects.get(project=mini_project, external_id="c1").rubric_version.case_id is not None  # its own
    assert_every_hash_verifies(mini_project)


@pytest.mark.parametrize("criteria, message", [
    ("[{not json", "not valid JSON"),
    ("[]", "non-empty list"),
    (json.dumps([{"criterion_id": "c1-ecg", "text": "x", "kind": "ordinal", "options": [{"label": "a", "value": 5}]}]),
     "[0].options: option values outside [0, 1] need at least two distinct values"),
    (json.dumps([{"criterion_id": "c1-ecg", "text": "x", "weight": "heavy"}]), "[0].weight"),
    (json.dumps([{"criterion_id": "c1-ecg", "text": "x"}, {"criterion_id": "c1-ecg", "text": "y"}]), "listed twice"),
    (json.dumps([{"criterion_id": "tone", "text": "taken from the project rubric"}]), "already belongs to the project rubric"),
])
def test_a_bad_new_version_is_refused_and_changes_nothing(admin_client, mini_project, criteria, message):
    old = RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True)
    before = list(RubricVersion.objects.order_by("pk").values_list("pk", "is_current"))
    texts = list(Criterion.objects.order_by("pk").values_list("text", "rubric_version_id"))
    response = admin_client.post(_new_version_url(old), {"criteria": criteria})
    assert response.status_code == 200 and message in response.content.decode()
    assert list(RubricVersion.objects.order_by("pk").values_list("pk", "is_current")) == before
    assert list(Criterion.objects.order_by("pk").values_list("text", "rubric_version_id")) == texts


def test_the_same_rubric_again_is_no_new_version(admin_client, mini_project):
    old = RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True)
    response = admin_client.post(_new_version_url(old), {"criteria": json.dumps(old.content)}, follow=True)
    assert "Nothing changed" in response.content.decode()
    assert RubricVersion.objects.filter(project=mini_project, case__external_id="c1").count() == 1


def test_only_the_projects_managers_make_versions(client, mini_project):
    from tests.roles import grant

    staff = get_user_model().objects.create_user("viewer", password="pw", is_staff=True)
    client.force_login(staff)
    old = RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True)
    assert client.post(_new_version_url(old), {"criteria": json.dumps(old.content)}).status_code == 404  # no role
    grant(staff, mini_project, "adjudicator")
    assert client.post(_new_version_url(old), {"criteria": json.dumps(old.content)}).status_code == 403
    grant(staff, mini_project, "manager")
    assert client.post(_new_version_url(old), {"criteria": json.dumps(old.content)}, follow=True).status_code == 200


def test_a_criterion_with_labels_cannot_be_left_out_one_without_can(admin_client, mini_project, tmp_path):
    from annotation.selectors import criteria_for_response
    from grading.bundles import gold_export

    old = RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True)
    without_labelled = [c for c in old.content if c["criterion_id"] != "c1-ecg"]
    response = admin_client.post(_new_version_url(old), {"criteria": json.dumps(without_labelled)})
    assert "criterion &#x27;c1-ecg&#x27; has labels or judgments" in response.content.decode()
    assert RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True).pk == old.pk

    added = [*old.content, {"criterion_id": "c1-new", "text": "A criterion nobody decided yet"}]
    assert admin_client.post(_new_version_url(old), {"criteria": json.dumps(added)}).status_code == 302
    middle = RubricVersion.objects.get(project=mini_project, case__external_id="c1", is_current=True)
    assert admin_client.post(_new_version_url(middle), {"criteria": json.dumps(old.content)}).status_code == 302
    r1 = Response.objects.get(external_id="r1")
    assert "c1-new" not in {c.external_id for c in criteria_for_response(response=r1)}  # left out: not in the rubric
    gold_export(project=mini_project, out_dir=tmp_path / "out")
    assert "c1-new" not in (tmp_path / "out" / "cases.jsonl").read_text()  # nor in the export
    assert_every_hash_verifies(mini_project)


def test_a_reimport_that_leaves_out_a_labelled_criterion_is_refused(mini_project, tmp_path):
    from grading.bundles import BundleError, bundle_import
    from tests.bundles import bundle_parts, write_bundle

    parts = bundle_parts()
    parts["cases"][0]["criteria"] = parts["cases"][0]["criteria"][1:]
    parts["labels"] = [row for row in parts["labels"] if row["criterion_id"] != "c1-ecg"]
    with pytest.raises(BundleError) as info:
        bundle_import(path=write_bundle(tmp_path / "fewer", parts))
    assert info.value.file == "cases.jsonl" and "c1-ecg" in str(info.value)
    assert Criterion.objects.get(external_id="c1-ecg").rubric_version.is_current
