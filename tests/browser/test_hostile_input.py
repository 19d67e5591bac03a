"""Hostile input in a real browser (issue 15, point 4). Every text a user or a bundle can put on a
page (response, case prompt, criterion, guidance, guidelines, rationale, quote, judge explanation,
model name) carries script tags, event handlers and javascript: / data: links. The pages are
visited by every kind of user who sees them; a canary the payloads would set must never be set,
no CSP violation may be reported (an escaped payload never reaches the point where the policy
has to refuse it), and no link on the page may point at javascript: or data:.

A response of one megabyte on a single line (25,000 sentences) keeps the labeling page usable:
it gets ready, lists every sentence, and a decision by key is saved. (How fast is a figure for
bench/, not an assertion here: on a loaded machine any wall-clock bound is a coin toss.)
"""
import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.annotation.conftest import PASSWORD, build_study
from tests.browser.conftest import scripts_ready, settled
from tests.roles import grant

PAYLOAD = ('<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
           '<a href="javascript:window.__xss=3">js link</a><a href="data:text/html,<script>window.__xss=4</script>">data link</a>'
           '<svg onload="window.__xss=5"></svg><iframe src="javascript:window.__xss=6"></iframe>'
           " [md link](javascript:window.__xss=7) [md data](data:text/html;base64,PHNjcmlwdD4=)"
           " ![img](x onerror=window.__xss=8) \" onmouseover=\"window.__xss=9\" '><b onclick=window.__xss=10>x</b>")
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


@pytest.fixture
def hostile(transactional_db):
    from django.contrib.auth import get_user_model

    from annotation.assignments import assignment_submit
    from annotation.models import Assignment, Case, Criterion, Project, Response
    from annotation.rubrics import criterion_guidance_update
    from annotation.services import label_record
    from grading.models import Judge, Judgment

    study = build_study(slug="ward", n_cases=1, n_criteria=3, annotators=(("a1",), ("b1",)))
    Project.objects.filter(pk=study.project.pk).update(guidelines="Read this. " + PAYLOAD, blind=False)
    Case.objects.filter(project=study.project).update(prompt="A patient asks. " + PAYLOAD)
    Response.objects.filter(project=study.project).update(text="The answer. " + PAYLOAD + " Call emergency services.",
                                                           model="model-" + PAYLOAD[:60])
    criteria = list(Criterion.objects.filter(project=study.project).order_by("position"))
    Criterion.objects.filter(pk=criteria[0].pk).update(text="Recommends care. " + PAYLOAD)
    criterion_guidance_update(criterion=criteria[0], guidance="Look for it. " + PAYLOAD)
    for username in ("a1", "b1"):
        assignment = Assignment.objects.get(annotator__username=username, response__position=0)
        for c in criteria:
            decision = {"verdict": "met" if username == "a1" else "not_met"} if c.kind == "binary" else {"option_label": "ok"}
            label_record(assignment_id=assignment.pk, criterion_id=c.pk, user=assignment.annotator,
                         rationale="Because " + PAYLOAD, evidence_add="Call emergency services", **decision)
        assignment_submit(assignment=assignment, user=assignment.annotator)  # for the checker's review
    response = Response.objects.get(project=study.project, position=0)
    judge = Judge.objects.create(project=study.project, name="judge-x", backend=Judge.REPLAY, model="m")
    for c in criteria:
        Judgment.objects.create(judge=judge, response=response, criterion=c, rubric_version_id=c.rubric_version_id,
                                condition="anonymized", verdict="met" if c.kind == "binary" else None,
                                option_label=None if c.kind == "binary" else "ok", explanation="Judged. " + PAYLOAD,
                                evidence=["Call emergency services", PAYLOAD])
    User = get_user_model()
    grant(User.objects.create_user("adj", password=PASSWORD), study.project, "adjudicator")
    return {"project": study.project, "response": response, "criterion": criteria[0],
            "assignment": Assignment.objects.get(annotator__username="a1", response__position=0)}


def _visit(page, path: str) -> None:
    response = page.goto(path)
    assert response.status < 400, (path, response.status)
    settled(page)
    page.mouse.move(300, 300)
    page.mouse.move(600, 500)
    state = page.evaluate("""() => ({
        xss: window.__xss === undefined ? null : window.__xss,
        violations: window.__violations,
        links: [...document.querySelectorAll('a[href], iframe[src], img[src]')]
            .map(e => e.getAttribute('href') || e.getAttribute('src'))
            .filter(u => /^\\s*(javascript|data):/i.test(u)),
        handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).length,
    })""")
    assert state == {"xss": None, "violations": [], "links": [], "handlers": 0}, (path, state)


def test_hostile_texts_are_inert_on_every_page_that_shows_them(page, login, hostile):
    page.add_init_script(WATCH)
    slug, response = hostile["project"].slug, hostile["response"]
    visits = {
        "a1": [reverse("label-page", args=[hostile["assignment"].pk]), reverse("my-items"), reverse("home")],
        "chk1": [reverse("review-queue", args=[slug]), reverse("review-page", args=[response.pk])],
        "adj": [reverse("adjudication-queue", args=[slug]), reverse("adjudication-item", args=[slug, response.pk]),
                reverse("response-side-by-side", args=[response.pk])],
        "res": [reverse("project-detail", args=[slug]), reverse("project-guidance", args=[slug]),
                reverse("project-audit", args=[slug]), reverse("judges-page", args=[slug]),
                reverse("project-assignments", args=[slug])],
    }
    seen = 0
    for username, paths in visits.items():
        page.context.clear_cookies()
        login(username, PASSWORD)
        for path in paths:
            _visit(page, path)
            seen += 1
    # the payload is on the pages as text, so the checks above looked at it
    page.goto(reverse("response-side-by-side", args=[response.pk]))
    expect(page.locator("body")).to_contain_text("window.__xss=2")
    assert seen == 13


def test_a_one_megabyte_line_keeps_the_labeling_page_usable(page, login, transactional_db):
    from annotation.models import Assignment, Response

    build_study(slug="ward", n_cases=1, n_criteria=4, annotators=(("a1",), ("b1",)))
    text = "".join(f"Sentence {i} says the patient should rest. " for i in range(25_000))[:1_000_000]
    assert "\n" not in text and len(text) == 1_000_000
    Response.objects.filter(project__slug="ward").update(text=text)
    assignment = Assignment.objects.filter(annotator__username="a1").first()
    login("a1", PASSWORD)
    page.goto(reverse("label-page", args=[assignment.pk]))
    scripts_ready(page)
    # 22,469 whole sentences, then the 1,000,000th character cuts the next one ("Sente")
    expect(page.locator("#sentences li")).to_have_count(22_470)
    expect(page.locator("#sentences li").nth(22_468)).to_have_text("Sentence 22468 says the patient should rest.")
    page.keyboard.press("1")
    expect(page.locator(".counter")).to_have_text("1 / 5 decided")
