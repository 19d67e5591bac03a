"""Project guidelines (issue 12, point 4, the project part): Markdown instructions for annotators
in project.json (`"guidelines"`), on the project page for managers (audited), exported with the
bundle, and shown sanitized above the labeling page's rubric."""
import json

import pytest

from annotation.models import AuditEvent, Project
from grading.bundles import BundleError, bundle_import, gold_export
from tests.annotation.conftest import build_study, first_assignment
from tests.bundles import bundle_parts, write_bundle
from tests.roles import grant

GUIDE = "Judge **only** what the response says.\n\n<script>alert('x')</script>"


def test_project_json_carries_guidelines_and_refuses_a_non_string(db, tmp_path):
    parts = bundle_parts()
    parts["project"]["guidelines"] = GUIDE
    bundle_import(path=write_bundle(tmp_path / "ok", parts))
    project = Project.objects.get(slug=parts["project"]["slug"])
    assert project.guidelines == GUIDE
    gold_export(project=project, out_dir=tmp_path / "out")
    assert json.loads((tmp_path / "out" / "project.json").read_text())["guidelines"] == GUIDE
    parts["project"]["guidelines"] = ["not", "text"]
    with pytest.raises(BundleError, match="guidelines: must be a string"):
        bundle_import(path=write_bundle(tmp_path / "bad", parts))
    assert Project.objects.get(pk=project.pk).guidelines == GUIDE


def test_a_manager_sets_them_on_the_project_page_and_it_is_audited(db, client, django_user_model):
    study = build_study(slug="guided", n_cases=1, annotators=(("a1",),))
    boss = grant(django_user_model.objects.create_user("boss", password="pw"), study.project, "manager")
    client.force_login(boss)
    assert 'name="guidelines"' in client.get("/projects/guided/").content.decode()
    assert client.post("/projects/guided/guidelines/", {"guidelines": GUIDE}).status_code == 302
    assert Project.objects.get(slug="guided").guidelines == GUIDE
    event = AuditEvent.objects.filter(project=study.project, action="settings").last()
    assert event.after == {"guidelines": GUIDE} and event.actor == boss


def test_the_labeling_page_shows_them_sanitized(db, login_client):
    study = build_study(slug="shown", n_cases=1, annotators=(("a1",),))
    Project.objects.filter(pk=study.project.pk).update(guidelines=GUIDE)
    page = login_client("a1").get(f"/work/{first_assignment('a1').pk}/").content.decode()
    assert 'id="guidelines"' in page and "<strong>only</strong>" in page
    assert "<script>alert('x')</script>" not in page
    Project.objects.filter(pk=study.project.pk).update(guidelines="")
    assert 'id="guidelines"' not in login_client("a1").get(f"/work/{first_assignment('a1').pk}/").content.decode()
