"""Evidence by keyboard (issue 12, point 3), in real Chromium: s opens the response as numbered
sentences, ] and [ move the cursor, } widens it to a range, q quotes the range into the selected
criterion, which lifts the submit refusal of a criterion that needs a quote; the keys are letters
in a text field; a quote whose text was altered on the page is refused by the server and changes
nothing; the response's hostile markup stays inert in the bank. Screenshot:
sentence_bank.png in the screenshots folder."""
import re

from playwright.sync_api import expect

from tests.annotation.conftest import PASSWORD, build_study

IN_RANGE = re.compile(r"(^|\s)in-range(\s|$)")


def _settled(page):
    expect(page.locator("#rubric .crit.saving")).to_have_count(0)
    expect(page.locator("#pending-saves")).to_have_text("")


def _evidence(position: int) -> list:
    from annotation.models import Label

    label = Label.objects.filter(annotator__username="a1", criterion__position=position).first()
    return list(label.evidence) if label else []


def test_an_annotator_quotes_a_range_of_sentences_with_the_keyboard(page, login, transactional_db, screenshots):
    build_study(slug="bank", n_cases=1, n_criteria=2, annotators=(("a1",),), min_evidence=1)
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login("a1", PASSWORD)
    page.goto("/work/next/")
    rows = page.locator("#rubric form.crit")
    bank = page.locator("#sentence-bank")
    sentences = bank.locator("li")
    expect(sentences).to_have_count(4)
    expect(sentences.nth(0)).to_have_text("Call emergency services now.")
    expect(sentences.nth(3)).to_contain_text("<script>alert('x')</script>")  # shown as text, never run

    page.keyboard.press("y")  # criterion 1 (needs one quote): met
    _settled(page)
    expect(page.locator("#evidence-missing")).to_contain_text("Criterion 1")
    page.keyboard.press("s")
    expect(bank).to_have_attribute("open", "")
    expect(sentences.nth(0)).to_have_attribute("aria-current", "true")
    page.keyboard.press("]")
    page.keyboard.press("}")  # sentences 2-3, across the paragraph break
    expect(page.locator("#key-hint")).to_have_text("Sentences 2–3 of 4 — q quotes them into criterion 1.")
    expect(sentences.nth(1)).to_have_class(IN_RANGE)
    expect(sentences.nth(1)).not_to_have_attribute("aria-current", "true")
    expect(sentences.nth(2)).to_have_class(IN_RANGE)
    expect(sentences.nth(2)).to_have_attribute("aria-current", "true")
    expect(sentences.nth(0)).not_to_have_class(IN_RANGE)
    page.screenshot(path=str(screenshots / "sentence_bank.png"), full_page=True)
    page.keyboard.press("q")
    _settled(page)
    quote = "An ECG is needed for case 0. Rest **afterwards**."
    expect(rows.nth(0).locator(".evidence q")).to_have_text(quote)
    assert _evidence(0) == [quote]
    expect(page.locator("#evidence-missing")).to_have_count(0)

    # In the rationale the same keys are text: the cursor and the quotes stay as they are.
    page.keyboard.press("e")
    page.keyboard.type("see [2] and {3}, as quoted")
    page.keyboard.press("Escape")
    _settled(page)
    expect(rows.nth(0).locator("textarea")).to_have_value("see [2] and {3}, as quoted")
    expect(sentences.nth(2)).to_have_attribute("aria-current", "true")
    assert _evidence(0) == [quote]

    # A quote is verified against the stored response, whatever the page holds.
    page.reload()
    page.evaluate("""() => {
        const raw = document.getElementById('response-raw');
        raw.textContent = JSON.stringify('CALL EMERGENCY SERVICES NOW.' + JSON.parse(raw.textContent).slice(28));
    }""")
    page.keyboard.press("k")  # criterion 1 again (the page opens on the first undecided one)
    expect(rows.nth(0)).to_have_class(re.compile(r"(^|\s)focused(\s|$)"))
    page.keyboard.press("s")
    page.keyboard.press("q")  # sentence 1, as altered on the page
    _settled(page)
    expect(rows.nth(0).locator(".crit-state")).to_contain_text("the quote is not part of the response text")
    assert _evidence(0) == [quote]
    assert dialogs == []
