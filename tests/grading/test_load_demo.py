"""``load_demo`` loads the four demo projects, a finished baseline run beside the imported
judge, open assignments for the demo annotators, and prints the logins; again, it changes
nothing."""
import json

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.test import RequestFactory

from annotation.models import Assignment, Label, Project, ProjectRole
from grading.models import JudgeRun, Judgment


@pytest.mark.django_db
def test_load_demo_twice(capsys):
    call_command("load_demo", "--json", "--url", "http://127.0.0.1:9000/")
    out = json.loads(capsys.readouterr().out)
    assert out["url"] == "http://127.0.0.1:9000/"
    roles = {(u["username"], u["role"], u["cohort"]) for u in out["users"]}
    assert {("researcher", "superuser", None), ("adjudicator", "adjudicator", None), ("viewer", "viewer", None),
            ("g1-ann1", "annotator", "group-1"), ("g2-ann1", "annotator", "group-2"), ("g1-check", "checker", "group-1"),
            ("g2-check", "checker", "group-2")} <= roles
    for user in out["users"]:
        login = RequestFactory().post("/accounts/login/")  # django-axes counts failures per request
        assert authenticate(login, username=user["username"], password=user["password"]) is not None
    assert set(Project.objects.values_list("slug", flat=True)) == {"clinical-demo", "clinical-workspace", "charm-100", "devai"}
    # The adjudicator is an adjudicator of every demo project and no staff account (issue 10).
    from django.contrib.auth import get_user_model

    adjudicator = get_user_model().objects.get(username="adjudicator")
    assert not adjudicator.is_staff and set(ProjectRole.objects.filter(user=adjudicator).values_list("role", flat=True)) == {
        "adjudicator"}
    assert ProjectRole.objects.filter(user=adjudicator).count() == 4
    demo = Project.objects.get(slug="clinical-demo")
    run = JudgeRun.objects.get(judge__project=demo, judge__backend="baseline")
    assert run.status == JudgeRun.FINISHED and run.done_calls == run.total_calls > 0
    judges = set(Judgment.objects.filter(judge__project=demo).values_list("judge__name", flat=True).distinct())
    assert judges == {"baseline-lexical", "gpt-4o-judge"}
    workspace = Assignment.objects.filter(project__slug="clinical-workspace")
    assert workspace.filter(status=Assignment.OPEN, annotator__username="g1-ann1").exists()
    # Overlap 2 per cohort: every workspace response has two annotators in each cohort.
    per_item = {}
    for response_id, cohort_id in workspace.values_list("response_id", "cohort_id"):
        per_item[(response_id, cohort_id)] = per_item.get((response_id, cohort_id), 0) + 1
    assert set(per_item.values()) == {2}

    before = (Label.objects.count(), Judgment.objects.count(), JudgeRun.objects.count(), workspace.count())
    call_command("load_demo", "--json")
    capsys.readouterr()
    assert (Label.objects.count(), Judgment.objects.count(), JudgeRun.objects.count(), workspace.count()) == before
