"""The sentence bank of a response (RULERS): the response cut into numbered sentences, each a
span of the raw text, so that a quote of sentences ``i``..``j`` is the text from the start of
sentence ``i`` to the end of sentence ``j`` and is always verbatim in the response.

The rules, in order:

- Blocks: a blank line always ends one; so does a line break before a line that starts a
  Markdown block (a list item, heading, quote, table row or code fence) and after a heading
  or table row. A single line break inside a paragraph is a space.
- Sentences: inside a block, a sentence ends at ``.``, ``!``, ``?`` or ``…`` (with any closing
  quotes or brackets after it) followed by white space, unless the word before the stop is a
  common abbreviation (``e.g.``, ``Dr.``, ``vs.``; units and single letters are not: "400 mg."
  and "vitamin D." end sentences) or the next
  text starts in lower case, or the sentence so far has no letter ("1." of a numbered item).
- Each sentence drops its leading Markdown markers (list bullets and numbers, ``#``, ``>``,
  ``|``) and outer white space; table rule lines (``|---|``), fences and anything left without
  a letter or digit are not sentences.

Sentence ids start at 1. The labeling page numbers the response by them, and the keyboard
quotes a sentence or a range of them into the current criterion.
"""
import re
from dataclasses import dataclass

ABBREVIATIONS = frozenset({"e.g", "i.e", "vs", "cf", "approx", "dr", "mr", "mrs", "ms", "prof", "st", "no", "fig", "al",
                           "jr", "sr", "ca", "resp"})
_BLOCK_START = re.compile(r"[ \t]*(?:[-*+][ \t]|\d{1,3}[.)][ \t]|#{1,6}[ \t]|>|\||```|~~~)")
_BLOCK_LINE = re.compile(r"[ \t]*(?:#{1,6}[ \t]|\|)")
_LEADING_MARKERS = re.compile(r"(?:\s*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+|#{1,6}[ \t]+|>[ \t]?|\|[ \t]*))*\s*")
_STOP = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_NOT_SENTENCE = re.compile(r"[\s|:\-`~]*")
_HAS_WORD = re.compile(r"\w")
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class Sentence:
    id: int
    start: int
    end: int
    text: str


def sentence_bank(text: str) -> list[Sentence]:
    """The numbered sentences of ``text`` (see the module's rules), each with its span."""
    text = text or ""
    spans: list[tuple[int, int]] = []
    for start, end in _blocks(text):
        spans.extend(_sentences(text, start, end))
    bank = []
    for start, end in spans:
        start += _LEADING_MARKERS.match(text, start, end).end() - start
        while end > start and text[end - 1].isspace():
            end -= 1
        piece = text[start:end]
        if not piece or _NOT_SENTENCE.fullmatch(piece) or not _HAS_WORD.search(piece):
            continue
        bank.append(Sentence(len(bank) + 1, start, end, piece))
    return bank


def sentences_quote(text: str, first: int, last: int) -> str:
    """The quote of sentences ``first``..``last`` (ids, inclusive): the raw text they span."""
    bank = sentence_bank(text)
    if not 1 <= first <= last <= len(bank):
        raise ValueError(f"sentences {first}-{last} are not in the response's {len(bank)} sentences")
    return text[bank[first - 1].start:bank[last - 1].end]


def _blocks(text: str):
    """Spans of the blocks (paragraphs, list items, headings, table rows) of ``text``."""
    start = None
    position = 0
    fenced = False
    previous_is_block_line = False
    for line in text.splitlines(keepends=True):
        line_start, position = position, position + len(line)
        body = line.strip()
        if body.startswith(("```", "~~~")):
            fenced = not fenced
            if start is not None:
                yield start, line_start
            start = None
            continue
        if not body:
            if start is not None:
                yield start, line_start
            start = None
            continue
        starts_block = fenced or previous_is_block_line or _BLOCK_START.match(line) is not None
        if start is not None and starts_block:
            yield start, line_start
            start = None
        if start is None:
            start = line_start
        previous_is_block_line = fenced or _BLOCK_LINE.match(line) is not None
    if start is not None:
        yield start, position


_NEXT_CHARACTER = re.compile(r"\S")


def _sentences(text: str, start: int, end: int):
    """Spans of the sentences of one block."""
    begin = start
    for stop in _STOP.finditer(text, start, end):
        cut = stop.end()
        following = _NEXT_CHARACTER.search(text, cut, end)  # not a slice: a one-line megabyte would copy it per stop
        if following is None:
            break
        if following.group().islower() or not _LETTER.search(text, begin, stop.start()):
            continue  # "e.g. the", or a bare number such as "1." before its item
        if text[stop.start()] == "." and stop.end() - stop.start() == 1:
            word = _WORD_BEFORE.search(text, begin, stop.start())
            if word and word.group(1).lower().rstrip(".") in ABBREVIATIONS:
                continue
        yield begin, cut
        begin = cut
    if begin < end:
        yield begin, end
