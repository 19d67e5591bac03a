"""No keystroke lost (issue 22, point 2), in real Chromium with every save held back until the middle of the typing: a
rationale typed at full speed (no delay between keys) right after a key decision and its ``e``,
on criterion after criterion, is stored whole with its decision; text typed while the same
criterion's earlier save is in flight is sent after it, with the revision that save returned.
The answer to a save, single or batch, updates the row's status, revision and buttons and never
replaces the text box being typed in. Screenshot: /tmp/typing.png."""
import re
from urllib.parse import parse_qs

import pytest
from playwright.sync_api import expect

from tests.annotation.conftest import PASSWORD, build_study
from tests.browser.conftest import scripts_ready

SAVE_URLS = re.compile(r".*/work/\d+/(criteria/\d+|batch)/$")

# 200 characters each, full of the page's shortcut keys (j k e q s g i [ ] { } ? 1 2 3 y n c):
# every one of them must end up in the text box, not act on the page.
TEXTS = [
    ("Kidney function is not mentioned; eGFR 42 [2023] {stable?} and no creatinine trend, "
     "so the answer cannot judge dosing. Queries: q, s, g, i, j, k, y, n, c, 1, 2, 3 - none are keys here!"),
    ("Emergency care is named early: call 911 now, then ECG. Yet the jaw pain question is skipped "
     "{see [guideline 4]}; keys j/k/e/q/s/g/i would act outside the box? Not here: 12 of 32 quick notes."),
    ("Dose given as 5 mg twice daily (max 10 mg); the response never asks about weight, age or "
     "allergies [e.g. sulfa] - a key gap? yes; quote needed: 'take ibuprofen'. j k e q s g i y n c 1 2 3 {}"),
    ("Safety-netting is explicit: seek help if the pain spreads, breathing gets hard or sweating "
     "begins. Jargon (eGFR, ECG, QT) is explained? mostly [k]. Keys typed: j, e, q, s, g, i, y, n, c, 1, 2, 3."),
]


def _pad(text: str) -> str:
    return (text + " " + "x" * 200)[:200]


TEXTS = [_pad(text) for text in TEXTS]


@pytest.fixture
def ward(transactional_db):
    # one case, two responses for a1; 4 binary criteria + 1 ordinal
    return build_study(slug="typing", n_cases=1, n_criteria=4, annotators=(("a1",),))


class HeldSaves:
    """Every save (single or batch) is held at the browser's edge from ``hold`` to ``release``:
    the slow link on which the page used to swap a text box away while it was being typed in.
    ``release`` lets the held saves go on, in the order they were sent, and every later one
    straight through; the tests release in the middle of the typing, so the answers arrive while
    keys are still being pressed. ``bodies`` are the posted forms; ``n_held`` counts the saves
    that were held."""

    def __init__(self, page):
        self.bodies, self.held, self.holding, self.n_held = [], [], True, 0
        page.route(SAVE_URLS, self._route)

    def _route(self, route):
        self.bodies.append(route.request.post_data or "")
        if self.holding:
            self.held.append(route)
            self.n_held += 1
        else:
            route.continue_()

    def hold(self):
        self.holding = True

    def release(self):
        self.holding = False
        while self.held:
            self.held.pop(0).continue_()


def _type_while_answers_arrive(page, saves: HeldSaves, text: str):
    """Type ``text`` at full speed; halfway, the held saves are let go, so their answers reach
    the page while the rest is typed."""
    page.keyboard.type(text[:len(text) // 2])
    saves.release()
    page.keyboard.type(text[len(text) // 2:])


def _open_with_held_saves(page, login) -> HeldSaves:
    login("a1", PASSWORD)
    # Routed before the labeling page loads (only its saves match): on a loaded machine a route
    # added after the load missed the first saves once (sent straight through, never held).
    saves = HeldSaves(page)
    page.goto("/work/next/")
    scripts_ready(page)
    return saves


def _labels():
    from annotation.models import Label

    return {label.criterion.position: (label.verdict or label.option_label, label.rationale)
            for label in Label.objects.filter(annotator__username="a1").select_related("criterion")}


def _settle(page, saves: HeldSaves):
    """Wait for the page to say every save is answered (no save pending or in flight, the text
    saves queued behind the held ones included)."""
    assert saves.n_held, "some saves were held while the text was typed"
    saves.release()
    expect(page.locator("#label-page[data-pending='0']")).to_have_count(1, timeout=30_000)
    expect(page.locator("#rubric .crit.saving")).to_have_count(0, timeout=30_000)


def test_a_rationale_typed_at_full_speed_after_a_key_decision_is_stored_whole(page, login, ward):
    saves = _open_with_held_saves(page, login)
    rows = page.locator("#rubric form.crit")
    decisions = [("2", "not_met"), ("y", "met"), ("n", "not_met"), ("1", "met")]
    for i, ((key, _), text) in enumerate(zip(decisions, TEXTS)):
        if i:
            page.keyboard.press("Escape")  # leave the text box (its rationale is saved) ...
            page.keyboard.press("j")  # ... and choose the next criterion
        saves.hold()
        page.keyboard.press(key)  # decided: the save goes out and is answered late ...
        page.keyboard.press("e")  # ... while the rationale opens at once
        _type_while_answers_arrive(page, saves, text)  # no delay between keys
    last = rows.nth(len(TEXTS) - 1).locator("textarea")
    expect(last).to_be_focused()
    _settle(page, saves)
    assert _labels() == {i: (verdict, text) for i, ((_, verdict), text) in enumerate(zip(decisions, TEXTS))}
    # The answers left the text box being typed in alone: still focused, nothing lost on screen.
    expect(last).to_be_focused()
    for i, text in enumerate(TEXTS):
        expect(rows.nth(i).locator("textarea")).to_have_value(text)
        expect(rows.nth(i).locator(".crit-state")).to_contain_text("Saved")
    page.screenshot(path="/tmp/typing.png")


def test_text_typed_while_the_same_criterions_save_is_in_flight_is_sent_after_it(page, login, ward):
    from annotation.models import Label, LabelHistory

    saves = _open_with_held_saves(page, login)
    area = page.locator("#rubric form.crit").nth(0).locator("textarea")
    first, rest = TEXTS[0][:90], TEXTS[0][90:]
    page.keyboard.press("n")
    page.keyboard.press("e")
    page.keyboard.type(first)
    page.keyboard.press("Escape")  # the first part goes out now (after the decision) ...
    page.keyboard.press("e")  # ... and the rest is typed while it is held
    _type_while_answers_arrive(page, saves, rest)
    expect(area).to_be_focused()
    _settle(page, saves)
    assert _labels() == {0: ("not_met", TEXTS[0])}
    expect(area).to_be_focused()
    expect(area).to_have_value(TEXTS[0])
    label = Label.objects.get(annotator__username="a1")
    # Every save went with the revision the one before it returned (the same, when it changed
    # nothing; one more, when it did), none was refused as stale, and each stored a longer piece
    # of what was typed, the last one all of it.
    posted = [int(parse_qs(body)["revision"][0]) for body in saves.bodies]
    assert len(posted) >= 2 and posted[0] == 0, posted  # the decision, then the text (a loaded machine may join saves)
    assert all(later - earlier in (0, 1) for earlier, later in zip(posted, posted[1:])), posted
    assert posted[-1] in (label.revision - 1, label.revision), (posted, label.revision)
    rationales = [row["rationale"] for row in LabelHistory.objects.filter(label=label).order_by("pk").values_list("new", flat=True)]
    assert label.revision == len(rationales) >= 2
    assert all(TEXTS[0].startswith(r) for r in rationales) and rationales[-1] == TEXTS[0], rationales
    assert not page.locator("#rubric .crit.failed, #rubric .crit.has-error").count()


def test_a_batch_answer_leaves_the_box_being_typed_in_alone(page, login, ward):
    saves = _open_with_held_saves(page, login)
    area = page.locator("#rubric form.crit").nth(2).locator("textarea")
    for key in ("y", "j", "n", "j", "2"):  # the first decision is held; the next two pile up into a batch
        page.keyboard.press(key)
    page.keyboard.press("e")  # the rationale of criterion 3, typed in while its batch is on its way
    _type_while_answers_arrive(page, saves, TEXTS[1])
    _settle(page, saves)
    assert _labels() == {0: ("met", ""), 1: ("not_met", ""), 2: ("not_met", TEXTS[1])}
    expect(area).to_be_focused()
    expect(area).to_have_value(TEXTS[1])
    assert any(body.startswith("batch=") for body in saves.bodies), saves.bodies
