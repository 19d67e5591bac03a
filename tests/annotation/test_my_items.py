"""My items (issue 12, point 5): the annotator's own assignments with a status filter, a search
by case id and links back; submitted items open read-only; a reopened item says why, and the
reopen forms require the reason; a project without work for the user is not on their home page."""
from django.contrib.auth import get_user_model

from annotation.assignments import assignment_reopen, assignment_submit
from annotation.models import Assignment, CohortMembership
from annotation.selectors import criteria_for_response
from annotation.services import label_record
from tests.annotation.conftest import build_study, first_assignment


def _submit(assignment):
    for criterion in criteria_for_response(response=assignment.response):
        kind = {"verdict": "met"} if criterion.kind == "binary" else {"option_label": criterion.options[0]["label"]}
        label_record(assignment_id=assignment.pk, criterion_id=criterion.pk, user=assignment.annotator, **kind)
    return assignment_submit(assignment=assignment, user=assignment.annotator)


def test_the_list_filters_searches_and_links_back(study, login_client):
    client = login_client("a1")
    mine = list(Assignment.objects.filter(annotator__username="a1").select_related("response__case").order_by("position"))
    _submit(mine[0])
    page = client.get("/work/items/").content.decode()
    assert f'{len(mine)} items' in page
    for a in mine:
        assert f'href="/work/{a.pk}/"' in page
    assert "View (read-only)" in page and page.count('data-status="submitted"') == 1
    other = Assignment.objects.exclude(annotator__username="a1").first()
    assert f'data-assignment="{other.pk}"' not in page  # nobody else's
    for model in {a.response.model for a in mine}:
        assert model not in page  # blind project: no source model

    submitted = client.get("/work/items/?status=submitted").content.decode()
    assert "1 item<" in submitted and f'data-assignment="{mine[0].pk}"' in submitted
    case = mine[-1].response.case.external_id
    found = client.get(f"/work/items/?q={case[-3:]}").content.decode()
    assert all(f'data-assignment="{a.pk}"' in found for a in mine if a.response.case.external_id.endswith(case[-3:]))
    assert "No items match these filters" in client.get("/work/items/?q=no-such-case").content.decode()
    read_only = client.get(f"/work/{mine[0].pk}/").content.decode()
    assert "read-only" in read_only and "disabled" in read_only


def test_a_reopened_item_shows_the_reason_in_the_list_and_on_its_page(study, login_client):
    a = first_assignment("a1")
    _submit(a)
    assignment_reopen(assignment=a, by=study.users["chk1"], reason="Please quote the ECG sentence")
    client = login_client("a1")
    listing = client.get("/work/items/").content.decode()
    assert "Reopened by chk1: Please quote the ECG sentence" in listing
    page = client.get(f"/work/{a.pk}/").content.decode()
    assert 'id="reopened"' in page and "Please quote the ECG sentence" in page and "Reopened by chk1" in page


def test_a_manager_must_give_a_reason_to_reopen(study, login_client):
    a = first_assignment("a1")
    _submit(a)
    client = login_client("res")
    client.post(f"/projects/study/assignments/{a.pk}/reopen/", {"reason": ""})
    assert Assignment.objects.get(pk=a.pk).status == "submitted"
    assert 'name="reason"' in client.get("/projects/study/assignments/").content.decode()
    client.post(f"/projects/study/assignments/{a.pk}/reopen/", {"reason": "Two criteria were skipped"})
    assert Assignment.objects.get(pk=a.pk).reopen_reason == "Two criteria were skipped"


def test_an_annotator_without_items_in_a_project_does_not_see_it(db, login_client):
    build_study(slug="busy", n_cases=1, annotators=(("a1",),))
    quiet = build_study(slug="quiet", n_cases=1, annotators=(("zz",),))
    a1 = get_user_model().objects.get(username="a1")  # a member of "quiet" too, with no assignment there
    CohortMembership.objects.create(project=quiet.project, cohort=quiet.cohorts[0], user=a1, role=CohortMembership.ANNOTATOR)
    home = login_client("a1").get("/").content.decode()
    assert 'id="work-busy"' in home and 'id="work-quiet"' not in home
