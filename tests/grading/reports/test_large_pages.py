"""A page over a large project stays small: a table shows its first ``TABLE_ROWS_SHOWN`` rows (the CSV
holds them all), and the stability page summarises a rubric of many criteria per target model
instead of drawing a heatmap row per criterion (the bench project's 7,500 criteria made a 26 MB page)."""
from django.template.loader import render_to_string

from grading.reports.stability import HEATMAP_MAX_CRITERIA, stability_charts
from grading.templatetags.report_tags import TABLE_ROWS_SHOWN, table_rows


def _table(n: int) -> dict:
    return {"columns": ["criterion", "value"], "rows": [[f"c{i}", i / 7] for i in range(n)]}


def test_a_long_table_shows_its_first_rows_and_says_the_csv_has_all():
    html = render_to_string("grading/reports/_table.html", {"table": _table(TABLE_ROWS_SHOWN + 5), "name": "long"})
    assert html.count("<tr>") == TABLE_ROWS_SHOWN + 1  # the header row and the rows shown
    assert f"The first {TABLE_ROWS_SHOWN} of {TABLE_ROWS_SHOWN + 5} rows are shown; the CSV holds all of them" in html
    assert "format=csv&amp;table=long" in html
    short = render_to_string("grading/reports/_table.html", {"table": _table(3), "name": "short"})
    assert "n = 3 rows" in short and short.count("<tr>") == 4
    assert table_rows(_table(10), limit=2).count("<tr>") == 2


def _result(n_criteria: int) -> dict:
    cells = [{"target": t, "criterion": f"c{i}", "kind": "binary", "mu": 0.5, "sigma": 0.1 * (k + 1), "n_samples": 3,
              "n_items": 4} for i in range(n_criteria) for k, t in enumerate(("m1", "m2"))]
    columns = ["target", "criterion", "kind", "mu", "sigma", "n_samples", "n_items"]
    return {"by_kind": {"binary": {"n_items": 8, "n_items_with_sd": 8, "mean_sd": 0.15}}, "samples_seen": 3,
            "judge": "j", "tables": {"cells": {"columns": columns, "rows": [[c[k] for k in columns] for c in cells]}}}


def test_stability_draws_a_heatmap_for_a_small_rubric_and_a_spread_per_target_for_a_large_one():
    small = stability_charts(_result(HEATMAP_MAX_CRITERIA), None)["cells_binary"]
    assert small.title.startswith("μ ± σ per criterion and target model")
    large = stability_charts(_result(HEATMAP_MAX_CRITERIA + 1), None)["cells_binary"]
    assert large.title.startswith(f"Mean σ per target model over its {HEATMAP_MAX_CRITERIA + 1} binary criteria")
    values = {d["label"]: d["value"] for d in large.spec["data"]["values"]}
    assert values == {"m1": 0.1, "m2": 0.2}
