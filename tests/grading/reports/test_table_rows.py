"""The rows of a report table (``report_tags.table_rows``): every value escaped, numbers
right-aligned and formatted like ``fmt``, an empty table one muted row."""
from grading.templatetags.report_tags import table_rows


def test_values_are_escaped_and_formatted():
    html = table_rows({"columns": ["a", "b", "c", "d", "e"],
                       "rows": [['<script>alert(1)</script>', 0.123456, 7, None, True], ["x&y", 1e-9, -2, "–", False]]})
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '<td class="num">0.123</td><td class="num">7</td><td class="num">–</td><td>True</td>' in html
    assert "<td>x&amp;y</td>" in html and '<td class="num">1.0e-09</td>' in html


def test_an_empty_table_says_so():
    assert table_rows({"columns": ["a", "b"], "rows": []}) == '<tr><td colspan="2" class="muted">No rows.</td></tr>'
