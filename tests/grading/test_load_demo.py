"""``load_demo`` loads the demo projects, a finished baseline run beside the imported judges, open
assignments for the demo annotators, and prints the logins; again, it changes nothing. The demo
shows every feature (issue 25, point 6): guidelines and guidance, an attributed and an anonymized
judge of one model, a multi-sample judge, a trait rubric with a compiled judge and a stored
calibration, k calibrated from the physician answers, gold mostly agreed with a minority to
adjudicate, and every report page with content, except where the page does not apply to a
project's data (listed below, with why) and on the project that has not started."""
import io
import json

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client, RequestFactory

from annotation.models import Assignment, Criterion, Label, Project, ProjectRole, Response
from grading.models import Judge, JudgeRun, Judgment

pytestmark = pytest.mark.django_db
PROJECTS = {"clinical-demo", "clinical-workspace", "clinical-traits", "clinical-not-started", "charm-100", "devai"}
EMPTY_STATE = "clinical-not-started"
# Pages that have nothing to show on a project by the nature of its data, and why (their page says so).
NOT_APPLICABLE = {
    ("clinical-demo", "traits"): "its rubric is binary; the trait rubric is clinical-traits'",
    ("clinical-traits", "coverage"): "no binary criteria: coverage counts binary criteria met",
    ("clinical-traits", "verbosity"): "no binary criteria to count",
    ("clinical-traits", "cross-grader"): "no binary criteria to compare positive rates on",
    ("clinical-traits", "healthbench"): "no HealthBench examples",
    ("clinical-traits", "pairwise"): "one expert per answer: no pairs of annotators",
    ("clinical-traits", "ppi_estimate"): "no binary criteria: its figure is the score (metric=score)",
    ("clinical-traits", "routing"): "no binary criteria: its figure is the score (metric=score)",
    ("clinical-workspace", None): "unlabeled until the demo annotators label it in the browser",
    ("charm-100", "agreement"): "one cohort and no judge: nothing to compare",
    ("charm-100", "judges"): "no judge", ("charm-100", "bias"): "no judge", ("charm-100", "stability"): "no judge",
    ("charm-100", "calibration"): "no judge", ("charm-100", "reliability"): "one source only",
    ("charm-100", "traits"): "no trait rubric", ("charm-100", "healthbench"): "no HealthBench examples",
    ("charm-100", "pairwise"): "one reference annotator: no pairs", ("charm-100", "ppi_estimate"): "no judge",
    ("charm-100", "routing"): "no judge to route by",
    ("devai", "traits"): "no trait rubric", ("devai", "healthbench"): "no HealthBench examples",
    ("devai", "pairwise"): "the human panel is one annotator: no pairs",
}


def _counts() -> tuple:
    return (Label.objects.count(), Judgment.objects.count(), JudgeRun.objects.count(), Judge.objects.count(),
            Assignment.objects.count(), Criterion.objects.exclude(guidance="").count(),
            tuple(Project.objects.order_by("slug").values_list("slug", "coverage_k")))


@pytest.fixture(scope="module")
def loaded(django_db_setup, django_db_blocker):
    """The demo loaded twice (the second time must change nothing); rolled back after the module."""
    from django.db import transaction

    with django_db_blocker.unblock(), transaction.atomic():
        cache.clear()
        out = io.StringIO()
        call_command("load_demo", "--json", "--url", "http://127.0.0.1:9000/", stdout=out)
        first = _counts()
        call_command("load_demo", "--json", stdout=io.StringIO())
        yield {"printed": json.loads(out.getvalue()), "first": first, "second": _counts()}
        transaction.set_rollback(True)
        cache.clear()


def test_load_demo_twice(loaded):
    out = loaded["printed"]
    assert out["url"] == "http://127.0.0.1:9000/"
    roles = {(u["username"], u["role"], u["cohort"]) for u in out["users"]}
    assert {("researcher", "superuser", None), ("adjudicator", "adjudicator", None), ("viewer", "viewer", None),
            ("g1-ann1", "annotator", "group-1"), ("g2-ann1", "annotator", "group-2"), ("g1-check", "checker", "group-1"),
            ("g2-check", "checker", "group-2")} <= roles
    for user in out["users"]:
        login = RequestFactory().post("/accounts/login/")  # django-axes counts failures per request
        assert authenticate(login, username=user["username"], password=user["password"]) is not None
    assert set(Project.objects.values_list("slug", flat=True)) == PROJECTS
    # The adjudicator is an adjudicator of every demo project and no staff account (issue 10).
    adjudicator = get_user_model().objects.get(username="adjudicator")
    assert not adjudicator.is_staff and set(ProjectRole.objects.filter(user=adjudicator).values_list("role", flat=True)) == {
        "adjudicator"}
    assert ProjectRole.objects.filter(user=adjudicator).count() == len(PROJECTS)
    demo = Project.objects.get(slug="clinical-demo")
    run = JudgeRun.objects.get(judge__project=demo, judge__backend="baseline")
    assert run.status == JudgeRun.FINISHED and run.done_calls == run.total_calls > 0
    judges = set(Judgment.objects.filter(judge__project=demo).values_list("judge__name", flat=True).distinct())
    assert judges == {"baseline-lexical", "gpt-4o-judge", "gpt-4o-judge-attributed", "claude-judge", "claude-judge-attributed",
                      "llama-judge", "llama-judge-attributed"}
    workspace = Assignment.objects.filter(project__slug="clinical-workspace")
    assert workspace.filter(status=Assignment.OPEN, annotator__username="g1-ann1").exists()
    # Overlap 2 per cohort: every workspace response has two annotators in each cohort.
    per_item = {}
    for response_id, cohort_id in workspace.values_list("response_id", "cohort_id"):
        per_item[(response_id, cohort_id)] = per_item.get((response_id, cohort_id), 0) + 1
    assert set(per_item.values()) == {2}
    assert loaded["second"] == loaded["first"]


def _report(command: str, **options) -> dict:
    out = io.StringIO()
    cache.clear()
    call_command(command, *[f"--{k.replace('_', '-')}={v}" for k, v in options.items()], "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("slug", ["clinical-demo", "clinical-workspace", "clinical-traits"])
def test_guidelines_and_guidance(loaded, slug):
    project = Project.objects.get(slug=slug)
    assert project.guidelines.startswith("# Labelling guide")
    guided = Criterion.objects.filter(project=project).exclude(guidance="")
    assert guided.exists()
    if slug != "clinical-traits":  # every penalty item and every item that needs a quote has guidance
        assert not Criterion.objects.filter(project=project, guidance="", weight__lt=0).exists()
        assert not Criterion.objects.filter(project=project, guidance="", min_evidence__gt=0).exists()


def test_judges_of_both_conditions_and_samples(loaded):
    demo = Project.objects.get(slug="clinical-demo")
    judged = Judgment.objects.filter(judge__project=demo)
    conditions = set(judged.filter(judge__model="gpt-4o").values_list("judge__condition", flat=True).distinct())
    assert conditions == {"attributed", "anonymized"}
    sampled = Judge.objects.get(project=demo, samples__gt=1)
    assert set(judged.filter(judge=sampled).values_list("sample", flat=True).distinct()) == set(range(sampled.samples))
    attributed = _report("bias_matrix", project="clinical-demo", condition="attributed")
    assert len(attributed["judges"]) == 3 and all(v is not None for v in attributed["self_bias"].values())
    stability = _report("stability", project="clinical-demo", judge=sampled.name)
    assert stability["judge"] == sampled.name


def test_traits_and_stored_calibration(loaded):
    traits = Project.objects.get(slug="clinical-traits")
    assert Criterion.objects.filter(project=traits).exclude(checklist_of="").count() == 9
    assert {r["trait"] for r in traits.traits} == {"safety", "empathy"}
    judge = Judge.objects.get(project=traits, name="gpt-4o-rulers")
    assert judge.typed_settings.compiled and judge.samples == 3
    assert Judgment.objects.filter(judge=judge).exclude(evidence=[]).exists()
    scores = _report("trait_scores", project="clinical-traits", source="judge:gpt-4o-rulers", reference="cohort:clinicians")
    assert set(scores["qwk"]) == {"safety", "clarity", "empathy"} and len(scores["responses"]) == 96
    calibrated = Judge.objects.get(project=traits, name="gpt-4o-rulers@calibrated")
    stored = calibrated.settings["calibration"]
    assert stored["n_holdout"] > 0 and stored["qwk_after"] > stored["qwk_before"]
    assert Judgment.objects.filter(judge=calibrated).count() == stored["n_holdout"]


def test_k_is_calibrated_from_the_physician_answers(loaded):
    demo = Project.objects.get(slug="clinical-demo")
    assert demo.coverage_k == _report("calibrate_k", project="clinical-demo", source="cohort:group-1")["k"]
    assert _report("coverage", project="clinical-demo", source="cohort:group-2")["k"] == demo.coverage_k


def test_gold_mostly_agreed_and_a_minority_to_adjudicate(loaded, tmp_path):
    call_command("export_gold", "--project=clinical-demo", f"--out={tmp_path}", "--json", stdout=io.StringIO())
    provenance = [json.loads(line)["provenance"] for line in (tmp_path / "gold.jsonl").read_text().splitlines()]
    unresolved = provenance.count("unresolved") / len(provenance)
    assert 0 < unresolved < 0.1
    queue = _report("adjudication_queue", project="clinical-demo")
    responses = Response.objects.filter(project__slug="clinical-demo").count()
    assert 0.1 * responses < queue["n_items"] < 0.4 * responses


def _has_content(result) -> bool:
    """Whether a page's result shows something: a table row with a figure (a number other than 0)."""
    if not result or "error" in result or result.get("empty") or result.get("present") is False:
        return False
    return any(isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0
               for table in (result.get("tables") or {}).values() for row in table["rows"] for value in row)


def test_every_report_page_has_content(loaded):
    from grading.reports.registry import pages
    from tests.roles import grant

    viewer = get_user_model().objects.create_user("page-reader")
    for project in Project.objects.all():
        grant(viewer, project, "viewer")
    client = Client()
    client.force_login(viewer)
    missing, explained = [], []
    for slug in sorted(PROJECTS):
        for key, _report_decl in pages():
            cache.clear()
            response = client.get(f"/projects/{slug}/reports/{key}/")
            assert response.status_code == 200, (slug, key)
            content = _has_content(response.context["result"])
            exempt = slug == EMPTY_STATE or (slug, key) in NOT_APPLICABLE or (slug, None) in NOT_APPLICABLE
            if not exempt and not content:
                missing.append((slug, key))
            if slug == EMPTY_STATE:
                explained.append((key, content, response.context["error"] or response.content.decode()))
    assert not missing, f"report pages without content: {missing}"
    # The project that has not started shows no figures anywhere, only what each page needs first.
    assert [key for key, content, _ in explained if content] == []
