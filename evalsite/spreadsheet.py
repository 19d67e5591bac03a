"""CSV cells that a spreadsheet opens as text, never as a formula (CSV/formula injection): a
cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
apostrophe, which spreadsheets hide and treat as "this is text". Numbers stay numbers (a
negative number is written as a number, not as text)."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """``value`` as a CSV cell: None as empty, numbers as they are, text neutralized."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str):
        return value
    return "'" + value if value.startswith(FORMULA_START) else value
