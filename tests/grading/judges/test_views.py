"""The judge section of the project page, run controls over htmx, the judges page and the
side-by-side page, end to end through the test client."""
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Response
from grading.models import Judge, JudgeRun
from tests.roles import grant


@pytest.fixture
def staff(client, mini_project):
    user = get_user_model().objects.create_user(username="researcher", password="pw", is_staff=True)
    grant(user, mini_project)
    client.force_login(user)
    return client


@pytest.fixture
def baseline(mini_project):
    return Judge.objects.create(project=mini_project, name="lexical", backend=Judge.BASELINE)


def test_project_page_shows_judges_runs_and_the_start_form(staff, baseline):
    JudgeRun.objects.create(judge=baseline, status=JudgeRun.FINISHED, total_calls=10, done_calls=10, invalid_count=2)
    html = staff.get(reverse("project-detail", args=["mini"])).content.decode()
    assert 'id="judge-runs"' in html and 'id="judge-run-form"' in html
    assert 'class="badge baseline"' in html  # the baseline is labelled as such
    assert "judge-a" in html and "imported" in html
    assert "10 / 10" in html and "2 (20%)" in html
    assert 'hx-trigger="every 1s"' not in html  # nothing active: no polling
    assert "/projects/mini/reports/judges/" in html and "/projects/mini/reports/bias/" in html


def test_start_run_over_htmx_returns_the_runs_partial(staff, baseline, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(reverse("judge-run-start", args=["mini"]), {"judge": baseline.pk, "cases": "c1"}, HTTP_HX_REQUEST="true")
        html = response.content.decode()
        # in the test transaction the task runs when the block ends: the partial shows a queued run, polling
        assert response.status_code == 200 and html.lstrip().startswith('<div id="judge-runs"')
        assert 'data-status="queued"' in html and 'hx-trigger="every 1s"' in html
    run = JudgeRun.objects.get(judge=baseline)
    assert (run.status, run.done_calls, run.scope) == ("finished", 9, {"cases": ["c1"]})
    polled = staff.get(reverse("judge-runs", args=["mini"]), HTTP_HX_REQUEST="true").content.decode()
    assert 'data-status="finished"' in polled and "9 / 9" in polled and "every 1s" not in polled


def test_start_form_errors_are_rerendered_in_place(staff):
    response = staff.post(reverse("judge-run-start", args=["mini"]), {"judge": ""}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#judge-run-form"
    assert 'id="judge-run-form"' in response.content.decode() and "required" in response.content.decode()


def test_active_runs_poll_and_can_be_stopped_and_resumed(staff, baseline, django_capture_on_commit_callbacks):
    run = JudgeRun.objects.create(judge=baseline, status=JudgeRun.RUNNING, total_calls=11, done_calls=4)
    html = staff.get(reverse("judge-runs", args=["mini"]), HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 1s"' in html and "Stop</button>" in html
    staff.post(reverse("judge-run-stop", args=["mini", run.pk]), HTTP_HX_REQUEST="true")
    run.refresh_from_db()
    assert run.status == "stopping"
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.STOPPED)
    assert "Resume</button>" in staff.get(reverse("judge-runs", args=["mini"])).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        staff.post(reverse("judge-run-resume", args=["mini", run.pk]), HTTP_HX_REQUEST="true")
    run.refresh_from_db()
    assert (run.status, run.done_calls) == ("finished", 11)


def test_runs_partial_query_count_does_not_grow_with_runs(staff, baseline, django_assert_num_queries):
    url = reverse("judge-runs", args=["mini"])
    JudgeRun.objects.create(judge=baseline)
    staff.get(url)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as one:
        staff.get(url)
    for _ in range(5):
        JudgeRun.objects.create(judge=baseline, status=JudgeRun.FINISHED)
    with CaptureQueriesContext(connection) as six:
        staff.get(url)
    assert len(six) == len(one)


def test_judges_page_creates_judges_and_panels(staff, mini_project):
    url = reverse("judges-page", args=["mini"])
    assert staff.get(url).status_code == 200
    response = staff.post(url, {"action": "judge", "judge-name": "gpt", "judge-backend": "openai", "judge-model": "gpt-x",
                                "judge-base_url": "http://127.0.0.1:1/v1", "judge-api_key_env": "OPENAI_API_KEY",
                                "judge-condition": "attributed", "judge-temperature": "0.7", "judge-samples": "3",
                                "judge-concurrency": "4", "judge-max_retries": "2", "judge-price_in_per_mtok": "2.5",
                                "judge-price_out_per_mtok": "10", "judge-timeout_seconds": "30", "judge-json_mode": "on",
                                "judge-shuffle_options": "on", "judge-shuffle_seed": "7", "judge-min_evidence": "1",
                                "judge-few_shot_cohort": "group-1", "judge-few_shot_k": "2", "judge-few_shot_seed": "5"})
    assert response.status_code == 302
    gpt = Judge.objects.get(project=mini_project, name="gpt")
    assert gpt.settings == {"json_mode": True, "timeout_seconds": 30.0, "shuffle_options": True, "shuffle_seed": 7,
                            "min_evidence": 1, "few_shot": {"cohort": "group-1", "k": 2, "seed": 5}}
    bad = staff.post(url, {"action": "judge", "judge-name": "bad", "judge-backend": "openai", "judge-model": "x",
                           "judge-api_key_env": "sk-123-secret", "judge-condition": "anonymized", "judge-temperature": "0",
                           "judge-samples": "1", "judge-concurrency": "1", "judge-max_retries": "0",
                           "judge-price_in_per_mtok": "0", "judge-price_out_per_mtok": "0", "judge-timeout_seconds": "5",
                           "judge-shuffle_seed": "0", "judge-min_evidence": "0", "judge-few_shot_k": "0", "judge-few_shot_seed": "0"})
    assert bad.status_code == 200 and "never the key" in bad.content.decode()
    assert not Judge.objects.filter(name="bad").exists()
    response = staff.post(url, {"action": "panel", "panel-name": "vote", "panel-members": ["gpt", "judge-a"], "panel-vote": "any"})
    assert response.status_code == 302
    assert Judge.objects.get(name="vote").settings == {"members": ["gpt", "judge-a"], "vote": "any"}
    response = staff.post(url, {"action": "cross", "cross-models": ["model-a"], "cross-base_url": "http://127.0.0.1:1/v1",
                                "cross-temperature": "0.7", "cross-samples": "10"})
    assert response.status_code == 302
    assert set(Judge.objects.filter(model="model-a").values_list("name", "condition")) == {
        ("model-a-attributed", "attributed"), ("model-a-anonymized", "anonymized")}


def test_side_by_side_shows_every_source_per_criterion(staff, mini_project, baseline, run_judge):
    run_judge(baseline)
    Judge.objects.create(project=mini_project, name="both", backend=Judge.PANEL,
                         settings={"members": ["judge-a", "lexical"], "vote": "unanimous"})
    r1 = Response.objects.get(external_id="r1")
    response = staff.get(reverse("response-side-by-side", args=[r1.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    for source in ("cohort:group-1", "cohort:group-2", "judge:judge-a", "judge:lexical", "judge:both"):
        assert f'data-source="{source}"' in html
    assert 'data-criterion="c1-ecg"' in html and "Mentions ECG." in html  # imported explanation
    assert "“An ECG is needed.”" in html  # evidence quote, found verbatim
    assert "/projects/mini/reports/judges/" in html and "/projects/mini/reports/bias/" in html
    assert "offline baseline" in html


def test_side_by_side_is_for_the_projects_adjudicators_and_managers(client, mini_project):
    r1 = Response.objects.get(external_id="r1")
    url = reverse("response-side-by-side", args=[r1.pk])
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")  # the site's login
    doc = get_user_model().objects.create_user(username="doc", password="pw", is_staff=True)
    client.force_login(doc)
    assert client.get(url).status_code == 404  # no role in the project: it is not even there
    grant(doc, mini_project, "viewer")
    assert client.get(url).status_code == 403  # reports only
    grant(doc, mini_project, "adjudicator")
    assert client.get(url).status_code == 200


def test_side_by_side_sanitizes_response_markdown(staff, mini_project):
    r1 = Response.objects.get(external_id="r1")
    Response.objects.filter(pk=r1.pk).update(text="**Bold** <script>alert(1)</script> [x](javascript:alert(2))")
    html = staff.get(reverse("response-side-by-side", args=[r1.pk])).content.decode()
    shown = html.split('id="response-text">', 1)[1].split("</div>", 1)[0]
    assert "<strong>Bold</strong>" in shown
    assert "<script" not in shown.lower() and "alert(1)" not in shown and 'href="javascript' not in shown


def test_side_by_side_query_count_does_not_grow_with_judges(staff, mini_project, run_judge):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    url = reverse("response-side-by-side", args=[Response.objects.get(external_id="r1").pk])
    run_judge(Judge.objects.create(project=mini_project, name="b0", backend=Judge.BASELINE))
    staff.get(url)
    with CaptureQueriesContext(connection) as few:
        staff.get(url)
    for i in range(1, 4):
        run_judge(Judge.objects.create(project=mini_project, name=f"b{i}", backend=Judge.BASELINE))
    Judge.objects.create(project=mini_project, name="panel", backend=Judge.PANEL, settings={"members": ["b0", "b1", "b2"]})
    with CaptureQueriesContext(connection) as many:
        html = staff.get(url).content.decode()
    assert len(many) == len(few) and 'data-source="judge:panel"' in html


def test_admin_edits_judges_through_named_settings_fields(mini_project, client):
    admin = get_user_model().objects.create_superuser(username="admin", password="pw", email="a@example.org")
    client.force_login(admin)
    assert client.get(reverse("admin:grading_judge_add")).status_code == 200
    Judge.objects.create(project=mini_project, name="b1", backend=Judge.BASELINE)
    data = {"project": mini_project.pk, "name": "pair", "backend": "panel", "condition": "anonymized", "temperature": "0",
            "samples": "1", "concurrency": "1", "max_retries": "0", "price_in_per_mtok": "0", "price_out_per_mtok": "0",
            "timeout_seconds": "60", "shuffle_seed": "0", "min_evidence": "0", "few_shot_k": "0", "few_shot_seed": "0",
            "panel_members": "judge-a, b1", "panel_vote": "weighted", "panel_weights": "judge-a=2, b1=1"}
    response = client.post(reverse("admin:grading_judge_add"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Judge.objects.get(name="pair").settings["weights"] == {"judge-a": 2.0, "b1": 1.0}
    data.update(name="broken", panel_members="judge-a, ghost")
    response = client.post(reverse("admin:grading_judge_add"), data)
    assert response.status_code == 200 and "no judge &#x27;ghost&#x27;" in response.content.decode()


def test_side_by_side_lookup_by_response_id(staff, mini_project):
    r3 = Response.objects.get(external_id="r3")
    response = staff.get(reverse("side-by-side-lookup", args=["mini"]), {"response": "r3"})
    assert response.status_code == 302 and response["Location"] == reverse("response-side-by-side", args=[r3.pk])
    assert staff.get(reverse("side-by-side-lookup", args=["mini"]), {"response": "nope"}).status_code == 404


def test_editing_a_prompt_template_in_the_admin_saves_a_new_version(client, db):
    from grading.models import PromptTemplate

    client.force_login(get_user_model().objects.create_superuser(username="admin", password="pw", email="a@example.org"))
    data = {"name": "house", "system": "Be strict.", "binary_user": "Item: $criterion", "option_user": "Pick: $options"}
    assert client.post(reverse("admin:grading_prompttemplate_add"), data).status_code == 302
    v1 = PromptTemplate.objects.get(name="house")
    response = client.post(reverse("admin:grading_prompttemplate_change", args=[v1.pk]), {**data, "system": "Be kind."})
    assert response.status_code == 302
    assert list(PromptTemplate.objects.filter(name="house").values_list("version", "system")) == [(2, "Be kind."), (1, "Be strict.")]
