"""An adjudicator in Chromium (issue 10, "Done when"): logs in, clicks from the project page to
the queue, resolves every disputed criterion of the first item with the keyboard only (decision,
confidence, error category, a typed note that fires no shortcut), sees it saved and the queue
shrink, exports gold from the project page as a background job whose page polls until the .zip is
ready, and finds the download's manifest hashes and provenance right. The same adjudicator cannot
start a judge run, assign work or import (403, pages and API), and sees nothing of a project where
they have no role (404). Keys pressed while a criterion is still saving are not lost."""
import hashlib
import io
import json
import re
import zipfile

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.browser.conftest import scripts_ready, settled
from tests.bundles import bundle_parts, write_bundle
from tests.roles import grant

PASSWORD = "pw-adj-12345"
M, N = "met", "not_met"
# (response, criterion) -> (group-1's decision, group-2's). Disputed: r1 on ecg, abx and the ordinal
# clarity; r2 on ecg; r3 on tone. Everything else is agreed.
DECISIONS = {
    "r1": {"c1-ecg": (M, N), "c1-call": (M, M), "c1-abx": (N, M), "c1-clarity": ("good", "poor")},
    "r2": {"c1-ecg": (N, M), "c1-call": (N, N), "c1-abx": (M, M), "c1-clarity": ("ok", "ok")},
    "r4": {"c1-ecg": (M, M), "c1-call": (M, M), "c1-abx": (N, N), "c1-clarity": ("good", "good")},
    "r3": {"tone": ("good", "poor"), "length": ("right", "right")},
}
ANNOTATORS = {"group-1": ("ann1", "ann2"), "group-2": ("ann3",)}


def _parts(slug: str, name: str) -> dict:
    parts = bundle_parts()
    parts["project"].update(slug=slug, name=name)
    parts["cases"][0]["criteria"].append({
        "criterion_id": "c1-clarity", "text": "Explains the next steps clearly", "kind": "ordinal",
        "options": [{"label": "poor", "value": 0}, {"label": "ok", "value": 0.5}, {"label": "good", "value": 1}]})
    parts["labels"] = []
    for response_id, criteria in DECISIONS.items():
        for criterion_id, pair in criteria.items():
            for (cohort, annotators), decision in zip(ANNOTATORS.items(), pair):
                key = "verdict" if decision in (M, N) else "option"
                parts["labels"] += [{"response_id": response_id, "criterion_id": criterion_id, "cohort": cohort,
                                     "annotator": annotator, key: decision, "rationale": f"{annotator} says {decision}"}
                                    for annotator in annotators]
    return parts


@pytest.fixture
def study(transactional_db, tmp_path, settings, monkeypatch, screenshots):
    """Project "ward" (the adjudicator's) and "other" (no role there). Jobs are queued for the test,
    which plays the Celery worker, so the job page is seen polling before the file is ready."""
    from django.core.cache import cache

    from annotation.models import Project
    from grading import tasks
    from grading.bundles import bundle_import

    cache.clear()  # the local-memory cache outlives the database of earlier tests
    settings.EVALSITE_JOBS_DIR = tmp_path / "jobs"
    queued: list[int] = []
    monkeypatch.setattr(tasks.data_job_task, "delay", lambda *, job_id: queued.append(job_id))
    bundle_import(path=write_bundle(tmp_path / "ward", _parts("ward", "Ward study")))
    bundle_import(path=write_bundle(tmp_path / "other", _parts("other", "Other study")))
    adjudicator = get_user_model().objects.create_user("adj", password=PASSWORD)
    grant(adjudicator, Project.objects.get(slug="ward"), "adjudicator")
    return {"ward": Project.objects.get(slug="ward"), "other": Project.objects.get(slug="other"), "user": adjudicator,
            "queued": queued, "shots": screenshots}


def _open_count(page) -> int:
    return int(re.search(r"(\d+) open", page.locator("#queue-progress .counter").inner_text()).group(1))


def _row(page, criterion_pk):
    return page.locator(f"#crit-{criterion_pk}")


def test_adjudicator_resolves_an_item_with_the_keyboard_and_exports_gold(page, login, study, tmp_path):
    from annotation.models import Criterion, Response
    from grading.jobs import data_job_run
    from grading.models import Adjudication, DataJob

    ward = study["ward"]
    crit = {c.external_id: c.pk for c in Criterion.objects.filter(project=ward)}
    r1 = Response.objects.get(project=ward, external_id="r1")

    login("adj", PASSWORD)
    page.locator("#research-projects").get_by_role("link", name="Ward study").click()
    expect(page.locator("h1")).to_contain_text("Ward study")
    page.locator("#project-adjudication").get_by_role("link", name="Adjudication queue").click()
    expect(page.locator("h1")).to_have_text("Adjudication queue")
    open_before = _open_count(page)
    assert open_before == 3
    rows = page.locator("#queue tbody tr[data-response]")
    expect(rows).to_have_count(3)
    assert rows.nth(0).get_attribute("data-response") == str(r1.pk)  # case c1 has the lowest MF1; r1 comes first
    expect(rows.nth(0).locator("td").nth(5)).to_have_text("3 / 3")
    page.screenshot(path=str(study["shots"] / "adjudication-queue.png"), full_page=True)

    rows.nth(0).get_by_role("link", name="Adjudicate").click()
    scripts_ready(page)  # the click returns once the page is there, maybe before its keyboard
    expect(page.locator("h1")).to_contain_text("response r1")
    counter = page.locator("#adjudication-progress .counter")
    expect(counter).to_have_text("3 of 3 disputed criteria still open")
    ecg, call, abx, clarity = (_row(page, crit[c]) for c in ("c1-ecg", "c1-call", "c1-abx", "c1-clarity"))
    expect(ecg).to_have_attribute("aria-current", "true")  # the first disputed criterion is highlighted
    expect(call.locator("details")).not_to_have_attribute("open", "")  # agreed: folded

    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    page.screenshot(path=str(study["shots"] / "adjudication-item-help.png"), full_page=False)
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_hidden()

    # criterion 1 (ecg): met, probable, annotator slip, and a typed note
    page.keyboard.press("1")
    expect(ecg.locator(".final-decision")).to_have_text("met")
    page.keyboard.press("Shift+P")
    expect(ecg.locator(".confidence button[value=probable]")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("g")
    expect(ecg.locator("select[data-category]")).to_be_focused()
    for _ in range(3):  # "—" is last; up three: other, judge error, annotator slip
        page.keyboard.press("ArrowUp")
    expect(ecg.locator("select[data-category]")).to_have_value("annotator_slip")
    page.keyboard.press("Escape")
    expect(ecg.locator(".adjudicated")).to_contain_text("annotator slip")
    page.keyboard.press("n")
    expect(ecg.locator("[data-note]")).to_be_focused()
    note = "j1n? k2 d: the ECG is implied by 'cardiac workup'"
    page.keyboard.type(note)
    # typing fired no shortcut: still on criterion 1, no help, no other decision
    expect(ecg).to_have_attribute("aria-current", "true")
    expect(page.locator("#help")).to_be_hidden()
    expect(ecg.locator(".final-decision")).to_have_text("met")
    expect(ecg.locator(".confidence button[value=probable]")).to_have_attribute("aria-pressed", "true")  # "C" of ECG
    page.keyboard.press("Enter")
    expect(ecg.locator(".adjudicated")).to_contain_text(note)
    expect(ecg).to_have_attribute("aria-current", "true")
    assert Adjudication.objects.filter(response=r1).count() == 1

    # d skips the agreed criterion 2 and goes to 3 (abx): not met, certain
    page.keyboard.press("d")
    expect(abx).to_have_attribute("aria-current", "true")
    page.keyboard.press("2")
    expect(abx.locator(".final-decision")).to_have_text("not met")
    page.keyboard.press("Shift+C")
    expect(abx.locator(".confidence button[value=certain]")).to_have_attribute("aria-pressed", "true")
    # k / j move one criterion; 4 (clarity, ordinal): option 2 = ok, uncertain, category by its first letter
    page.keyboard.press("k")
    expect(call).to_have_attribute("aria-current", "true")
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(clarity).to_have_attribute("aria-current", "true")
    page.keyboard.press("2")
    expect(clarity.locator(".final-decision")).to_have_text("ok")
    page.keyboard.press("Shift+U")
    expect(clarity.locator(".confidence button[value=uncertain]")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("g")
    page.keyboard.press("r")  # type-ahead in the select: "rubric ambiguity"
    page.keyboard.press("Escape")
    expect(clarity.locator(".adjudicated")).to_contain_text("rubric ambiguity")
    expect(counter).to_have_text("0 of 3 disputed criteria still open")
    assert not call.locator(".final-decision").count()  # the agreed criterion was left alone
    page.screenshot(path=str(study["shots"] / "adjudication-item.png"))  # the viewport: the case and progress are sticky

    page.reload()  # everything is saved
    expect(counter).to_have_text("0 of 3 disputed criteria still open")
    expect(ecg.locator("button[value='verdict:met']")).to_have_attribute("aria-pressed", "true")
    expect(ecg.locator("select[data-category]")).to_have_value("annotator_slip")
    expect(ecg.locator("[data-note]")).to_have_value(note)
    expect(abx.locator("button[value='verdict:not_met']")).to_have_attribute("aria-pressed", "true")
    expect(clarity.locator("button[value='option:ok']")).to_have_attribute("aria-pressed", "true")
    expect(ecg.locator(".adjudicated")).to_contain_text("by adj")
    saved = {a.criterion.external_id: a for a in Adjudication.objects.filter(response=r1).select_related("criterion")}
    assert {k: (a.verdict or a.option_label, a.confidence, a.category, a.note, a.adjudicator) for k, a in saved.items()} == {
        "c1-ecg": (M, "probable", "annotator_slip", note, study["user"]),
        "c1-abx": (N, "certain", "", "", study["user"]),
        "c1-clarity": ("ok", "uncertain", "rubric_ambiguity", "", study["user"]),
    }

    page.keyboard.press("Enter")  # on to the next open item
    expect(page.locator("h1")).to_contain_text("response r2")
    page.locator("p.muted").get_by_role("link", name="adjudication").click()
    expect(page.locator("h1")).to_have_text("Adjudication queue")
    assert _open_count(page) == open_before - 1
    expect(page.locator(f"#queue tr[data-response='{r1.pk}']")).to_have_count(0)
    expect(page.locator("#queue tbody tr[data-response]")).to_have_count(2)
    page.screenshot(path=str(study["shots"] / "adjudication-queue-after.png"), full_page=True)

    # gold export from the project page: a background job; its page polls until the file is ready
    page.locator("p.muted").get_by_role("link", name="Ward study").click()
    settled(page)  # loaded: a count of 0 read while the page is still coming in would prove nothing
    expect(page.locator("#import-form")).to_have_count(0)  # adjudicators export, never import
    page.get_by_role("tab", name="Data").click()  # the project page in parts: the data part holds the export
    page.locator("#export-gold").click()
    expect(page.locator("#data-section .job-banner")).to_contain_text("queued; it starts when a worker is free")
    job_cell = page.locator("#data-section .job-status").first
    expect(job_cell).to_have_attribute("data-status", "queued")
    page.screenshot(path=str(study["shots"] / "adjudication-project-data.png"), full_page=True)
    job = DataJob.objects.get(project=ward, kind="export")
    assert study["queued"] == [job.pk]
    # The job page's polls wait while this thread plays the worker (SQLite's shared in-memory test
    # database refuses a write while another thread reads), then the next poll says "finished".
    polls = {"worker_done": False, "held": []}

    def hold_polls(route):
        if polls["worker_done"] or not route.request.headers.get("hx-request"):
            route.continue_()
        else:
            polls["held"].append(route)

    page.route(re.compile(rf".*/jobs/{job.pk}/(\?banner=1)?$"), hold_polls)
    page.locator("#data-section").get_by_role("link", name=f"Gold export #{job.pk}").click()
    expect(page.locator("h1")).to_contain_text(f"Gold export #{job.pk}")
    expect(page.locator(".messages")).to_have_count(0)  # "queued" was said on the project page, not again here
    expect(page.locator(f"#job-{job.pk} progress")).to_be_visible()
    page.screenshot(path=str(study["shots"] / "adjudication-job-queued.png"))
    page.evaluate("window.sameDocument = true")
    assert data_job_run(job_id=job.pk).status == "finished"  # the worker
    polls["worker_done"] = True
    for route in polls["held"]:
        route.continue_()
    download_link = page.get_by_role("link", name="Download .zip")
    expect(download_link).to_be_visible()
    assert page.evaluate("window.sameDocument === true")  # no reload: the page polled
    page.screenshot(path=str(study["shots"] / "adjudication-job.png"), full_page=True)
    with page.expect_download() as download:
        download_link.click()
    assert re.fullmatch(r"ward-gold-\d{8}-\d{6}\.zip", download.value.suggested_filename)
    path = tmp_path / "gold.zip"
    download.value.save_as(path)

    archive = zipfile.ZipFile(io.BytesIO(path.read_bytes()))
    files = {name.split("/", 1)[1]: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(files.pop("manifest.json"))
    assert set(manifest["files"]) == set(files)
    for name, content in files.items():
        assert hashlib.sha256(content).hexdigest() == manifest["files"][name], name
    gold = {(g["response_id"], g["criterion_id"]): g for g in map(json.loads, files["gold.jsonl"].decode().splitlines())}
    counted = {name: sum(1 for g in gold.values() if g["provenance"] == name) for name in manifest["provenance"]}
    assert manifest["provenance"] == counted == {"agreed": 9, "adjudicated": 3, "single-cohort": 0, "unresolved": 2}
    for criterion_id, (decision, confidence, category) in {
            "c1-ecg": (M, "probable", "annotator_slip"), "c1-abx": (N, "certain", ""),
            "c1-clarity": ("ok", "uncertain", "rubric_ambiguity")}.items():
        row = gold[("r1", criterion_id)]
        assert (row["provenance"], row["adjudicator"], row["confidence"], row.get("category") or "") == (
            "adjudicated", "adj", confidence, category), criterion_id
        assert decision in (row.get("verdict"), row.get("option")), row
    assert gold[("r1", "c1-ecg")]["note"] == note
    assert gold[("r1", "c1-ecg")]["cohort_decisions"] == {"group-1": {"verdict": M}, "group-2": {"verdict": N}}
    assert {key for key, g in gold.items() if g["provenance"] == "unresolved"} == {("r2", "c1-ecg"), ("r3", "tone")}
    assert len(files["adjudications.jsonl"].splitlines()) == 3
    assert len(files["gold.csv"].decode().splitlines()) == 1 + len(gold)


def test_keys_pressed_while_a_row_is_saving_are_not_lost(page, login, study):
    """Each answer replaces its row with a new revision, so a second request from the row before
    the first comes back would be dropped by htmx: the page holds it and sends it afterwards, and
    text typed meanwhile is carried into the new row. The server's answers are held here until
    every key has been pressed, then let through one row at a time (SQLite's shared in-memory test
    database refuses two writers at once)."""
    from annotation.models import Criterion, Response
    from grading.models import Adjudication

    ward = study["ward"]
    r1 = Response.objects.get(project=ward, external_id="r1")
    crit = {c.external_id: c.pk for c in Criterion.objects.filter(project=ward)}
    ecg, abx = _row(page, crit["c1-ecg"]), _row(page, crit["c1-abx"])
    login("adj", PASSWORD)
    page.goto(f"/projects/ward/adjudication/items/{r1.pk}/")
    expect(ecg).to_have_attribute("aria-current", "true")
    closed = {crit["c1-ecg"]: [], crit["c1-abx"]: []}  # criterion -> its held requests, while held

    def hold(route):
        held = closed.get(int(route.request.url.rstrip("/").rsplit("/", 1)[1]))
        if held is None:
            route.continue_()
        else:
            held.append(route)

    def release(criterion):
        for route in closed.pop(criterion):
            route.continue_()

    page.route(re.compile(r".*/adjudication/items/\d+/criteria/\d+/$"), hold)
    page.keyboard.press("1")  # criterion 1's save is on its way (held) ...
    page.keyboard.press("Shift+P")  # ... so these wait for it
    page.keyboard.press("n")
    page.keyboard.type("kept while saving: j1 d?")
    page.keyboard.press("Escape")
    page.keyboard.press("d")
    page.keyboard.press("2")  # criterion 3: its own save
    expect(page.locator("#rubric form.htmx-request")).to_have_count(2)
    release(crit["c1-ecg"])
    expect(ecg.locator(".adjudicated")).to_contain_text("met · probable")
    expect(ecg.locator(".adjudicated")).to_contain_text("kept while saving: j1 d?")
    expect(ecg.locator("[data-note]")).to_have_value("kept while saving: j1 d?")
    release(crit["c1-abx"])
    expect(abx.locator(".final-decision")).to_have_text("not met")
    expect(page.locator("#help")).to_be_hidden()
    expect(page.locator("#rubric .send-error")).to_have_count(0)
    expect(page.locator("#rubric form.htmx-request")).to_have_count(0)
    saved = {a.criterion.external_id: (a.verdict, a.confidence, a.note) for a in
             Adjudication.objects.filter(response=r1).select_related("criterion")}
    assert saved == {"c1-ecg": (M, "probable", "kept while saving: j1 d?"), "c1-abx": (N, "", "")}


def test_enter_on_a_button_reached_with_tab_presses_it(page, login, study):
    """Enter means "next item" only when no button has focus: a button reached with Tab is pressed."""
    from annotation.models import Response

    r1 = Response.objects.get(project=study["ward"], external_id="r1")
    login("adj", PASSWORD)
    page.goto(f"/projects/ward/adjudication/items/{r1.pk}/")
    first = page.locator("#rubric form.adjudication-row").first
    first.locator("button[value='verdict:met']").focus()
    page.keyboard.press("Tab")  # on to "Not met"
    page.keyboard.press("Enter")
    expect(first.locator(".final-decision")).to_have_text("not met")
    assert page.url.endswith(f"/items/{r1.pk}/")
    page.keyboard.press("Enter")  # the pressed button was replaced with the row: now Enter is "next item"
    try:
        expect(page.locator("h1")).to_contain_text("response r2")
    except AssertionError as exc:  # the page it went to instead, and what that page said
        raise AssertionError(f"{exc}\n{page.url} said: {page.locator('main').inner_text()[:600]!r}") from None


def _post(page, url: str, **kwargs):
    """A POST with the session and the CSRF token of the logged-in page, so a 403 is the role's, not CSRF's."""
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    headers = {"X-CSRFToken": token, "Referer": page.url, **kwargs.pop("headers", {})}
    return page.request.post(url, headers=headers, max_redirects=0, **kwargs)


def _bundle_zip(tmp_path, slug: str) -> bytes:
    folder = write_bundle(tmp_path / f"upload-{slug}", _parts(slug, "Uploaded"))
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for path in folder.iterdir():
            archive.write(path, f"{slug}/{path.name}")
    return data.getvalue()


def test_adjudicator_cannot_run_assign_or_import_nor_see_other_projects(page, login, study, tmp_path):
    from annotation.models import Assignment, CohortMembership, ProjectRole, Response
    from grading.models import DataJob, Judge, JudgeRun

    ward, other = study["ward"], study["other"]
    judge = Judge.objects.get(project=ward, name="judge-a")
    cohort = ward.cohorts.get(name="group-1")
    annotator = get_user_model().objects.create_user("ann9", password=PASSWORD)
    CohortMembership.objects.create(project=ward, cohort=cohort, user=annotator)
    assignment = Assignment.objects.create(project=ward, cohort=cohort, annotator=annotator,
                                           response=Response.objects.get(project=ward, external_id="r4"))
    other_response = Response.objects.get(project=other, external_id="r1")
    other_criterion = other.criteria.get(external_id="c1-ecg")
    before = (JudgeRun.objects.count(), Assignment.objects.count(), list(ProjectRole.objects.values_list("user", "role")))
    upload = {"bundle": {"name": "ward.zip", "mimeType": "application/zip", "buffer": _bundle_zip(tmp_path, "ward")}}

    login("adj", PASSWORD)
    projects = page.locator("#research-projects")
    expect(projects).to_contain_text("Ward study")
    expect(projects).not_to_contain_text("Other study")  # a project without a role is not listed
    expect(projects.get_by_role("link", name="assignments")).to_have_count(0)
    projects.get_by_role("link", name="Ward study").click()
    settled(page)  # loaded: a count of 0 read while the page is still coming in would prove nothing
    for section in ("#project-judges", "#project-assignments", "#import-form"):  # no way in from the page
        expect(page.locator(section)).to_have_count(0)
    page.get_by_role("tab", name="Data").click()
    expect(page.locator("#export-gold")).to_be_visible()

    # the pages: starting a judge run, assigning work, importing a bundle (and granting roles)
    for url in ("/projects/ward/judges/", "/projects/ward/judges/runs/", "/projects/ward/assignments/"):
        response = page.goto(url)
        assert response.status == 403, url
        expect(page.locator("body")).not_to_contain_text("CSRF verification failed")
    posts = {
        "/projects/ward/judges/runs/start/": {"form": {"judge": str(judge.pk)}},
        "/projects/ward/judges/": {"form": {"action": "judge", "judge-name": "mine", "judge-backend": "replay"}},
        "/projects/ward/assignments/assign/": {"form": {"cohort": str(cohort.pk), "overlap": "1", "method": "round_robin"}},
        f"/projects/ward/assignments/{assignment.pk}/reassign/": {"form": {"username": "adj"}},
        f"/projects/ward/assignments/{assignment.pk}/reopen/": {"form": {"reason": "again"}},
        "/projects/ward/roles/": {"form": {"username": "adj", "role": "manager"}},
        "/projects/ward/import/": {"multipart": upload},
        "/projects/import/": {"multipart": upload},
    }
    for url, body in posts.items():
        response = _post(page, url, **body)
        assert response.status == 403, (url, response.status)
        assert "CSRF verification failed" not in response.text(), url
    # the same POST helper passes CSRF: an action the adjudicator may do succeeds
    assert _post(page, "/projects/ward/export/", headers={"HX-Request": "true"}).status == 200

    # the API: an annotator's own labels and submissions never reach another user's assignment,
    # and the managers' writes (runs, judges, assignments, members, roles, imports) are refused.
    schema = json.loads(page.request.get("/api/schema/?format=json").text())
    writes = {path for path, operations in schema["paths"].items() if set(operations) & {"post", "put", "patch", "delete"}}
    managers = {"/api/projects/", "/api/projects/{slug}/import/", "/api/projects/{slug}/roles/",
                "/api/projects/{slug}/cohorts/{cohort_id}/members/", "/api/projects/{slug}/assignments/",
                "/api/projects/{slug}/assignments/{assignment_id}/reassign/", "/api/projects/{slug}/judges/",
                "/api/projects/{slug}/judges/{judge_id}/", "/api/projects/{slug}/runs/",
                "/api/projects/{slug}/runs/{run_id}/stop/", "/api/projects/{slug}/runs/{run_id}/resume/",
                "/api/projects/{slug}/routing/", "/api/projects/{slug}/annotator-quality/",
                "/api/projects/{slug}/annotator-quality/checks/"}
    assert writes == {"/api/labels/", "/api/assignments/{assignment_id}/submit/", "/api/assignments/{assignment_id}/labels/",
                      "/api/projects/{slug}/adjudications/", "/api/projects/{slug}/gold/"} | managers, (
        "a new write API: check here that an adjudicator cannot use it")
    cohort_row = ward.cohorts.first()
    for path in sorted(managers):
        url = path.format(slug="ward", cohort_id=cohort_row.pk, assignment_id=assignment.pk, judge_id=judge.pk, run_id=1)
        if path.endswith(("/projects/", "/import/")):  # bundle uploads take multipart only
            response = _post(page, url, multipart=upload)
        elif path.endswith(("{judge_id}/", "/annotator-quality/")):  # changed with PATCH (a judge: deleted with DELETE)
            token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
            for method in ("PATCH", "DELETE") if path.endswith("{judge_id}/") else ("PATCH",):
                response = page.request.fetch(url, method=method, data=json.dumps({"temperature": 1}),
                                              headers={"X-CSRFToken": token, "Referer": page.url,
                                                       "Content-Type": "application/json"})
                assert response.status == 403, (method, url, response.status)
        else:
            response = _post(page, url, data=json.dumps({"judge": judge.name, "cohort": cohort_row.name, "username": "adj",
                                                        "role": "manager", "annotator": "adj", "name": "mine", "budget": 1}),
                             headers={"Content-Type": "application/json"})
        assert response.status in (403, 404), (url, response.status)
    criterion = ward.criteria.get(external_id="c1-ecg")
    api = {
        "/api/labels/": {"data": {"assignment": assignment.pk, "criterion": criterion.pk, "verdict": "met", "revision": 0}},
        f"/api/assignments/{assignment.pk}/submit/": {},
        f"/api/assignments/{assignment.pk}/labels/": {"data": json.dumps([{"criterion": criterion.pk, "verdict": "met", "revision": 0}]),
                                                      "headers": {"Content-Type": "application/json"}},
    }
    for url, body in api.items():
        response = _post(page, url, **body)
        assert response.status in (403, 404), (url, response.status)
    assert page.request.get(f"/api/assignments/{assignment.pk}/").status == 404
    assert page.request.get("/api/assignments/").json()["results"] == []
    assert page.request.get("/api/projects/ward/decisions/?source=gold").status == 200
    assert (JudgeRun.objects.count(), Assignment.objects.count(), list(ProjectRole.objects.values_list("user", "role"))) == before
    assert not DataJob.objects.filter(kind="import").exists()

    # the other project: 404 everywhere, its name never shown
    urls = [
        "/projects/other/", "/projects/other/adjudication/", f"/projects/other/adjudication/items/{other_response.pk}/",
        f"/projects/ward/adjudication/items/{other_response.pk}/", "/projects/other/reports/",
        "/projects/other/reports/agreement/", "/projects/other/judges/", "/projects/other/assignments/",
        f"/responses/{other_response.pk}/side-by-side/", "/api/projects/other/decisions/?source=gold",
    ]
    for url in urls:
        response = page.goto(url)
        assert response.status == 404, (url, response.status)
        assert "Other study" not in page.content(), url
    for url, body in {
        f"/projects/other/adjudication/items/{other_response.pk}/criteria/{other_criterion.pk}/": {"form": {"choice": "verdict:met"}},
        "/projects/other/export/": {}, "/projects/other/import/": {"multipart": upload},
        "/projects/other/judges/runs/start/": {"form": {"judge": str(Judge.objects.get(project=other).pk)}},
    }.items():
        assert _post(page, url, **body).status == 404, url
    assert not other.adjudications.exists() and not DataJob.objects.filter(project=other).exists()


def test_only_the_focused_criterions_quotes_are_marked(page, login, transactional_db, tmp_path, screenshots):
    """Issue 25 point 5: the response marks the quotes of the criterion the adjudicator is on, in
    its cohort's colour, not every rater's quotes at once; a toggle shows them all."""
    from annotation.models import Criterion, Project, Response
    from grading.bundles import bundle_import

    parts = _parts("ward", "Ward study")
    for label in parts["labels"]:
        if label["response_id"] == "r1" and label["criterion_id"] == "c1-ecg":
            label["evidence"] = ["An ECG is needed."]
        if label["response_id"] == "r1" and label["criterion_id"] == "c1-abx":
            label["evidence"] = ["Call emergency services now."]
    bundle_import(path=write_bundle(tmp_path / "ward", parts))
    ward = Project.objects.get(slug="ward")
    grant(get_user_model().objects.create_user("adj", password=PASSWORD), ward, "adjudicator")
    crit = {c.external_id: c.pk for c in Criterion.objects.filter(project=ward)}
    login("adj", PASSWORD)
    page.goto(f"/projects/ward/adjudication/items/{Response.objects.get(project=ward, external_id='r1').pk}/")
    scripts_ready(page)
    body = page.locator("#response-body")
    expect(_row(page, crit["c1-ecg"])).to_have_attribute("aria-current", "true")
    expect(body.locator("mark.quote.on")).to_have_text(["An ECG is needed."])  # the focused criterion's quote only
    _row(page, crit["c1-abx"]).click()
    expect(_row(page, crit["c1-abx"])).to_have_attribute("aria-current", "true")
    expect(body.locator("mark.quote.on")).to_have_text(["Call emergency services now."])
    assert "rgba(0, 0, 0, 0)" in body.locator("mark.quote", has_text="An ECG").evaluate("m => getComputedStyle(m).backgroundColor")
    page.locator("#all-quotes").check()
    for text in ("An ECG is needed.", "Call emergency services now."):
        assert "rgba(0, 0, 0, 0)" not in body.locator("mark.quote", has_text=text).evaluate(
            "m => getComputedStyle(m).backgroundColor")
    page.screenshot(path=str(screenshots / "adjudication-quotes.png"), full_page=True)


def test_the_queue_counted_in_the_background_appears_by_itself(page, login, study, monkeypatch):
    """The first look at a project's queue, with nothing counted yet and a worker that has not run the
    count: the page says it is counting, then shows the queue once the count is there, unreloaded."""
    from grading.reports import tasks

    counts: list[dict] = []
    monkeypatch.setattr(tasks.queue_count_task, "delay", lambda **kwargs: counts.append(kwargs))
    login("adj", PASSWORD)
    page.goto("/projects/ward/adjudication/")
    expect(page.locator("#queue-counting")).to_contain_text("Counting the cohorts' decisions")
    expect(page.locator("#queue")).to_have_count(0)
    page.screenshot(path=str(study["shots"] / "adjudication-queue-counting.png"), full_page=True)
    assert counts == [{"project_id": study["ward"].pk}]

    tasks.queue_count_task(**counts[0])  # the worker's turn
    expect(page.locator("#queue tbody tr[data-response]")).to_have_count(3)
    expect(page.locator("#queue-counting")).to_have_count(0)
    assert len(counts) == 1  # the page's looks while it counted queued nothing more


def test_enter_while_a_save_is_on_its_way_asks_for_the_next_item_once(page, login, study):
    """Enter pressed while a row is saving waits for the answer, then goes on: one request for the
    next item, however many parts of the page the answer swaps in (two racing requests for it sent
    the adjudicator to the queue page while the first one counted the queue)."""
    from annotation.models import Response

    r1 = Response.objects.get(project=study["ward"], external_id="r1")
    login("adj", PASSWORD)
    page.goto(f"/projects/ward/adjudication/items/{r1.pk}/")
    expect(page.locator("#rubric form.adjudication-row").first).to_have_attribute("aria-current", "true")
    held, asked = [], []
    page.route(re.compile(r".*/adjudication/items/\d+/criteria/\d+/$"), lambda route: held.append(route))
    page.on("request", lambda request: asked.append(request.url) if "/adjudication/next/" in request.url else None)
    page.keyboard.press("1")  # the current criterion's save is on its way (held) ...
    expect(page.locator("#rubric form.htmx-request")).to_have_count(1)
    page.keyboard.press("Enter")  # ... so "next item" waits for it
    assert asked == []
    held.pop().continue_()
    expect(page.locator("h1")).to_contain_text("response r2")
    assert len(asked) == 1, asked
