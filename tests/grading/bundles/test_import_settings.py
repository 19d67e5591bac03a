"""Re-importing a bundle never changes a live project's settings behind anyone's back (issue 10,
point 6): without ``update_settings`` the differing settings are only reported; with it they are
applied, reported with old and new value and recorded in the audit trail; a setting the bundle does
not mention is never touched, and every setting is checked for its type."""
import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command

from annotation.models import AuditEvent, ImportBatch, Project
from grading.bundles import BundleError, bundle_import
from tests.annotation.conftest import MODELS, build_study, first_assignment
from tests.bundles import bundle_parts, write_bundle

ZERO_COUNTS = {"cases": 0, "criteria": 0, "responses": 0, "labels": 0, "judgments": 0}
SETTING_FIELDS = ("name", "description", "blind", "coverage_k", "overlap", "low_agreement_threshold",
                  "show_reference_answer", "hide_rater_names")


def settings_only(directory, project: dict):
    """A bundle holding nothing but project.json (empty JSON Lines files)."""
    return write_bundle(directory, {"project": project, "cases": [], "responses": [], "labels": [], "judgments": []})


def settings_of(slug: str) -> dict:
    return Project.objects.values(*SETTING_FIELDS).get(slug=slug)


def unblind_probe(directory):
    """The probe from issue 10: only slug, name and blind."""
    return settings_only(directory, {"slug": "mini", "name": "Mini study", "blind": False})


@pytest.mark.django_db
class KeepSettingsTests:
    def test_probe_changes_nothing_and_reports_what_differs(self, tmp_path, mini_project):
        before, batches = settings_of("mini"), ImportBatch.objects.count()
        result = bundle_import(path=unblind_probe(tmp_path / "probe"))
        assert result.as_dict() == {"project": "mini", **ZERO_COUNTS, "settings_ignored": {"blind": [True, False]}}
        assert result.settings_changed == {}
        assert settings_of("mini") == before
        assert before["blind"] is True and before["description"] == "Two cases, two models, two cohorts."
        assert before["coverage_k"] == 2
        assert ImportBatch.objects.count() == batches, "nothing was written, so no batch is left behind"
        assert not AuditEvent.objects.filter(action="settings").exists()

    def test_annotators_still_see_a_blind_project(self, tmp_path, client):
        study = build_study(slug="study")
        bundle = settings_only(tmp_path / "open", {"slug": "study", "name": "Study study", "blind": False,
                                                   "show_reference_answer": True})
        result = bundle_import(path=bundle)
        assert result.settings_ignored == {"blind": [True, False], "show_reference_answer": [False, True]}
        assignment = first_assignment("a1")
        client.force_login(study.users["a1"])

        def visible() -> tuple[bool, bool]:
            page = client.get(f"/work/{assignment.pk}/").content.decode()
            api = client.get(f"/api/assignments/{assignment.pk}/").json()
            return (any(m in page for m in MODELS), "model" in api["response"] or any(m in str(api) for m in MODELS))

        assert visible() == (False, False)
        bundle_import(path=bundle, update_settings=True)  # the explicit request does unblind
        assert visible() == (True, True)

    def test_identical_bundle_reports_nothing_and_writes_nothing(self, mini_bundle, mini_project):
        before, batches, audits = settings_of("mini"), ImportBatch.objects.count(), AuditEvent.objects.count()
        for update in (False, True):
            result = bundle_import(path=mini_bundle, update_settings=update)
            assert result.as_dict() == {"project": "mini", **ZERO_COUNTS}
            assert (result.settings_changed, result.settings_ignored) == ({}, {})
        assert settings_of("mini") == before
        assert ImportBatch.objects.count() == batches
        assert AuditEvent.objects.count() == audits  # the first import's events (its judges) only


@pytest.mark.django_db
class UpdateSettingsTests:
    def test_probe_with_update_settings_unblinds_and_records_it(self, tmp_path, mini_project):
        user = get_user_model().objects.create_user("importer")
        before, batches = settings_of("mini"), ImportBatch.objects.count()
        result = bundle_import(path=unblind_probe(tmp_path / "probe"), user=user, update_settings=True)
        assert result.as_dict() == {"project": "mini", **ZERO_COUNTS, "settings_changed": {"blind": [True, False]}}
        assert settings_of("mini") == before | {"blind": False}  # description and coverage_k untouched
        event = AuditEvent.objects.get(action="settings")
        assert (event.project, event.actor, event.target) == (mini_project, user, "mini")
        assert (event.before, event.after, event.note) == ({"blind": True}, {"blind": False}, "probe")
        assert ImportBatch.objects.count() == batches + 1, "a settings change is something written"

    def test_every_mentioned_setting_is_applied_and_reported(self, tmp_path, mini_project):
        bundle = settings_only(tmp_path / "all", {
            "slug": "mini", "name": "Mini study, renamed", "overlap": 2, "low_agreement_threshold": 0.5,
            "show_reference_answer": True, "hide_rater_names": True, "coverage_k": None,
        })
        result = bundle_import(path=bundle, update_settings=True)
        assert result.settings_changed == {
            "name": ["Mini study", "Mini study, renamed"], "coverage_k": [2, None], "overlap": [1, 2],
            "low_agreement_threshold": [0.6, 0.5], "show_reference_answer": [False, True],
            "hide_rater_names": [False, True],
        }
        assert json.loads(json.dumps(result.as_dict())) == result.as_dict()
        project = Project.objects.get(slug="mini")
        assert (project.name, project.coverage_k, project.overlap, project.hide_rater_names) == (
            "Mini study, renamed", None, 2, True)
        assert (project.blind, project.description) == (True, "Two cases, two models, two cohorts.")

    def test_a_bad_line_later_in_the_bundle_rolls_the_settings_back(self, tmp_path, mini_project):
        before, audits = settings_of("mini"), AuditEvent.objects.count()
        parts = bundle_parts()
        parts["project"]["blind"] = False
        parts["labels"][0]["verdict"] = "maybe"
        with pytest.raises(BundleError, match="labels.jsonl line 1"):
            bundle_import(path=write_bundle(tmp_path / "bad", parts), update_settings=True)
        assert settings_of("mini") == before
        assert AuditEvent.objects.count() == audits


WRONG_TYPES = [
    ("show_reference_answer", "false", "true or false"),
    ("blind", 1, "true or false"),
    ("coverage_k", "10", "a whole number from 0 to 32767"),
    ("overlap", 0, "at least 1"),
    ("low_agreement_threshold", 7, "a number from 0 to 1"),
    ("hide_rater_names", "yes", "true or false"),
    ("name", 5, "a string"),
]


@pytest.mark.django_db
class WrongTypeTests:
    @pytest.mark.parametrize("field,value,wanted", WRONG_TYPES)
    def test_refused_for_a_new_project(self, tmp_path, field, value, wanted):
        parts = bundle_parts()
        parts["project"][field] = value
        with pytest.raises(BundleError) as info:
            bundle_import(path=write_bundle(tmp_path / "bad", parts))
        assert (info.value.file, info.value.field, info.value.line) == ("project.json", field, None)
        assert str(info.value).startswith(f"project.json: {field}: must be {wanted}")
        assert not Project.objects.exists() and not ImportBatch.objects.exists()

    @pytest.mark.parametrize("field,value,wanted", WRONG_TYPES)
    def test_refused_for_an_existing_project_even_with_update_settings(self, tmp_path, mini_project, field, value,
                                                                       wanted):
        before, batches, audits = settings_of("mini"), ImportBatch.objects.count(), AuditEvent.objects.count()
        project = {"slug": "mini", "name": "Mini study", "blind": False, field: value}
        with pytest.raises(BundleError, match=f"^project.json: {field}: must be {wanted}") as info:
            bundle_import(path=settings_only(tmp_path / "bad", project), update_settings=True)
        assert info.value.field == field
        assert settings_of("mini") == before
        assert ImportBatch.objects.count() == batches and AuditEvent.objects.count() == audits

    def test_empty_name_is_refused(self, tmp_path):
        parts = bundle_parts()
        parts["project"]["name"] = " "
        with pytest.raises(BundleError, match="^project.json: field 'name' must not be empty$"):
            bundle_import(path=write_bundle(tmp_path / "bad", parts))

    def test_a_reserved_slug_is_refused(self, tmp_path):
        parts = bundle_parts()
        parts["project"]["slug"] = "import"  # /projects/import/ is the import page
        with pytest.raises(BundleError, match="^project.json: slug 'import' is reserved"):
            bundle_import(path=write_bundle(tmp_path / "bad", parts))
        with pytest.raises(ValidationError, match="reserved"):
            Project(slug="import", name="x").full_clean()

    def test_new_project_takes_the_bundle_settings(self, tmp_path):
        parts = bundle_parts()
        parts["project"].update(slug="fresh", hide_rater_names=True, low_agreement_threshold=1, overlap=3)
        result = bundle_import(path=write_bundle(tmp_path / "fresh", parts))
        assert (result.settings_changed, result.settings_ignored) == ({}, {})
        assert settings_of("fresh") == {
            "name": "Mini study", "description": "Two cases, two models, two cohorts.", "blind": True, "coverage_k": 2,
            "overlap": 3, "low_agreement_threshold": 1.0, "show_reference_answer": False, "hide_rater_names": True,
        }


@pytest.mark.django_db
class CommandTests:
    def run(self, *args) -> dict:
        out = StringIO()
        call_command("import_bundle", *args, "--json", stdout=out)
        return json.loads(out.getvalue())

    def test_json_without_and_with_update_settings(self, tmp_path, mini_project):
        bundle = str(unblind_probe(tmp_path / "probe"))
        assert self.run(bundle) == {"project": "mini", **ZERO_COUNTS, "settings_ignored": {"blind": [True, False]}}
        assert Project.objects.get(slug="mini").blind is True
        assert self.run(bundle, "--update-settings") == {
            "project": "mini", **ZERO_COUNTS, "settings_changed": {"blind": [True, False]},
        }
        assert Project.objects.get(slug="mini").blind is False
        assert AuditEvent.objects.get(action="settings").actor is None
        assert self.run(bundle, "--update-settings") == {"project": "mini", **ZERO_COUNTS}

    def test_text_output_names_the_settings(self, tmp_path, mini_project):
        out = StringIO()
        call_command("import_bundle", str(unblind_probe(tmp_path / "probe")), stdout=out)
        assert "Settings left as they are (--update-settings applies them): blind True (bundle: False)" in out.getvalue()
        out = StringIO()
        call_command("import_bundle", str(unblind_probe(tmp_path / "probe")), "--update-settings", stdout=out)
        assert "Settings changed: blind True -> False" in out.getvalue()


QUALITY = {"check_rate": 0.2, "check_alert_threshold": 0.8, "check_min_items": 5, "check_window": 12,
           "check_feedback": True}


def quality_of(slug: str) -> dict:
    return Project.objects.values(*QUALITY).get(slug=slug)


def test_the_annotator_quality_settings_travel_in_project_json(mini_project, tmp_path):
    """An exported project brings its check-item settings back on import; a project that never changed
    them says nothing of them."""
    from grading.bundles import gold_export

    gold_export(project=mini_project, out_dir=tmp_path / "plain")
    assert not set(QUALITY) & set(json.loads((tmp_path / "plain" / "project.json").read_text()))
    Project.objects.filter(pk=mini_project.pk).update(**QUALITY)
    gold_export(project=Project.objects.get(pk=mini_project.pk), out_dir=tmp_path / "checked")
    spec = json.loads((tmp_path / "checked" / "project.json").read_text())
    assert {name: spec[name] for name in QUALITY} == QUALITY
    spec["slug"] = "mini-again"
    (tmp_path / "checked" / "project.json").write_text(json.dumps(spec))
    bundle_import(path=tmp_path / "checked")
    assert quality_of("mini-again") == QUALITY


def test_quality_settings_of_a_live_project_change_only_when_asked_and_are_audited(mini_project, tmp_path):
    bundle = settings_only(tmp_path / "q", {"slug": "mini", "name": "Mini study", "check_rate": 0.25})
    before = quality_of("mini")
    assert bundle_import(path=bundle).settings_ignored == {"check_rate": [before["check_rate"], 0.25]}
    assert quality_of("mini") == before
    result = bundle_import(path=bundle, update_settings=True)
    assert result.settings_changed == {"check_rate": [before["check_rate"], 0.25]} and quality_of("mini")["check_rate"] == 0.25
    assert AuditEvent.objects.filter(action="settings", after={"check_rate": 0.25}).exists()


@pytest.mark.parametrize("field, value, words", [
    ("check_rate", 0.9, "check_rate: check-item rate must be from 0 to 0.5"),
    ("check_window", 2.5, "check_window: rolling window must be a whole number"),
    ("check_feedback", "yes", "check_feedback: annotator feedback must be true or false"),
    ("check_min_items", 0, "check_min_items: minimum check items must be from 1 to 10000"),
])
def test_a_bad_quality_setting_is_refused_naming_it_and_changes_nothing(mini_project, tmp_path, field, value, words):
    bundle = settings_only(tmp_path / "bad", {"slug": "mini", "name": "Mini study", field: value})
    before = quality_of("mini")
    with pytest.raises(BundleError) as refused:
        bundle_import(path=bundle, update_settings=True)
    assert words in str(refused.value) and "project.json" in str(refused.value)
    assert quality_of("mini") == before
