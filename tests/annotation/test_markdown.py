"""Model output is untrusted: the sanitized Markdown keeps formatting and drops anything active."""
import pytest

from annotation.markdown import markdown_plain_text, markdown_render, quote_in_response


@pytest.mark.parametrize("text", [
    "<script>alert(1)</script>hello",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)" onclick="steal()">x</a>',
    "[click](javascript:alert(1))",
    '<div onmouseover="x()" style="position:fixed">y</div>',
    "<iframe src='http://evil'></iframe><object data=x></object>",
    '<a href="data:text/html;base64,PHNjcmlwdD4=">d</a>',
    "<svg><script>alert(1)</script></svg>",
])
def test_active_content_is_removed(text):
    html = str(markdown_render(text)).lower()
    for needle in ("<script", "onerror=", "onclick=", "onmouseover=", 'href="javascript:', "<iframe", "<object",
                   "<img", "<svg", 'href="data:', "style="):
        assert needle not in html


def test_formatting_survives():
    html = str(markdown_render("**bold** and *it*\n\n- a\n- b\n\n| h |\n|---|\n| c |\n\n[ok](https://example.org)"))
    assert "<strong>bold</strong>" in html and "<em>it</em>" in html and "<li>a</li>" in html
    assert "<table>" in html and 'href="https://example.org"' in html and "noopener" in html


def test_plain_text_and_quotes():
    text = "Call **emergency  services** now.\nAn ECG is needed."
    assert markdown_plain_text(text) == "Call emergency services now. An ECG is needed."
    assert quote_in_response(quote="emergency services now", text=text)  # as rendered
    assert quote_in_response(quote="An ECG   is needed.", text=text)  # whitespace-normalized
    assert not quote_in_response(quote="antibiotics", text=text)
    assert not quote_in_response(quote="   ", text=text)


def test_a_sentence_reads_as_markdown_and_its_html_as_text():
    from annotation.markdown import markdown_inline

    assert markdown_inline("**Most important:** call 911.") == "<strong>Most important:</strong> call 911."
    assert markdown_inline("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    assert markdown_inline("[a link](javascript:alert(1))") == "[a link](javascript:alert(1))"
    assert markdown_inline("plain & simple") == "plain &amp; simple"
