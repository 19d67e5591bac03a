"""The quality-control page through the test client: managers only (adjudicator 403, no role
404, anonymous to the login page), each form posted end to end with its message, errors shown,
a query count that does not grow with the cases, and the project page's section."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.db import connection
from django.template import Context, Template
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import AuditEvent, Case, CaseQuality
from grading.qc import qc_audit_sample, qc_screen
from tests.grading.qc.conftest import SCREENING
from tests.roles import grant


@pytest.fixture
def manager_client(client, qc_project, manager):
    grant(manager, qc_project, "manager")
    client.force_login(manager)
    return client


def page(slug: str = "qc") -> str:
    return reverse("qc-page", args=[slug])


def said(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def user(name: str):
    return get_user_model().objects.create_user(username=name, password="pw-12345")


def test_only_managers_see_the_page(client, qc_project):
    response = client.get(page())
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    adjudicator = grant(user("adj"), qc_project, "adjudicator")
    client.force_login(adjudicator)
    assert client.get(page()).status_code == 403
    assert client.post(reverse("qc-screen", args=["qc"]), {"source": "cohort:group-1", "threshold": "50"}).status_code == 403
    client.force_login(user("stranger"))
    assert client.get(page()).status_code == 404
    assert client.post(reverse("qc-sample", args=["qc"]), {"share": "0.5", "seed": "1"}).status_code == 404
    staff = get_user_model().objects.create_user(username="staff", password="pw-12345", is_staff=True)
    client.force_login(staff)
    assert client.get(page()).status_code == 404  # is_staff alone grants nothing in a project
    assert not CaseQuality.objects.exists()


def test_the_page_offers_the_forms(manager_client):
    html = manager_client.get(page()).content.decode()
    assert "Case quality control" in html
    assert '<option value="cohort:group-1"' in html and '<option value="gold"' in html
    for model in ("m-a", "m-b", "m-c", "m-d"):
        assert f'name="models" value="{model}"' in html
    assert 'value="physician"' not in html
    assert "No case drawn for audit yet." in html and "No case flagged." in html


def test_screening_from_the_page(manager_client, qc_project, manager):
    response = manager_client.post(reverse("qc-screen", args=["qc"]),
                                   {"source": "cohort:group-1", "models": SCREENING, "threshold": "50"}, follow=True)
    assert response.redirect_chain == [(page(), 302)]
    assert "Screened 5 cases: 3 flagged at or above 50 % for exclusion." in said(response)
    assert set(CaseQuality.objects.filter(excluded=True).values_list("case__external_id", flat=True)) == {"q4", "q1", "q2"}
    assert AuditEvent.objects.get(action="qc_screen").actor == manager
    html = response.content.decode()
    assert 'id="qc-flagged-' in html and "66.7 %" in html
    assert 'name="models" value="m-a" checked' in html  # the last run's choices are offered again


@pytest.mark.parametrize("data, error", [
    ({"source": "cohort:group-1", "threshold": "50"}, "Screening not run: name at least one screening model"),
    ({"source": "cohort:group-1", "models": ["m-x"], "threshold": "50"}, "Screening not run: unknown model 'm-x'"),
    ({"source": "cohort:group-1", "models": ["m-a"], "threshold": "150"}, "Screening not run: threshold: Ensure this value"),
    ({"source": "judge:none", "models": ["m-a"], "threshold": "50"}, "Screening not run: unknown judge 'none'"),
])
def test_screening_errors_are_shown(manager_client, data, error):
    response = manager_client.post(reverse("qc-screen", args=["qc"]), data, follow=True)
    assert response.status_code == 200
    assert any(m.startswith(error) for m in said(response)), said(response)
    assert 'class="error"' in response.content.decode()
    assert not CaseQuality.objects.exists()


def test_sampling_and_recording_outcomes_from_the_page(manager_client, qc_project, manager):
    response = manager_client.post(reverse("qc-sample", args=["qc"]), {"share": "1", "seed": "4"}, follow=True)
    assert "Drew 6 of 6 cases for audit." in said(response)
    q3 = Case.objects.get(project=qc_project, external_id="q3")
    outcome = reverse("qc-outcome", args=["qc", q3.pk])
    response = manager_client.post(outcome, {"outcome": "remove", "note": ""}, follow=True)
    assert said(response) == ["Case q3: a note is required to remove a case (say what is wrong)"]
    assert CaseQuality.objects.get(case=q3).excluded is False
    response = manager_client.post(outcome, {"outcome": "remove", "note": "Not a clinical question"}, follow=True)
    assert said(response) == ["Case q3: remove recorded."]
    row = CaseQuality.objects.get(case=q3)
    assert (row.audit_outcome, row.audit_note, row.audit_by, row.excluded) == ("remove", "Not a clinical question", manager, True)
    html = response.content.decode()
    assert "Not a clinical question" in html and "by lead" in html
    response = manager_client.post(reverse("qc-sample", args=["qc"]), {"share": "0", "seed": "1"}, follow=True)
    assert said(response) == ["No sample drawn: share must be more than 0 and at most 1 (0.2 = 20 % of the cases), not 0.0"]


def test_reinstating_from_the_page(manager_client, qc_project):
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING)
    q1 = Case.objects.get(project=qc_project, external_id="q1")
    url = reverse("qc-reinstate", args=["qc", q1.pk])
    response = manager_client.post(url, {"note": ""}, follow=True)
    assert said(response) == ["Case q1: note: This field is required."]
    response = manager_client.post(url, {"note": "The screening responses saw the reference"}, follow=True)
    assert said(response) == ["Case q1 reinstated: it counts in reports again."]
    assert CaseQuality.objects.get(case=q1).excluded is False
    assert "reinstated — counts in reports" in response.content.decode()


def test_cases_of_another_project_are_404(manager_client, qc_project, mini_project):
    other = Case.objects.get(project=mini_project, external_id="c1")
    assert manager_client.post(reverse("qc-outcome", args=["qc", other.pk]), {"outcome": "pass"}).status_code == 404
    assert manager_client.post(reverse("qc-reinstate", args=["qc", other.pk]), {"note": "x"}).status_code == 404
    assert manager_client.get(page("mini")).status_code == 404  # no role in mini
    assert manager_client.get(reverse("qc-screen", args=["qc"])).status_code == 405


def test_the_page_runs_a_fixed_number_of_queries(manager_client, qc_project, manager):
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING, user=manager)
    qc_audit_sample(project=qc_project, share=0.2, user=manager)
    with CaptureQueriesContext(connection) as few:
        assert manager_client.get(page()).status_code == 200
    qc_audit_sample(project=qc_project, share=1, user=manager)
    CaseQuality.objects.filter(project=qc_project).update(audit_outcome="pass", audit_by=manager)
    with CaptureQueriesContext(connection) as many:
        assert manager_client.get(page()).status_code == 200
    assert len(many) == len(few)


def test_the_project_page_section_is_for_managers(qc_project, manager):
    template = Template("{% load qc_tags %}{% project_quality project %}")
    request = RequestFactory().get("/")
    request.user = manager
    assert template.render(Context({"project": qc_project, "request": request})).strip() == ""
    grant(manager, qc_project, "adjudicator")
    assert template.render(Context({"project": qc_project, "request": request})).strip() == ""
    grant(manager, qc_project, "manager")
    qc_screen(project=qc_project, source="cohort:group-1", models=SCREENING)
    html = template.render(Context({"project": qc_project, "request": request}))
    assert 'id="project-quality"' in html and f'href="{page()}"' in html
    assert '<th class="num">excluded</th>' in html and '<td class="num" data-count="excluded"><strong>3</strong>' in html
