"""Groups of themes and specialties set on the project page (issue 25, point 2): a manager, who may
not open the admin, edits the project's ``stratum_groups`` as JSON in the People and settings tab.
A good text is saved with an audit row and changes the coverage heatmaps; a bad one is refused with
a message naming what is wrong, nothing saved, and the text shown again to fix."""
import json

import pytest
from django.urls import reverse

from annotation.models import AuditEvent, Project
from grading.bundles import bundle_import
from tests.grading.reports.test_strata_heatmaps import GROUPS, strata_bundle
from tests.roles import grant

SAVED = {"task_themes": {"old": ["empathy"]}}


@pytest.fixture
def manager(client, db, tmp_path, django_user_model):
    bundle_import(path=strata_bundle(tmp_path / "s", groups=SAVED))
    project = Project.objects.get(slug="strata")
    client.force_login(grant(django_user_model.objects.create_user("boss", password="pw"), project, "manager"))
    return client


def _post(client, text: str):
    return client.post(reverse("project-stratum-groups-update", args=["strata"]), {"stratum_groups": text}, follow=True)


def test_a_manager_sees_the_form_with_the_saved_groups(manager):
    html = manager.get(reverse("project-detail", args=["strata"])).content.decode()
    assert 'id="project-stratum-groups"' in html and 'name="stratum_groups"' in html
    assert "&quot;old&quot;: [\n      &quot;empathy&quot;" in html  # the saved groups, indented, ready to edit


def test_good_groups_are_saved_audited_and_change_the_heatmaps(manager, django_user_model):
    response = _post(manager, json.dumps(GROUPS))
    assert response.redirect_chain[-1][0].endswith("/projects/strata/#project-stratum-groups")
    assert "Stratum groups saved." in response.content.decode()
    assert Project.objects.get(slug="strata").stratum_groups == GROUPS
    event = AuditEvent.objects.filter(project__slug="strata", action="settings").last()
    assert event.before == {"stratum_groups": SAVED} and event.after == {"stratum_groups": GROUPS}
    assert event.actor.username == "boss" and event.note == "project page"
    coverage = manager.get(reverse("report-coverage", args=["strata"]))
    cells = {(c["stratum"], c["model"]) for c in coverage.context["result"]["deviations"]["task_themes"]["cells"]}
    assert ("clinical", "m1") in cells and ("triage", "m1") not in cells
    assert "Stratum groups unchanged." in _post(manager, json.dumps(GROUPS)).content.decode()
    assert AuditEvent.objects.filter(project__slug="strata", action="settings").count() == 1  # no change, no row


def test_an_empty_text_clears_the_groups(manager):
    _post(manager, "  ")
    assert Project.objects.get(slug="strata").stratum_groups == {}


@pytest.mark.parametrize("text, message", [
    ('{"task_themes": {"a": ["triage"],}}', "stratum_groups: not valid JSON (Expecting property name enclosed in double "
                                            "quotes at line 1, column 34)"),
    ('["triage"]', "stratum_groups: must be an object"),
    ('{"difficulty": {"hard": ["high"]}}', "stratum_groups: &#x27;difficulty&#x27; cannot be grouped; use task_themes or "
                                          "specialties"),
    ('{"task_themes": {"a": ["triage"], "b": ["triage"]}}', "stratum_groups.task_themes: &#x27;triage&#x27; is in both "
                                                            "&#x27;a&#x27; and &#x27;b&#x27;"),
    ('{"specialties": {"kids": []}}', "stratum_groups.specialties.kids: must be a non-empty list"),
])
def test_bad_groups_are_refused_naming_what_is_wrong_and_nothing_is_saved(manager, text, message):
    html = _post(manager, text).content.decode()
    assert "Not saved: " + message in html
    assert Project.objects.get(slug="strata").stratum_groups == SAVED
    assert not AuditEvent.objects.filter(project__slug="strata", action="settings").exists()
    assert 'id="stratum-groups-rejected"' in html
    from django.utils.html import escape
    assert f">{escape(text)}</textarea>" in html  # what was typed comes back to be fixed
    again = manager.get(reverse("project-detail", args=["strata"])).content.decode()
    assert 'id="stratum-groups-rejected"' not in again and "&quot;old&quot;" in again  # once; then the saved groups


def test_only_managers_see_or_use_the_form(client, db, tmp_path, django_user_model):
    bundle_import(path=strata_bundle(tmp_path / "s", groups=SAVED))
    viewer = grant(django_user_model.objects.create_user("reader", password="pw"), Project.objects.get(slug="strata"), "viewer")
    client.force_login(viewer)
    assert 'name="stratum_groups"' not in client.get(reverse("project-detail", args=["strata"])).content.decode()
    refused = client.post(reverse("project-stratum-groups-update", args=["strata"]), {"stratum_groups": "{}"})
    assert refused.status_code == 403 and Project.objects.get(slug="strata").stratum_groups == SAVED


def test_the_coverage_page_points_managers_to_the_form(manager):
    Project.objects.filter(slug="strata").update(stratum_groups={})
    html = manager.get(reverse("report-coverage", args=["strata"])).content.decode()
    assert "admin" not in html.split('id="strata"')[1].split("</p>")[0]
    assert '/projects/strata/#project-stratum-groups">People and settings' in html
