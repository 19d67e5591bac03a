"""The chart builders the figure pages added (a scatter, bars on a −1..1 axis) and the glossary that
puts column headers in words with their definitions."""
from grading.reports import charts
from grading.reports.glossary import term_for, worded_table


def test_scatter_colours_by_group_with_axis_titles_and_tooltips():
    chart = charts.scatter(title="Length against accuracy", x_title="length (characters)", y_title="accuracy (%)",
                           points=[{"x": 120, "y": 50.0, "group": "b", "label": "r1"},
                                   {"x": 300, "y": None, "group": "a", "label": "r2"}], y_domain=(0, 100))
    layer = chart.spec["layer"][0]["encoding"]
    assert layer["x"]["title"] == "length (characters)" and layer["y"]["title"] == "accuracy (%)"
    assert layer["y"]["scale"] == {"domain": [0, 100]}
    assert layer["color"]["scale"]["domain"] == ["a", "b"] and layer["color"]["title"] == "model"
    assert [d["y"] for d in chart.spec["data"]["values"]] == [50.0, None]  # a missing value stays missing
    assert "Length against accuracy" in str(chart)


def test_bar_chart_takes_a_negative_axis_start():
    chart = charts.bar_chart(title="r", labels=["a"], series=[("r", [-0.4])], min_value=-1.0)
    assert chart.spec["layer"][0]["encoding"]["x"]["scale"]["domain"] == [-1.0, 1.0]
    assert charts.bar_chart(title="r", labels=["a"], series=[("r", [0.4])]).spec["layer"][0]["encoding"]["x"]["scale"][
        "domain"] == [0, 1.0]


def test_headers_in_words_with_definitions():
    table = worded_table(["model", "mf1", "mf1 95% CI", "unheard_of"], [["m", 0.5, "0.4 – 0.6", 1]],
                         words={"model": "Target"})
    assert table["columns"] == ["model", "mf1", "mf1 95% CI", "unheard_of"]  # the CSV keeps the keys
    assert [words for words, _ in table["headers"]] == ["Target", "MF1", "MF1 95% interval", "unheard_of"]
    assert table["headers"][1][1].startswith("Macro F1") and "bootstrap" in table["headers"][2][1]
    assert table["headers"][3][1] == "" and term_for("unheard_of") is None
