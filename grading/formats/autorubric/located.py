"""A JSON object read with where its parts start, so that an error in a JSON file (not JSON Lines)
can name the line where the object at fault starts: the standard library's decoder reads each value
(``raw_decode``), this module only walks the top-level object and the lists it is asked about."""
import json
import re

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, at: int) -> int:
    return _WHITESPACE.match(text, at).end()


def _expect(text: str, at: int, char: str) -> int:
    at = _skip(text, at)
    if not text.startswith(char, at):
        raise json.JSONDecodeError(f"Expecting {char!r}", text, at)
    return _skip(text, at + 1)


def _array(text: str, at: int) -> tuple[list, list[int], int]:
    """The JSON array at ``at``, the offset where each of its elements starts, and the offset after it."""
    values, starts = [], []
    at = _expect(text, at, "[")
    if text.startswith("]", at):
        return values, starts, at + 1
    while True:
        starts.append(at)
        value, at = _DECODER.raw_decode(text, at)
        values.append(value)
        at = _skip(text, at)
        if text.startswith("]", at):
            return values, starts, at + 1
        at = _expect(text, at, ",")


def walk(text: str, *, arrays: frozenset = frozenset(),
         until: frozenset = frozenset()) -> tuple[dict, dict[str, int], dict[str, list[int]]]:
    """The JSON object ``text`` holds, the offset where each member's value starts and, for the members
    named in ``arrays`` that are lists, the offset where each element starts; JSONDecodeError (a
    ValueError) when the text is not one valid JSON object. With ``until``: stop as soon as every key
    of it is seen, before reading the last one's value (left None)."""
    data, value_at, starts = {}, {}, {}
    at = _expect(text, 0, "{")
    while not text.startswith("}", at):
        if not text.startswith('"', at):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
        key, at = _DECODER.raw_decode(text, at)
        at = _expect(text, at, ":")
        data[key], value_at[key] = None, at
        if until and until <= data.keys():
            return data, value_at, starts
        starts.pop(key, None)
        if key in arrays and text.startswith("[", at):
            data[key], starts[key], at = _array(text, at)
        else:
            data[key], at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if not text.startswith("}", at):
            at = _expect(text, at, ",")
            if text.startswith("}", at):
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
    end = _skip(text, at + 1)
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return data, value_at, starts


def lines_of(text: str, offsets: list[int]) -> list[int]:
    """The 1-based line of each of ``offsets``."""
    lines, line, previous = [0] * len(offsets), 1, 0
    for i in sorted(range(len(offsets)), key=offsets.__getitem__):
        line += text.count("\n", previous, offsets[i])
        lines[i], previous = line, offsets[i]
    return lines
