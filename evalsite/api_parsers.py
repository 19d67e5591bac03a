"""The API's JSON parser: DRF's, with JSON nested deeper than Python's parser can follow answered
as a 400 like any other malformed body (DRF lets the RecursionError through: a 500)."""
from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
