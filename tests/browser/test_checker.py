"""The checker review in Chromium: one response in one cohort, every annotator side by side.

With overlap 2 the annotators disagree on some criteria; the checker sees both on one page,
resolves the disagreements and overrides a shared decision with the keyboard only (a typed note
fires no shortcut), completes the review with Enter, both assignments become checked, and the
agreement command uses the checker's decisions."""
import json
import re
from io import StringIO

from django.core.management import call_command
from playwright.sync_api import expect

from tests.annotation.conftest import MODELS, PASSWORD, build_study, first_assignment
from tests.browser.conftest import scripts_ready


def _label_and_submit(user, assignment, decide):
    from annotation.assignments import assignment_submit
    from annotation.selectors import criteria_for_response
    from annotation.services import label_record

    for c in criteria_for_response(response=assignment.response):
        label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=user, rationale=f"{user.username} on {c.position}",
                     **decide(c))
    assignment_submit(assignment=assignment, user=user)


def test_checker_resolves_two_annotators_with_the_keyboard(page, login, transactional_db):
    from annotation.models import Assignment, Label, LabelHistory

    study = build_study(slug="dual", n_cases=1, n_criteria=3, overlap=2, annotators=(("a1", "a2"), ("b1", "b2")))
    mine = first_assignment("a1")
    response = mine.response
    said = {  # criterion position -> decision of a1, a2 (cohort 1) and of b1 = b2 (cohort 2)
        0: ("met", "not_met", "met"), 1: ("met", "met", "not_met"), 2: ("met", "met", "met"), 3: ("ok", "good", "good"),
    }
    for username, column in (("a1", 0), ("a2", 1), ("b1", 2), ("b2", 2)):
        assignment = Assignment.objects.get(response=response, annotator__username=username)
        _label_and_submit(study.users[username], assignment, lambda c, i=column: (
            {"verdict": said[c.position][i]} if c.kind == "binary" else {"option_label": said[c.position][i]}))

    login("chk1", PASSWORD)
    page.get_by_role("link", name=re.compile("Review queue")).click()
    row = page.locator(f"tr[data-response='{response.pk}']")
    expect(row).to_contain_text("a1, a2")
    expect(row).to_contain_text("2")  # disagreements: criteria 1 and 4
    row.get_by_role("link", name="Review").click()
    scripts_ready(page)
    expect(page.locator(".counter")).to_have_text("0 / 4 decided by you")
    rows = page.locator("form.review-row")
    first = rows.nth(0)
    expect(first.locator(".vote")).to_have_count(2)  # both annotators on one page
    expect(first.locator(".vote-decision").nth(0)).to_have_text("met")
    expect(first.locator(".vote-decision").nth(1)).to_have_text("not met")
    expect(first).to_contain_text("a2 on 0")  # the rationale of each
    for model in MODELS:
        assert model not in page.content()

    page.keyboard.press("1")  # criterion 1 (highlighted first): the annotators disagree, met resolves it
    expect(rows.nth(0).locator(".checker-decision")).to_have_text("met")
    page.keyboard.press("j")
    page.keyboard.press("2")  # criterion 2: both said met; overriding asks for a note first
    note = rows.nth(1).locator("[data-note]")
    expect(note).to_be_focused()
    expect(rows.nth(1).locator(".note-hint")).to_contain_text("override")
    page.keyboard.type("just kidding? no: the key finding is absent, they said yes in error")
    page.keyboard.press("Enter")
    expect(rows.nth(1).locator(".checker-decision")).to_have_text("not met")
    assert LabelHistory.objects.filter(action="override", note__contains="the key finding is absent").count() == 1
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("3")  # criterion 4, ordinal: a1 ok vs a2 good, the checker takes good
    expect(rows.nth(3).locator(".checker-decision")).to_have_text("good")
    expect(page.locator(".counter")).to_have_text("3 / 4 decided by you")
    # The typed sentence fired no shortcut: only the three decisions above exist.
    assert Label.objects.filter(role="checker").count() == 3
    page.keyboard.press("Enter")  # complete: criterion 3 (shared "met") is confirmed on the way
    expect(page.locator(".messages")).to_contain_text("Checked (a1, a2)")

    assert set(Assignment.objects.filter(response=response, cohort__name="group-1").values_list("status", flat=True)) == {
        "checked"}
    checker = {label.criterion.position: label.verdict or label.option_label
               for label in Label.objects.filter(role="checker").select_related("criterion")}
    assert checker == {0: "met", 1: "not_met", 2: "met", 3: "good"}
    out = StringIO()
    call_command("agreement", "--project", "dual", "--a", "cohort:group-1", "--b", "cohort:group-2", "--json", stdout=out)
    result = json.loads(out.getvalue())
    # Without the checker, criterion 1 is a tie and criterion 2 disagrees; with it, group 1 = group 2.
    assert (result["n_decisions"], result["percent_agreement"], result["ordinal"]["exact"]) == (3, 1.0, 1.0)


def test_checker_confirms_and_overrides_one_with_the_mouse(page, login, transactional_db):
    from annotation.models import Assignment, Label, LabelHistory

    build_study(slug="check", n_cases=1, n_criteria=3)
    a = first_assignment("a1")
    _label_and_submit(a.annotator, a, lambda c: {"verdict": "met"} if c.kind == "binary" else {"option_label": "good"})
    login("chk1", PASSWORD)
    page.goto(f"/review/items/{a.response_id}/")
    first = page.locator("form.review-row").nth(0)
    first.get_by_label("Note").fill("The response never recommends an ECG")
    first.get_by_role("button", name=re.compile("^Not met")).click()
    expect(page.locator("form.review-row").nth(0).locator(".checker-decision")).to_have_text("not met")
    page.locator("form.review-row").nth(1).get_by_role("button", name=re.compile("^Confirm shared")).click()
    expect(page.locator(".counter")).to_have_text("2 / 4 decided by you")
    page.get_by_role("button", name=re.compile("^Complete review")).click()
    expect(page.locator(".messages")).to_contain_text("Checked")
    a.refresh_from_db()
    assert a.status == Assignment.CHECKED
    checker = {row.criterion.position: row for row in Label.objects.filter(role="checker").select_related("criterion")}
    assert len(checker) == 4 and checker[0].verdict == "not_met" and checker[1].verdict == "met"
    assert checker[3].option_label == "good"
    assert "never recommends an ECG" in LabelHistory.objects.get(action="override").note
    assert Label.objects.get(annotator__username="a1", criterion__position=0).verdict == "met"


def test_a_failed_review_click_is_shown_not_lost(page, login, transactional_db):
    from annotation.models import Label

    build_study(slug="flaky", n_cases=1, n_criteria=2, with_ordinal=False)
    a = first_assignment("a1")
    _label_and_submit(a.annotator, a, lambda c: {"verdict": "met"})
    login("chk1", PASSWORD)
    page.goto(f"/review/items/{a.response_id}/")
    pattern = re.compile(r".*/review/items/\d+/criteria/\d+/$")
    page.route(pattern, lambda route: route.fulfill(status=503, body="down"))
    row = page.locator("form.review-row").nth(0)
    row.get_by_role("button", name=re.compile("^Confirm shared")).click()
    expect(row.locator(".send-error")).to_contain_text("Not saved")
    assert not Label.objects.filter(role="checker").exists()
    page.unroute(pattern)
    row.get_by_role("button", name=re.compile("^Confirm shared")).click()
    expect(page.locator("form.review-row").nth(0).locator(".checker-decision")).to_have_text("met")
    assert Label.objects.filter(role="checker").count() == 1
