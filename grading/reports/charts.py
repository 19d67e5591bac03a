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
    n: list | None = None, min_value: float = 0, whiskers: list[list] | None = None, whisker_title: str = "interval",
    series_n: list[list] | None = None,
) -> Chart:
    """Horizontal bars: one row per label, one bar per series (name, values), the series in the
    legend; values on an axis from ``min_value`` (0, or −1 for correlations) to ``max_value``
    titled ``value_title``; an optional dashed reference line (name, value); ``n``: each label's n,
    shown in its tooltip (``series_n``: each bar's own n, per series and label). ``whiskers``: per
    series, each bar's (low, high) or None, drawn as a line across the bar's end and named
    ``whisker_title`` in the tooltip (e.g. ± a bootstrap std, or a 95% interval)."""
    data = []
    for i, label in enumerate(labels):
        for s, (name, values) in enumerate(series):
            bar = {"label": str(label), "series": name, "value": _number(values[i], digits), "order": i}
            if n is not None:
                bar["n"] = n[i]
            if series_n is not None:
                bar["n"] = series_n[s][i]
            span = whiskers[s][i] if whiskers is not None else None
            if span is not None and span[0] is not None and span[1] is not None:
                bar.update(low=_number(span[0], digits), high=_number(span[1], digits),
                           span=f"{span[0]:.{digits}f} to {span[1]:.{digits}f}")
            data.append(bar)
    names = [name for name, _ in series]
    tooltip = [{"field": "label", "title": label_title or "label"}, {"field": "series", "title": "series"},
               {"field": "value", "title": value_title, "format": f".{digits}f"}]
    if n is not None or series_n is not None:
        tooltip.append({"field": "n", "title": "n", "format": ","})
    if whiskers is not None:
        tooltip.append({"field": "span", "title": whisker_title})
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
    if whiskers is not None:
        layers.append({"transform": [{"filter": "isValid(datum.low)"}], "mark": {"type": "rule", "color": "#1d2433"},
                       "encoding": {**{k: bars["encoding"][k] for k in ("y", "yOffset")},
                                    "x": {"field": "low", "type": "quantitative"}, "x2": {"field": "high"},
                                    "tooltip": tooltip}})
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


def _horizontal_reference(reference: tuple[str, float], digits: int) -> dict:
    """A dashed horizontal line at a reference value (name, value), named in its tooltip."""
    line = {"reference": reference[0], "value": _number(reference[1], digits)}
    return {"data": {"values": [line]}, "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#b3261e"},
            "encoding": {"y": {"field": "value", "type": "quantitative"},
                         "tooltip": [{"field": "reference"}, {"field": "value", "format": f".{digits}f"}]}}


def line_chart(*, title: str, series: list[tuple[str, list, list]], x_title: str, y_title: str, digits: int = 3,
               reference: tuple[str, float] | None = None) -> Chart:
    """One line per series (name, xs, ys), the series in the legend, points with their values in the
    tooltip; an optional dashed horizontal reference line (name, value)."""
    data = [{"series": name, "x": _number(x, digits), "y": _number(y, digits)}
            for name, xs, ys in series for x, y in zip(xs, ys, strict=True) if y is not None]
    names = [name for name, _, _ in series]
    layers = [{
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {"field": "x", "type": "quantitative", "title": x_title},
            "y": {"field": "y", "type": "quantitative", "title": y_title, "scale": {"zero": True}},
            "color": {"field": "series", "type": "nominal", "title": None,
                      "scale": {"domain": names, "range": PALETTE[:len(names)]}},
            "tooltip": [{"field": "series", "title": "series"}, {"field": "x", "title": x_title, "format": ","},
                        {"field": "y", "title": y_title, "format": f".{digits}f"}],
        },
    }]
    if reference is not None and reference[1] is not None:
        layers.append(_horizontal_reference(reference, digits))
    return Chart(title, _spec(title=title, data=data, width=520, height=260, layers=layers))


def rolling_chart(*, title: str, series: list[tuple[str, list]], x_title: str = "item", value_title: str = "value",
               reference: tuple[str, float] | None = None, digits: int = 2, width=520, height=180,
               compact: bool = False) -> Chart:
    """Lines over 1, 2, 3, ... (e.g. a rolling figure after each item): one per series (name,
    values; None leaves a gap), on a value axis from 0 to 1, with an optional dashed reference line
    (name, value). ``compact``: a sparkline for a table cell (no axes, legend or title)."""
    data = [{"series": name, "x": i + 1, "value": _number(v, digits)}
            for name, values in series for i, v in enumerate(values)]
    names = [name for name, _ in series]
    tooltip = [{"field": "series", "title": "annotator"}, {"field": "x", "title": x_title},
               {"field": "value", "title": value_title, "format": f".{digits}f"}]
    axis = None if compact else {}
    lines = {"mark": {"type": "line", "point": not compact, "strokeWidth": 1.5 if compact else 2},
             "encoding": {"x": {"field": "x", "type": "quantitative", "title": x_title,
                                "axis": None if compact else {"format": "d", "tickMinStep": 1},
                                "scale": {"domainMin": 1}},
                          "y": {"field": "value", "type": "quantitative", "title": value_title, "axis": axis,
                                "scale": {"domain": [0, 1]}},
                          "color": {"field": "series", "type": "nominal", "title": None,
                                    "legend": None if compact or len(names) < 2 else {},
                                    "scale": {"domain": names, "range": (PALETTE * (len(names) // len(PALETTE) + 1))[:len(names)]}},
                          "tooltip": tooltip}}
    layers = [lines]
    if reference is not None and reference[1] is not None:
        layers.append(_horizontal_reference(reference, digits))
    spec = _spec(title=title, data=data, width=width, height=height, layers=layers)
    if compact:
        spec.pop("title")
        spec["config"] = {**spec["config"], "view": {"stroke": None}}
        spec["padding"] = 2
    return Chart(title, spec)


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
    centre: list[list] | None = None, centre_title: str = "", domain: tuple[float, float] | None = None,
) -> Chart:
    """A heatmap with each value printed (``spread``: as value ± spread, e.g. a Monte Carlo σ) and a
    colour legend: diverging around 0 (blue above, red below) or sequential (over ``domain`` when
    given, e.g. the rubric's scale); ``highlight`` cells (row, column) get a thick outline, e.g. the
    self-bias diagonal; ``counts``: each cell's n, in its tooltip. ``centre``: another figure of each
    cell to print (as centre ± spread, titled ``centre_title`` in the tooltip) while the colour
    shows the value, e.g. a Monte Carlo μ ± σ over a score. An empty cell (no value) is grey and
    says so."""
    if spread is not None:
        digits = min(digits, 2)
    data = []
    for i, row in enumerate(rows):
        for j, column in enumerate(columns):
            value = _number(matrix[i][j], digits)
            shown = value if centre is None else _number(centre[i][j], digits)
            sd = _number(spread[i][j], digits) if spread is not None else None
            text = "–" if shown is None else f"{shown:.{digits}f}" + (f" ± {sd:.{digits}f}" if sd is not None else "")
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
    if domain is not None and not diverging:
        low, high = float(domain[0]), float(domain[1])
    for cell in data:  # white text on the darkest third of the colour scale
        value = cell["value"]
        cell["dark"] = value is not None and (abs(value) > 0.6 * limit if diverging else value > low + 0.66 * (high - low))
    scale = ({"scheme": "redblue", "domainMid": 0, "domain": [-limit or -1, limit or 1]} if diverging
             else {"scheme": "blues", **({"domain": [low, high]} if domain is not None else {})})
    tooltip = [{"field": "row", "title": row_title or "row"}, {"field": "column", "title": column_title or "column"}]
    if centre is None:
        tooltip.append({"field": "text", "title": value_title})
    else:
        tooltip += [{"field": "value", "title": value_title, "format": f".{digits}f"},
                    {"field": "text", "title": centre_title or "centre"}]
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


def histograms(
    *, title: str, groups: list[str], counts: list[list[int]], edges: list[float], value_title: str,
    count_title: str = "count", group_title: str = "", series: str = "count",
    reference: tuple[str, float] | None = None, band: tuple[float, float] | None = None, n: list | None = None,
) -> Chart:
    """One histogram per group, stacked in rows on one shared value axis (``edges``: the bins'
    bounds; ``counts[g]``: group g's count per bin, its ``n`` in the tooltip). ``reference``: a
    dashed rule (name, value) across every row, in the legend beside the bars' ``series``; ``band``:
    a light shaded range (low, high) behind it, e.g. where the reference moves from case to case."""
    data = [{"group": str(group), "start": _number(edges[i], 6), "end": _number(edges[i + 1], 6), "count": int(c),
             **({"n": n[g]} if n is not None else {})}
            for g, group in enumerate(groups) for i, c in enumerate(counts[g])]
    names = [series] + ([reference[0]] if reference is not None else [])
    colour = {"scale": {"domain": names, "range": [PALETTE[0], "#b3261e"][:len(names)]}, "title": None,
              "legend": {"labelLimit": 400}}
    tooltip = [{"field": "group", "title": group_title or "group"}, {"field": "start", "title": "from"},
               {"field": "end", "title": "to"}, {"field": "count", "title": count_title}]
    if n is not None:
        tooltip.append({"field": "n", "title": "n", "format": ","})
    x = {"field": "start", "type": "quantitative", "bin": {"binned": True}, "title": value_title,
         "scale": {"domain": [_number(edges[0], 6), _number(edges[-1], 6)]}}
    layers = []
    if band is not None and reference is not None and band[0] != band[1]:
        layers.append({"mark": {"type": "rect", "color": "#b3261e", "opacity": 0.1},
                       "encoding": {"x": {"datum": _number(band[0], 6), "type": "quantitative"},
                                    "x2": {"datum": _number(band[1], 6)},
                                    "tooltip": {"value": f"{reference[0]}: from {band[0]:.1f} to {band[1]:.1f} across cases"}}})
    layers.append({"mark": {"type": "bar", "binSpacing": 1},
                   "encoding": {"x": x, "x2": {"field": "end"},
                                "y": {"field": "count", "type": "quantitative", "title": count_title,
                                      "axis": {"tickMinStep": 1}},
                                "color": {"datum": series, **colour}, "tooltip": tooltip}})
    if reference is not None and reference[1] is not None:
        layers.append({"mark": {"type": "rule", "strokeDash": [4, 3], "strokeWidth": 2},
                       "encoding": {"x": {"datum": _number(reference[1], 6), "type": "quantitative"},
                                    "color": {"datum": reference[0], **colour},
                                    "tooltip": {"value": f"{reference[0]}: {reference[1]:.1f}"}}})
    spec = _spec(title=title, data=data, width=None, height=None,
                 facet={"row": {"field": "group", "type": "nominal", "title": group_title or None, "sort": [str(g) for g in groups],
                                "header": {"labelAngle": 0, "labelAlign": "left", "labelLimit": 220}}},
                 spec={"width": 520, "height": 60, "layer": layers})
    del spec["width"], spec["height"]
    return Chart(title, spec)


def level_distributions(
    *, title: str, levels: list[float], series: list[tuple[str, list[int]]], value_title: str = "share of items",
    level_title: str = "score",
) -> Chart:
    """Distributions over the levels of one scale, side by side per level: one bar per series (name,
    counts per level; each series' n is the sum of its counts), the height the series' share of its
    items, the count, share and n in the tooltip, the series in the legend."""
    names = [name for name, _ in series]
    data = []
    for name, counts in series:
        total = sum(counts)
        for i, (level, count) in enumerate(zip(levels, counts)):
            data.append({"level": f"{level:g}", "order": i, "series": name, "count": int(count), "n": int(total),
                         "share": _number(count / total if total else None, 3)})
    bars = {
        "mark": {"type": "bar"},
        "encoding": {
            "x": {"field": "level", "type": "ordinal", "title": level_title, "sort": {"field": "order", "op": "min"},
                  "axis": {"labelAngle": 0}},
            "xOffset": {"field": "series", "sort": names},
            "y": {"field": "share", "type": "quantitative", "title": value_title, "axis": {"format": ".0%"}},
            "color": {"field": "series", "type": "nominal", "title": None, "legend": {"labelLimit": 400},
                      "scale": {"domain": names, "range": PALETTE[:len(names)]}},
            "tooltip": [{"field": "series", "title": "series"}, {"field": "level", "title": level_title},
                        {"field": "count", "title": "items"}, {"field": "share", "title": value_title, "format": ".1%"},
                        {"field": "n", "title": "n", "format": ","}],
        },
    }
    width = {"step": max(10, min(40, 520 // max(1, len(levels) * len(names))))}  # one bar's width: about 520 px in all
    return Chart(title, _spec(title=title, data=data, width=width, height=200, layers=[bars]))
