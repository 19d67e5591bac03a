"""A check item cannot be told apart by its annotator: every page, partial and API answer they can
read about a check item is the same as about a regular item in the same state, once the item's own
numbers and texts (ids, positions, case and criterion numbers) are set aside; and none names checks
or gold. The checked pair is one check item and one regular item of the same annotator, both open
and untouched, and neither the last of the queue."""
import json
import re

import pytest
from django.test import Client

from annotation.models import Assignment
from annotation.selectors import criteria_for_response
from grading.goldcheck.services import checks_seed, quality_settings_update

HTMX = {"HTTP_HX_REQUEST": "true"}
LEAKS = re.compile(r"is_check|check[ -]item|gold|reference answer|quality", re.IGNORECASE)


def _normal(text: str) -> str:
    text = re.sub(r"[A-Za-z0-9]{64}", "TOKEN", text)  # the CSRF token, masked anew on every page
    return re.sub(r"\d+", "0", text)


def _pair(study):
    quality_settings_update(project=study.project, data={"check_rate": 0.5}, by=study.manager)
    study.project.refresh_from_db()
    checks_seed(project=study.project, by=study.manager, seed=2)
    queue = list(Assignment.objects.filter(annotator__username="careful").select_related("response")
                 .order_by("position")[:19])
    check = next(a for a in queue if a.is_check)
    regular = next(a for a in queue if not a.is_check)
    return check, regular


def _seen(client: Client, assignment: Assignment) -> list[tuple[str, str]]:
    """Everything the annotator reads about ``assignment``, in one fixed order of actions."""
    pk = assignment.pk
    criteria = criteria_for_response(response=assignment.response)
    seen = []

    def keep(name, response):
        assert response.status_code < 400, (name, response.status_code, response.content[:300])
        body = response.content.decode()
        if response.get("Location"):
            body += " -> " + response["Location"]
        seen.append((name, body))

    keep("label page", client.get(f"/work/{pk}/"))
    keep("api detail", client.get(f"/api/assignments/{pk}/"))
    keep("save partial", client.post(f"/work/{pk}/criteria/{criteria[0].pk}/", {"verdict": "met", "revision": 0}, **HTMX))
    keep("save state partial", client.post(f"/work/{pk}/criteria/{criteria[0].pk}/",
                                           {"verdict": "not_met", "revision": 1, "part": "state"}, **HTMX))
    keep("batch partial", client.post(f"/work/{pk}/batch/", {"batch": json.dumps(
        [{"criterion": criteria[1].pk, "verdict": "met", "revision": 0}])}, **HTMX))
    keep("api label", client.post("/api/labels/", {"assignment": pk, "criterion": criteria[2].pk, "verdict": "met",
                                                   "revision": 0}, content_type="application/json"))
    keep("api batch", client.post(f"/api/assignments/{pk}/labels/", [
        {"criterion": criteria[2].pk, "verdict": "not_met", "revision": 1}], content_type="application/json"))
    keep("label page in progress", client.get(f"/work/{pk}/"))
    keep("api list entry", _Entry(client.get("/api/assignments/", {"limit": 1000}).json(), pk))
    keep("my items row", _Entry(client.get("/work/items/").content.decode(), pk))
    keep("api submit", client.post(f"/api/assignments/{pk}/submit/", content_type="application/json"))
    keep("label page submitted", client.get(f"/work/{pk}/"))
    keep("my items row submitted", _Entry(client.get("/work/items/").content.decode(), pk))
    keep("my items filtered", _Entry(client.get("/work/items/", {"status": "submitted"}).content.decode(), pk))
    return seen


class _Entry:
    """The one entry of a list (API JSON or the My items table) about assignment ``pk``, as a response."""

    status_code = 200

    def __init__(self, listing, pk: int):
        if isinstance(listing, dict):
            [entry] = [e for e in listing["results"] if e["id"] == pk]
            self.content = json.dumps(entry, sort_keys=True).encode()
        else:
            rows = re.findall(rf'<tr data-assignment="{pk}".*?</tr>', listing, re.S)
            assert len(rows) == 1
            self.content = rows[0].encode()

    def get(self, _name):
        return None


@pytest.mark.django_db
def test_every_answer_about_a_check_item_reads_like_a_regular_item(gold_study):
    check, regular = _pair(gold_study)
    client = Client()
    client.force_login(gold_study.users["careful"])
    seen_check, seen_regular = _seen(client, check), _seen(client, regular)
    for (name, about_check), (_, about_regular) in zip(seen_check, seen_regular):
        assert _normal(about_check) == _normal(about_regular), name
        assert not LEAKS.search(about_check), (name, LEAKS.search(about_check).group(0))
    check.refresh_from_db()
    assert check.is_check and check.status == Assignment.SUBMITTED


@pytest.mark.django_db
def test_the_annotators_pages_and_lists_name_no_check(gold_study):
    _pair(gold_study)
    client = Client()
    client.force_login(gold_study.users["careful"])
    for url in ("/", "/work/items/", "/api/assignments/?limit=1000"):
        body = client.get(url).content.decode()
        assert not LEAKS.search(body), (url, LEAKS.search(body).group(0))
    listing = client.get("/api/assignments/", {"limit": 1000}).json()["results"]
    assert listing and all(set(entry) == {"id", "project", "case", "status", "position", "decided"} for entry in listing)
    assert [e["position"] for e in listing] == list(range(len(listing)))
    assert [e["id"] for e in listing] == sorted(e["id"] for e in listing)  # ids follow the queue: no gap marks a check
    # The project page and the manager's pages are not the annotator's.
    assert client.get("/projects/gc/annotator-quality/").status_code == 404
    assert client.get("/api/projects/gc/annotator-quality/").status_code == 404
