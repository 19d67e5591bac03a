"""The ``id`` path converter: a database id, 1 to 2⁶³−1. Django's ``int`` converter takes any
length of digits, and a 20-digit id reached SQLite as an OverflowError (a 500); with this one an
id out of range matches no URL, a 404 like any other id that does not exist."""
ID_MAX = 2**63 - 1


def id_in_range(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= ID_MAX


class IdConverter:
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if not id_in_range(number):
            raise ValueError(value)  # no match: 404
        return number

    def to_url(self, value) -> str:
        return str(int(value))
