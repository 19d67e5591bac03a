"""A checker reviews a submitted assignment in Chromium: sees the annotator's labels, overrides
one criterion with a note, confirms the rest; the checker labels become the cohort's labels."""
from playwright.sync_api import expect

from tests.annotation.conftest import MODELS, PASSWORD, build_study, first_assignment


def test_checker_confirms_and_overrides_one(page, login, transactional_db):
    from annotation.assignments import assignment_submit
    from annotation.models import Assignment, Label, LabelHistory
    from annotation.selectors import criteria_for_response
    from annotation.services import label_record

    study = build_study(slug="check", n_cases=1, n_criteria=3)
    a = first_assignment("a1")
    criteria = criteria_for_response(response=a.response)
    for c in criteria:
        label_record(assignment_id=a.pk, criterion_id=c.pk, user=study.users["a1"], rationale=f"why {c.position}",
                     **({"verdict": "met"} if c.kind == "binary" else {"option_label": "good"}))
    assignment_submit(assignment=a, user=study.users["a1"])

    login("chk1", PASSWORD)
    page.get_by_role("link", name="Review queue").click()
    page.get_by_role("link", name="Review").click()
    expect(page.locator(".counter")).to_have_text("0 / 4 reviewed")
    first = page.locator(".review-row").nth(0)
    expect(first.locator(".annotator-decision")).to_have_text("met")
    expect(first.locator(".rationale")).to_have_text("why 0")
    first.locator("summary").click()
    first.get_by_label("Not met").check()
    first.get_by_label("Note (why)").fill("The response never recommends an ECG")
    first.get_by_role("button", name="Override").click()
    first = page.locator(".review-row").nth(0)
    expect(first.locator(".checker-decision")).to_have_text("not met")
    expect(page.locator(".counter")).to_have_text("1 / 4 reviewed")
    page.locator(".review-row").nth(1).get_by_role("button", name="Confirm").click()
    expect(page.locator(".counter")).to_have_text("2 / 4 reviewed")
    for model in MODELS:
        assert model not in page.content()
    page.get_by_role("button", name="Confirm the rest and mark checked").click()
    expect(page.locator(".messages")).to_contain_text("Checked")

    a.refresh_from_db()
    assert a.status == Assignment.CHECKED
    checker = {l.criterion.position: l for l in Label.objects.filter(role="checker").select_related("criterion")}
    assert len(checker) == 4 and checker[0].verdict == "not_met" and checker[1].verdict == "met"
    assert checker[3].option_label == "good"
    override = LabelHistory.objects.get(action="override")
    assert "never recommends an ECG" in override.note
    assert Label.objects.get(annotator__username="a1", criterion__position=0).verdict == "met"


def test_a_failed_review_click_is_shown_not_lost(page, login, transactional_db):
    import re

    from annotation.assignments import assignment_submit
    from annotation.models import Label
    from annotation.selectors import criteria_for_response
    from annotation.services import label_record

    study = build_study(slug="flaky", n_cases=1, n_criteria=2, with_ordinal=False)
    a = first_assignment("a1")
    for c in criteria_for_response(response=a.response):
        label_record(assignment_id=a.pk, criterion_id=c.pk, user=study.users["a1"], verdict="met")
    assignment_submit(assignment=a, user=study.users["a1"])
    login("chk1", PASSWORD)
    page.goto(f"/review/assignments/{a.pk}/")
    page.route(re.compile(r".*/review/assignments/\d+/criteria/\d+/$"), lambda route: route.fulfill(status=503, body="down"))
    row = page.locator(".review-row").nth(0)
    row.get_by_role("button", name="Confirm").click()
    expect(row.locator(".send-error")).to_contain_text("Not saved")
    assert not Label.objects.filter(role="checker").exists()
    page.unroute(re.compile(r".*/review/assignments/\d+/criteria/\d+/$"))
    row.get_by_role("button", name="Confirm").click()
    expect(page.locator(".review-row").nth(0).locator(".checker-decision")).to_have_text("met")
    assert Label.objects.filter(role="checker").count() == 1
