"""The project's audit trail (issue 15, point 6): assignments, reassignment, reopening, roles,
judges, rubric versions and adjudications each leave a row saying who, when, before and after;
managers read it on a page and download it as CSV, formula-looking text neutralized."""
import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.assignments import assignment_reassign, assignment_reopen, project_assign
from annotation.models import Assignment, AuditEvent, Cohort, CohortMembership, Criterion, Label, Project, Response, RubricVersion
from annotation.projects import project_role_set
from annotation.rubrics import rubric_version_new
from grading.adjudication.services import adjudication_record
from grading.judges.services import judge_save
from grading.models import Judge
from tests.roles import grant

User = get_user_model()


@pytest.fixture
def study(mini_project):
    manager = grant(User.objects.create_user("mgr"), mini_project, "manager")
    return mini_project, manager


def _trail(client, project, **query):
    return client.get(f"/projects/{project.slug}/audit/", query)


def test_every_kind_of_change_is_in_the_trail_with_its_author(study):
    project, manager = study
    cohort = Cohort.objects.filter(project=project).first()
    newcomer = User.objects.create_user("newcomer")
    CohortMembership.objects.create(project=project, cohort=cohort, user=newcomer, role=CohortMembership.ANNOTATOR)
    extra = Response.objects.create(project=project, case=Response.objects.filter(project=project).first().case,
                                    external_id="extra-response", model="model-z", text="Another answer.", position=99)
    created = project_assign(project=project, cohort_id=cohort.pk, overlap=1, method="round_robin", seed=None, by=manager)
    assert created
    mine = next(a for a in created if a.response_id == extra.pk)
    spare = next(u for u in CohortMembership.objects.filter(cohort=cohort, role=CohortMembership.ANNOTATOR)
                 .exclude(user_id=mine.annotator_id).values_list("user", flat=True))
    assignment_reassign(assignment=mine, annotator=User.objects.get(pk=spare), by=manager)
    submitted = Assignment.objects.filter(project=project).exclude(pk=mine.pk).first()
    Assignment.objects.filter(pk=submitted.pk).update(status=Assignment.SUBMITTED)  # handed in
    assignment_reopen(assignment=submitted, by=manager, reason="=HYPERLINK(\"http://evil\") check criterion 2")
    project_role_set(project=project, username="newcomer", role="viewer", by=manager)
    judge = Judge.objects.filter(project=project).first() or Judge(project=project, name="audited", backend="baseline")
    judge.temperature = 0.3
    judge_save(judge=judge, by=manager)
    version = RubricVersion.objects.filter(project=project, is_current=True, case__isnull=True).first() or \
        RubricVersion.objects.filter(project=project, is_current=True).first()
    content = [dict(c) for c in version.content]
    content[0]["text"] = content[0]["text"] + " (clarified)"
    rubric_version_new(version=version, specs=content, by=manager)
    label = Label.objects.filter(response__project=project).select_related("response", "criterion").first()
    adjudication_record(response=label.response, criterion=label.criterion, user=manager, verdict="met", note="settled")

    client = Client()
    client.force_login(manager)
    page = _trail(client, project)
    assert page.status_code == 200
    html = page.content.decode()
    for action in ("assign", "reassign", "reopen", "role", "judge", "rubric_version", "adjudicate"):
        assert f"<td>{action}</td>" in html, action
    rows = list(csv.reader(io.StringIO(b"".join(_trail(client, project, format="csv").streaming_content).decode())))
    assert rows[0] == ["when", "who", "action", "target", "before", "after", "note"]
    by_action = {}
    for row in rows[1:]:
        by_action.setdefault(row[2], []).append(row)
    # the newest row of each action is the manager's (the import's own rows come before, by nobody)
    assert all(by_action[action][0][1] == "mgr"
               for action in ("assign", "reassign", "reopen", "role", "judge", "rubric_version", "adjudicate"))
    reopen = by_action["reopen"][0]
    assert reopen[6].startswith("'=HYPERLINK") and '"in_progress"' in reopen[5]
    assert '"annotator"' in by_action["reassign"][0][4]
    assert '"hash"' in by_action["rubric_version"][0][5] and by_action["rubric_version"][0][4]
    assert '"verdict": "met"' in by_action["adjudicate"][0][5]
    # newest first, and the filters narrow it
    assert rows[1][2] == "adjudicate"
    only = _trail(client, project, action="reopen").content.decode()
    assert "<td>reopen</td>" in only and "<td>assign</td>" not in only


def test_only_managers_read_the_trail(study):
    project, _ = study
    for role in ("viewer", "adjudicator"):
        user = grant(User.objects.create_user(role), project, role)
        client = Client()
        client.force_login(user)
        assert _trail(client, project).status_code == 403
        assert _trail(client, project, format="csv").status_code == 403
    stranger = Client()
    stranger.force_login(User.objects.create_user("stranger"))
    assert _trail(stranger, project).status_code == 404


def test_a_bundle_import_records_its_rubric_versions(study):
    project, _ = study
    events = AuditEvent.objects.filter(project=project, action="rubric_version")
    scopes = RubricVersion.objects.filter(project=project).count()
    assert events.count() == scopes and all(e.before is None and e.after["hash"] for e in events)
    assert Criterion.objects.filter(project=project).exists()


def test_a_new_version_of_a_template_the_projects_judges_use_is_in_its_trail(study, tmp_path):
    from grading.bundles import bundle_import
    from grading.judges.services import prompt_template_save
    from tests.bundles import bundle_parts, write_bundle

    project, manager = study
    v1 = prompt_template_save(name="terse", system="", binary_user="Criterion: $criterion\n$response\nJSON", option_user="$options",
                              by=manager)
    Judge.objects.filter(project=project).update(prompt_template=v1)
    prompt_template_save(name="terse", system="Be brief.", binary_user=v1.binary_user, option_user=v1.option_user, by=manager)
    prompt_template_save(name="unused", system="x", binary_user="$criterion", option_user="$options", by=manager)
    parts = bundle_parts()
    parts["project"]["slug"] = "elsewhere"
    bundle_import(path=write_bundle(tmp_path / "elsewhere", parts))
    client = Client()
    client.force_login(manager)
    html = client.get(f"/projects/{project.slug}/audit/", {"action": "prompt_template"}).content.decode()
    assert html.count("<td>prompt_template</td>") == 2 and "unused" not in html and "Be brief." in html
    other = get_user_model().objects.create_user("other-manager")
    grant(other, Project.objects.get(slug="elsewhere"))
    client.force_login(other)
    assert "<td>prompt_template</td>" not in client.get("/projects/elsewhere/audit/").content.decode()
