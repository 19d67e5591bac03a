"""The report pages' charts as Vega-Lite specifications built here, on the server, and drawn in the
browser by the vendored Vega, Vega-Lite and vega-embed (``static/vendor/vega/``; no CDN, so pages
work offline). Vega-Lite gives what hand-drawn SVG lacked: value axes with ticks and titles,
legends, colour scales with their legend, tooltips (with n where a value rests on one), and
"Save as SVG / PNG" on every chart. Each page keeps a table with CSV beside its charts.

A chart is a ``Chart``: its title and spec. In a template ``{{ chart }}`` renders a ``<figure>``
holding the spec as inert JSON (``static/js/charts.js`` draws it, with Vega's expression
interpreter, as the Content-Security-Policy allows no eval) and the title as the figure's caption,
so the page says what the chart is even before it is drawn.
"""
import json
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

PALETTE = ["#2457c5", "#d97706", "#1f7a3f", "#9333ea", "#b3261e", "#0f766e"]
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"  # an identifier only: nothing is fetched
_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}
FONT = "system-ui, sans-serif"


@dataclass(frozen=True)
class Chart:
    title: str
    spec: dict

    def __html__(self) -> SafeString:
        text = json.dumps(self.spec, sort_keys=True, ensure_ascii=False, allow_nan=False).translate(_JSON_ESCAPES)
        return mark_safe(
            f'<figure class="chart"><div class="vega-chart" role="img" aria-label="{escape(self.title)}"></div>'
            f'<script type="application/json" class="vega-spec">{text}</script>'
            f'<figcaption>{escape(self.title)}</figcaption></figure>'
        )

    def __str__(self) -> str:
        return str(self.__html__())


def _number(value, digits: int):
    """A value as the chart holds it: rounded, None (missing) kept as null."""
    if value is None:
        return None
    value = float(value)
    return None if value != value else round(value, max(digits + 2, 4))


def _spec(*, title: str, data: list[dict], width, height, layers: list[dict] | None = None, **rest) -> dict:
    spec = {
        "$schema": SCHEMA, "title": {"text": title, "anchor": "start", "fontSize": 13, "limit": 900},
        "data": {"values": data}, "width": width, "height": height,
        "config": {"font": FONT, "axis": {"labelLimit": 320, "titleFontWeight": 600}, "legend": {"orient": "bottom"},
                   "view": {"stroke": None}},
    }
    if layers is not None:
        spec["layer"] = layers
    spec.update(rest)
    return spec


def bar_chart(
    *, title: str, labels: list[str], series: list[tuple[str, list]], max_value: float = 1.0,
    reference: tuple[str, float] | None = None, digits: int = 3, value_title: str = "value", label_title: str = "",
    n: list | None = None, min_value: float = 0,
) -> Chart:
    """Horizontal bars: one row per label, one bar per series (name, values), the series in the
    legend; values on an axis from ``min_value`` (0, or −1 for correlations) to ``max_value``
    titled ``value_title``; an optional dashed reference line (name, value); ``n``: each label's n,
    shown in its tooltip."""
    data = [
        {"label": str(label), "series": name, "value": _number(values[i], digits), "order": i,
         **({"n": n[i]} if n is not None else {})}
        for i, label in enumerate(labels) for name, values in series
    ]
    names = [name for name, _ in series]
    tooltip = [{"field": "label", "title": label_title or "label"}, {"field": "series", "title": "series"},
               {"field": "value", "title": value_title, "format": f".{digits}f"}]
    if n is not None:
        tooltip.append({"field": "n", "title": "n", "format": ","})
    bars = {
        "mark": {"type": "bar", "height": {"band": 0.9}},
        "encoding": {
            "y": {"field": "label", "type": "nominal", "title": label_title or None, "sort": {"field": "order", "op": "min"}},
            "yOffset": {"field": "series", "sort": names},
            "x": {"field": "value", "type": "quantitative", "title": value_title,
                  "scale": {"domain": [min_value, max_value], "clamp": True}},
            "color": {"field": "series", "type": "nominal", "title": None,
                      "scale": {"domain": names, "range": PALETTE[:len(names)]}},
            "tooltip": tooltip,
        },
    }
    values = {**bars, "mark": {"type": "text", "align": "left", "dx": 3, "fontSize": 10},
              "encoding": {**{k: bars["encoding"][k] for k in ("y", "yOffset", "x")},
                           "text": {"field": "value", "format": f".{digits}f"}, "color": {"value": "#1d2433"}}}
    layers = [bars, values]
    if reference is not None and reference[1] is not None:
        line = {"reference": reference[0], "value": _number(reference[1], digits)}
        layers.append({"data": {"values": [line]}, "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#b3261e"},
                       "encoding": {"x": {"field": "value", "type": "quantitative"},
                                    "tooltip": [{"field": "reference"}, {"field": "value", "format": f".{digits}f"}]}})
        layers.append({"data": {"values": [line]}, "mark": {"type": "text", "color": "#b3261e", "dy": -6, "y": 0,
                                                            "align": "left", "dx": 3},
                       "encoding": {"x": {"field": "value", "type": "quantitative"},
                                    "text": {"value": f"{reference[0]} {reference[1]:.{digits}f}"}}})
    height = {"step": max(12, 16 * len(series))}
    return Chart(title, _spec(title=title, data=data, width=520, height=height, layers=layers))


def histogram(*, title: str, counts: list[int], edges: list[float], threshold: float | None = None,
              value_title: str = "value", count_title: str = "count") -> Chart:
    """Bars per bin with their counts; an optional dashed threshold line."""
    data = [{"start": _number(edges[i], 6), "end": _number(edges[i + 1], 6), "mid": _number((edges[i] + edges[i + 1]) / 2, 6),
             "count": int(c)} for i, c in enumerate(counts)]
    layers = [
        {"mark": {"type": "bar", "color": PALETTE[0], "binSpacing": 1},
         "encoding": {"x": {"field": "start", "type": "quantitative", "bin": {"binned": True}, "title": value_title,
                            "axis": {"values": [_number(e, 6) for e in edges]}},
                      "x2": {"field": "end"},
                      "y": {"field": "count", "type": "quantitative", "title": count_title},
                      "tooltip": [{"field": "start", "title": "from"}, {"field": "end", "title": "to"},
                                  {"field": "count", "title": count_title}]}},
        {"mark": {"type": "text", "dy": -6, "fontSize": 10},
         "encoding": {"x": {"field": "mid", "type": "quantitative"}, "y": {"field": "count", "type": "quantitative"},
                      "text": {"field": "count"}}},
    ]
    if threshold is not None:
        line = [{"threshold": threshold}]
        layers.append({"data": {"values": line}, "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#b3261e"},
                       "encoding": {"x": {"field": "threshold", "type": "quantitative"},
                                    "tooltip": [{"field": "threshold"}]}})
        layers.append({"data": {"values": line}, "mark": {"type": "text", "color": "#b3261e", "align": "left", "dx": 4,
                                                          "y": 6},
                       "encoding": {"x": {"field": "threshold", "type": "quantitative"},
                                    "text": {"value": f"threshold {threshold:g}"}}})
    return Chart(title, _spec(title=title, data=data, width=520, height=180, layers=layers))


def heatmap(
    *, title: str, rows: list[str], columns: list[str], matrix: list[list], highlight: set[tuple[int, int]] = frozenset(),
    digits: int = 3, spread: list[list] | None = None, diverging: bool = True, counts: list[list] | None = None,
    value_title: str = "value", row_title: str = "", column_title: str = "",
) -> Chart:
    """A heatmap with each value printed (``spread``: as value ± spread, e.g. a Monte Carlo σ) and a
    colour legend: diverging around 0 (blue above, red below) or sequential; ``highlight`` cells
    (row, column) get a thick outline, e.g. the self-bias diagonal; ``counts``: each cell's n, in
    its tooltip. An empty cell (no value) is grey and says so."""
    if spread is not None:
        digits = min(digits, 2)
    data = []
    for i, row in enumerate(rows):
        for j, column in enumerate(columns):
            value = _number(matrix[i][j], digits)
            sd = _number(spread[i][j], digits) if spread is not None else None
            text = "–" if value is None else f"{value:.{digits}f}" + (f" ± {sd:.{digits}f}" if sd is not None else "")
            cell = {"row": str(row), "column": str(column), "value": value, "text": text, "self": (i, j) in highlight,
                    "row_order": i, "column_order": j}
            if sd is not None:
                cell["sd"] = sd
            if counts is not None:
                cell["n"] = counts[i][j]
            data.append(cell)
    finite = [c["value"] for c in data if c["value"] is not None]
    limit = max(map(abs, finite)) if finite else 1.0
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    for cell in data:  # white text on the darkest third of the colour scale
        value = cell["value"]
        cell["dark"] = value is not None and (abs(value) > 0.6 * limit if diverging else value > low + 0.66 * (high - low))
    scale = ({"scheme": "redblue", "domainMid": 0, "domain": [-limit or -1, limit or 1]} if diverging
             else {"scheme": "blues"})
    tooltip = [{"field": "row", "title": row_title or "row"}, {"field": "column", "title": column_title or "column"},
               {"field": "text", "title": value_title}]
    if counts is not None:
        tooltip.append({"field": "n", "title": "n", "format": ","})
    x = {"field": "column", "type": "nominal", "title": column_title or None, "sort": {"field": "column_order", "op": "min"},
         "axis": {"labelAngle": -40, "orient": "top"}}
    y = {"field": "row", "type": "nominal", "title": row_title or None, "sort": {"field": "row_order", "op": "min"}}
    layers = [
        {"mark": {"type": "rect"},
         "encoding": {"x": x, "y": y,
                      "color": {"field": "value", "type": "quantitative", "title": value_title, "scale": scale,
                                "legend": {"orient": "right", "direction": "vertical"}},
                      "stroke": {"condition": {"test": "datum.self", "value": "#1d2433"}, "value": "#ffffff"},
                      "strokeWidth": {"condition": {"test": "datum.self", "value": 3}, "value": 1},
                      "tooltip": tooltip}},
        {"mark": {"type": "text", "fontSize": 11},
         "encoding": {"x": x, "y": y, "text": {"field": "text"},
                      "color": {"condition": {"test": "datum.dark", "value": "#ffffff"}, "value": "#1d2433"}}},
    ]
    step = 112 if spread is not None else 80
    return Chart(title, _spec(title=title, data=data, width={"step": step}, height={"step": 28}, layers=layers))


def scatter(
    *, title: str, points: list[dict], x_title: str, y_title: str, group_title: str = "model",
    y_domain: tuple[float, float] | None = None, label_title: str = "response",
) -> Chart:
    """One point per item: ``points`` are {"x", "y", "group", "label"}; colour by group (legend),
    the label, both values and the group in the tooltip."""
    data = [{"x": _number(p["x"], 3), "y": _number(p["y"], 3), "group": str(p["group"]), "label": str(p["label"])}
            for p in points]
    groups = sorted({d["group"] for d in data})
    y = {"field": "y", "type": "quantitative", "title": y_title}
    if y_domain is not None:
        y["scale"] = {"domain": list(y_domain)}
    layer = {
        "mark": {"type": "point", "filled": True, "opacity": 0.7, "size": 40},
        "encoding": {
            "x": {"field": "x", "type": "quantitative", "title": x_title, "scale": {"zero": False}},
            "y": y,
            "color": {"field": "group", "type": "nominal", "title": group_title,
                      "scale": {"domain": groups, "range": (PALETTE * (len(groups) // len(PALETTE) + 1))[:len(groups)]}},
            "tooltip": [{"field": "label", "title": label_title}, {"field": "group", "title": group_title},
                        {"field": "x", "title": x_title}, {"field": "y", "title": y_title}],
        },
    }
    return Chart(title, _spec(title=title, data=data, width=520, height=260, layers=[layer]))
