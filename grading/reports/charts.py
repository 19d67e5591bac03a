"""Server-side SVG charts for the report pages: horizontal bar charts (optionally grouped,
with a reference line), a histogram and a heatmap with highlighted cells. Output is an
inline ``<svg>`` string with every text escaped and no external assets, so reports work
offline; each chart states its n in the title.
"""
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

PALETTE = ("#2457c5", "#d97706", "#1f7a3f", "#9333ea", "#b3261e", "#0f766e")
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _fmt(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _svg(width: int, height: int, body: list[str], title: str) -> SafeString:
    width = max(width, int(len(title) * 6.8) + 12)  # never clip the title (and its n)
    return mark_safe(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" {FONT}><title>{escape(title)}</title>'
        f'<text x="4" y="14" font-weight="600">{escape(title)}</text>{"".join(body)}</svg>'
    )


def bar_chart(
    *, title: str, labels: list[str], series: list[tuple[str, list]], max_value: float = 1.0,
    reference: tuple[str, float] | None = None, digits: int = 3, width: int = 640,
) -> SafeString:
    """Horizontal bars, one group per label and one bar per series (name, values)."""
    longest = max((len(str(label)) for label in labels), default=10)
    label_w, bar_h, gap, top = min(max(120, int(longest * 6.6) + 12), 360), 14, 8, 28
    plot_w = width - label_w - 70
    group_h = bar_h * len(series) + gap
    height = top + group_h * len(labels) + 24 + (16 if len(series) > 1 else 0)
    scale = plot_w / (max_value or 1.0)
    body = []
    for i, label in enumerate(labels):
        y0 = top + i * group_h
        body.append(f'<text x="{label_w - 6}" y="{y0 + bar_h * len(series) / 2 + 4}" text-anchor="end">{escape(str(label))}</text>')
        for s, (name, values) in enumerate(series):
            value = values[i]
            y = y0 + s * bar_h
            w = 0 if value is None else max(0.0, min(value, max_value)) * scale
            body.append(
                f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" fill="{PALETTE[s % len(PALETTE)]}">'
                f"<title>{escape(f'{label} · {name}: {_fmt(value, digits)}')}</title></rect>"
                f'<text x="{label_w + w + 4:.1f}" y="{y + bar_h - 4}">{_fmt(value, digits)}</text>'
            )
    axis_y = top + group_h * len(labels)
    body.append(f'<line x1="{label_w}" y1="{top - 4}" x2="{label_w}" y2="{axis_y}" stroke="#5b6477"/>')
    if reference is not None and reference[1] is not None:
        x = label_w + max(0.0, min(reference[1], max_value)) * scale
        body.append(
            f'<line class="reference" x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{axis_y}" stroke="#b3261e" stroke-dasharray="4 3"/>'
            f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle" fill="#b3261e">'
            f'{escape(reference[0])} {_fmt(reference[1], digits)}</text>'
        )
    if len(series) > 1:
        for s, (name, _) in enumerate(series):
            x = label_w + s * 150
            body.append(f'<rect x="{x}" y="{height - 14}" width="10" height="10" fill="{PALETTE[s % len(PALETTE)]}"/>'
                        f'<text x="{x + 14}" y="{height - 5}">{escape(name)}</text>')
    return _svg(width, height, body, title)


def histogram(*, title: str, counts: list[int], edges: list[float], threshold: float | None = None, width: int = 640) -> SafeString:
    """Bars per bin with the bin counts; an optional dashed threshold line."""
    left, top, plot_h, bottom = 40, 28, 160, 36
    plot_w = width - left - 10
    height = top + plot_h + bottom
    peak = max(counts) if counts and max(counts) > 0 else 1
    lo, hi = edges[0], edges[-1]
    span = (hi - lo) or 1.0
    body = []
    bin_w = plot_w / max(len(counts), 1)
    for i, count in enumerate(counts):
        h = plot_h * count / peak
        x = left + i * bin_w
        body.append(
            f'<rect x="{x + 1:.1f}" y="{top + plot_h - h:.1f}" width="{bin_w - 2:.1f}" height="{h:.1f}" fill="{PALETTE[0]}">'
            f"<title>{escape(f'[{edges[i]:.2f}, {edges[i + 1]:.2f}): {count}')}</title></rect>"
            f'<text x="{x + bin_w / 2:.1f}" y="{top + plot_h - h - 3:.1f}" text-anchor="middle">{count}</text>'
        )
    for i, edge in enumerate(edges):
        x = left + plot_w * (edge - lo) / span
        body.append(f'<text x="{x:.1f}" y="{top + plot_h + 14}" text-anchor="middle">{edge:.1f}</text>')
    body.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#5b6477"/>')
    if threshold is not None:
        x = left + plot_w * (threshold - lo) / span
        body.append(f'<line class="reference" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#b3261e"'
                    ' stroke-dasharray="4 3"/>'
                    f'<text x="{x + 4:.1f}" y="{top + 10}" fill="#b3261e">{escape(f"threshold {threshold:g}")}</text>')
    return _svg(width, height, body, title)


def _diverging(value, limit: float) -> str:
    if value is None:
        return "#eeeeee"
    t = max(-1.0, min(1.0, value / (limit or 1.0)))
    if t >= 0:
        r, g, b = (int(255 - t * (255 - c)) for c in (36, 87, 197))
    else:
        r, g, b = (int(255 + t * (255 - c)) for c in (179, 38, 30))
    return f"#{r:02x}{g:02x}{b:02x}"


def _sequential(value, low: float, high: float) -> str:
    if value is None:
        return "#eeeeee"
    t = 0.0 if high <= low else max(0.0, min(1.0, (value - low) / (high - low)))
    r, g, b = (int(247 - t * (247 - c)) for c in (36, 87, 197))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(
    *, title: str, rows: list[str], columns: list[str], matrix: list[list], highlight: set[tuple[int, int]] = frozenset(),
    digits: int = 3, cell_w: int = 78, spread: list[list] | None = None, diverging: bool = True,
) -> SafeString:
    """A heatmap with values printed: diverging (blue > 0, red < 0) or sequential (light to blue
    from the smallest value to the largest); ``highlight`` cells (row, column) get a thick outline,
    e.g. the self-bias diagonal; ``spread`` prints each cell as value ± spread (a Monte Carlo σ)."""
    if spread is not None:
        digits, cell_w = min(digits, 2), max(cell_w, 112)
    left, top, cell_h = 170, 110, 26
    width = left + cell_w * len(columns) + 10
    height = top + cell_h * len(rows) + 10
    finite = [v for row in matrix for v in row if v is not None]
    limit = max(map(abs, finite)) if finite else 1.0
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    body = []
    for j, column in enumerate(columns):
        x = left + j * cell_w + cell_w / 2
        body.append(f'<text transform="translate({x:.1f},{top - 6}) rotate(-40)">{escape(str(column))}</text>')
    for i, row in enumerate(rows):
        y = top + i * cell_h
        body.append(f'<text x="{left - 6}" y="{y + cell_h / 2 + 4}" text-anchor="end">{escape(str(row))}</text>')
        for j, value in enumerate(matrix[i]):
            x = left + j * cell_w
            mark = (i, j) in highlight
            stroke = ' stroke="#1d2433" stroke-width="3" class="self"' if mark else ' stroke="#ffffff"'
            sd = spread[i][j] if spread is not None else None
            text = _fmt(value, digits) + (f" ± {_fmt(sd, digits)}" if sd is not None and value is not None else "")
            fill = _diverging(value, limit) if diverging else _sequential(value, low, high)
            body.append(
                f'<rect x="{x}" y="{y}" width="{cell_w}" height="{cell_h}" fill="{fill}"{stroke}>'
                f"<title>{escape(f'{row} → {column}: {text}')}</title></rect>"
                f'<text x="{x + cell_w / 2}" y="{y + cell_h / 2 + 4}" text-anchor="middle" class="cell">{escape(text)}</text>'
            )
    return _svg(width, height, body, title)
