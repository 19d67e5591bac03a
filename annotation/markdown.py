"""Rendering untrusted model output as sanitized Markdown (SPEC §8).

markdown-it-py turns the text into HTML (raw HTML allowed through so that harmless markup such
as ``<br>`` still reads well), then nh3 (the maintained Rust ``ammonia`` sanitizer) keeps only a
small allow-list of tags and attributes: scripts and styles are dropped with their content,
event-handler attributes disappear, and links may only use http, https or mailto. Images are
not allowed at all, so a response cannot make the annotator's browser fetch anything.
"""
import html
import re

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "u", "ul",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}

_markdown = MarkdownIt("commonmark", {"html": True, "linkify": False}).enable(["table", "strikethrough"])
_whitespace = re.compile(r"\s+")


def markdown_render(text: str) -> SafeString:
    """Sanitized HTML for a Markdown text that nobody vouches for."""
    raw_html = _markdown.render(text or "")
    clean = nh3.clean(
        raw_html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return mark_safe(clean)  # nh3 output is safe by construction


INLINE_TAGS = {"b", "code", "del", "em", "i", "kbd", "s", "span", "strong", "sub", "sup", "u"}
_inline = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough"])  # raw HTML shows as the text it is
_MARKUP = re.compile(r"[*_`~<&\\\[]")


def markdown_inline(text: str) -> SafeString:
    """One line of Markdown (a sentence of a response) as sanitized inline HTML: emphasis, code
    and the like rendered, raw HTML shown as text (an annotator sees what the model wrote), links
    reduced to their text. Text without Markdown
    characters is only escaped (the sentence bank renders thousands of sentences)."""
    if not _MARKUP.search(text or ""):
        return mark_safe(html.escape(text or "", quote=False))
    clean = nh3.clean(_inline.renderInline(text), tags=INLINE_TAGS, attributes={}, url_schemes=URL_SCHEMES,
                      strip_comments=True)
    return mark_safe(clean)  # nh3 output is safe by construction


def whitespace_normalize(text: str) -> str:
    return _whitespace.sub(" ", text or "").strip()


def markdown_plain_text(text: str) -> str:
    """The text an annotator sees (and can select) once the Markdown is rendered."""
    visible = nh3.clean(str(markdown_render(text)), tags=set(), attributes={})
    return whitespace_normalize(html.unescape(visible))


def quote_in_response(*, quote: str, text: str) -> bool:
    """A quote is valid evidence when it occurs in the response, as written or as rendered."""
    return response_quote_checker(text)(quote)


def response_quote_checker(text: str):
    """``quote_in_response`` for many quotes of one response: the response's normalized and
    rendered forms are computed once (the rendered one only when a quote needs it)."""
    written = whitespace_normalize(text)
    rendered: list[str] = []

    def check(quote: str) -> bool:
        needle = whitespace_normalize(quote)
        if not needle:
            return False
        if needle in written:
            return True
        if not rendered:
            rendered.append(markdown_plain_text(text))
        return needle in rendered[0]

    return check
