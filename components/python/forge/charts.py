"""Charts as standalone SVG files and a simple HTML report, with no scripts, no CDN and no
network: results people can open anywhere.

    from forge import charts
    charts.bar(["a", "b"], [3, 5], title="Counts", path="counts.svg")
    charts.line([1, 2, 3], {"sales": [5, 7, 6]}, title="Trend", path="trend.svg")
    charts.report("Summary", [("Counts", "counts.svg"), ("Notes", "<p>All good.</p>")])

Each chart function returns the SVG text and, when `path` is given, writes it below /output.
"""

import html
import math
import os

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]
FONT = "font-family='system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif'"


def _esc(text):
    return html.escape(str(text), quote=True)


def _number(value):
    value = float(value)
    if not math.isfinite(value):
        raise ValueError("chart values must be finite numbers")
    return value


def _fmt(value):
    if abs(value) >= 1e6 or (0 < abs(value) < 1e-3):
        return f"{value:.3g}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _ticks(low, high, count=5):
    if low == high:
        low, high = (low - 1, high + 1) if low else (0, 1)
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 12))
    return ticks


def _frame(width, height, title, body):
    heading = f"<text x='{width / 2}' y='24' text-anchor='middle' font-size='16' font-weight='600' {FONT}>{_esc(title)}</text>" if title else ""
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' aria-label='{_esc(title)}'>"
        f"<rect width='100%' height='100%' fill='white'/>{heading}{body}</svg>\n"
    )


def _save(svg, path):
    if path is not None:
        from . import output_path

        with open(output_path(path), "w", encoding="utf-8") as f:
            f.write(svg)
    return svg


class _Axes:
    """A plot area with a y scale (and an x scale for numeric x)."""

    def __init__(self, width, height, y_values, x_range=None, left=64, right=16, top=40, bottom=48):
        self.left, self.top = left, top
        self.w, self.h = width - left - right, height - top - bottom
        low = min(0.0, min(y_values)) if y_values else 0.0
        high = max(y_values) if y_values else 1.0
        self.yticks = _ticks(low, high)
        self.ymin, self.ymax = self.yticks[0], self.yticks[-1]
        self.x_range = x_range

    def y(self, value):
        return self.top + self.h - (value - self.ymin) / (self.ymax - self.ymin) * self.h

    def x(self, value):
        low, high = self.x_range
        span = (high - low) or 1.0
        return self.left + (value - low) / span * self.w

    def grid(self, x_label="", y_label=""):
        parts = []
        for tick in self.yticks:
            y = self.y(tick)
            parts.append(f"<line x1='{self.left}' x2='{self.left + self.w}' y1='{y:.1f}' y2='{y:.1f}' stroke='#e5e5e5'/>")
            parts.append(f"<text x='{self.left - 6}' y='{y + 4:.1f}' text-anchor='end' font-size='11' {FONT}>{_esc(_fmt(tick))}</text>")
        base = self.top + self.h
        parts.append(f"<line x1='{self.left}' x2='{self.left + self.w}' y1='{base}' y2='{base}' stroke='#888'/>")
        if x_label:
            parts.append(f"<text x='{self.left + self.w / 2}' y='{base + 40}' text-anchor='middle' font-size='12' {FONT}>{_esc(x_label)}</text>")
        if y_label:
            parts.append(f"<text transform='translate(14 {self.top + self.h / 2}) rotate(-90)' text-anchor='middle' font-size='12' {FONT}>{_esc(y_label)}</text>")
        return "".join(parts)

    def x_ticks(self):
        ticks = _ticks(*self.x_range)
        base = self.top + self.h
        return "".join(
            f"<text x='{self.x(t):.1f}' y='{base + 16}' text-anchor='middle' font-size='11' {FONT}>{_esc(_fmt(t))}</text>"
            for t in ticks if self.x_range[0] <= t <= self.x_range[1]
        )


def _legend(names, width, top=34):
    if len(names) < 2:
        return ""
    parts = []
    x = 64
    for i, name in enumerate(names):
        color = PALETTE[i % len(PALETTE)]
        parts.append(f"<rect x='{x}' y='{top}' width='10' height='10' fill='{color}'/>")
        parts.append(f"<text x='{x + 14}' y='{top + 9}' font-size='11' {FONT}>{_esc(name)}</text>")
        x += 24 + 7 * len(str(name))
    return "".join(parts)


def bar(labels, values, title="", path=None, width=640, height=400, x_label="", y_label="", color=PALETTE[0]):
    """A bar chart of `values` (numbers) by `labels`."""
    labels = [str(label) for label in labels]
    values = [_number(v) for v in values]
    if len(labels) != len(values):
        raise ValueError("bar(): labels and values differ in length")
    axes = _Axes(width, height, values)
    slot = axes.w / max(len(values), 1)
    parts = [axes.grid(x_label, y_label)]
    zero = axes.y(max(axes.ymin, 0))
    for i, (label, value) in enumerate(zip(labels, values)):
        x = axes.left + i * slot + slot * 0.15
        y = axes.y(value)
        top, size = (y, zero - y) if value >= 0 else (zero, y - zero)
        parts.append(f"<rect x='{x:.1f}' y='{top:.1f}' width='{slot * 0.7:.1f}' height='{max(size, 0):.1f}' fill='{color}'><title>{_esc(label)}: {_esc(_fmt(value))}</title></rect>")
        parts.append(f"<text x='{x + slot * 0.35:.1f}' y='{axes.top + axes.h + 16}' text-anchor='middle' font-size='11' {FONT}>{_esc(label[:18])}</text>")
    return _save(_frame(width, height, title, "".join(parts)), path)


def line(x, series, title="", path=None, width=640, height=400, x_label="", y_label=""):
    """Lines over `x`: `series` is a list of numbers or a dict {name: numbers}. Numeric `x` is
    scaled; other `x` values are evenly spaced labels."""
    if not isinstance(series, dict):
        series = {"": series}
    series = {str(k): [_number(v) for v in vs] for k, vs in series.items()}
    for name, values in series.items():
        if len(values) != len(x):
            raise ValueError(f"line(): series {name!r} has {len(values)} values for {len(x)} x values")
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x)
    positions = [float(v) for v in x] if numeric else list(range(len(x)))
    x_range = (min(positions), max(positions)) if positions else (0.0, 1.0)
    # Room for the legend under the title, and for the last x label on the right.
    top = 56 if len(series) > 1 else 40
    axes = _Axes(width, height, [v for vs in series.values() for v in vs], x_range, right=40, top=top)
    parts = [axes.grid(x_label, y_label)]
    if numeric:
        parts.append(axes.x_ticks())
    else:
        every = max(1, len(x) // 10)
        for i, label in enumerate(x):
            if i % every == 0:
                parts.append(f"<text x='{axes.x(i):.1f}' y='{axes.top + axes.h + 16}' text-anchor='middle' font-size='11' {FONT}>{_esc(str(label)[:14])}</text>")
    for i, (name, values) in enumerate(series.items()):
        color = PALETTE[i % len(PALETTE)]
        points = " ".join(f"{axes.x(px):.1f},{axes.y(v):.1f}" for px, v in zip(positions, values))
        parts.append(f"<polyline points='{points}' fill='none' stroke='{color}' stroke-width='2'><title>{_esc(name)}</title></polyline>")
    parts.append(_legend(list(series), width))
    return _save(_frame(width, height, title, "".join(parts)), path)


def scatter(xs, ys, title="", path=None, width=640, height=400, x_label="", y_label="", labels=None):
    """Points (xs[i], ys[i]); `labels` (optional) become tooltips."""
    xs = [_number(v) for v in xs]
    ys = [_number(v) for v in ys]
    if len(xs) != len(ys):
        raise ValueError("scatter(): xs and ys differ in length")
    x_range = (min(xs), max(xs)) if xs else (0.0, 1.0)
    axes = _Axes(width, height, ys, x_range, right=40)
    parts = [axes.grid(x_label, y_label), axes.x_ticks()]
    for i, (x, y) in enumerate(zip(xs, ys)):
        tip = f"<title>{_esc(labels[i])}</title>" if labels else ""
        parts.append(f"<circle cx='{axes.x(x):.1f}' cy='{axes.y(y):.1f}' r='3.5' fill='{PALETTE[0]}' fill-opacity='0.75'>{tip}</circle>")
    return _save(_frame(width, height, title, "".join(parts)), path)


def pie(labels, values, title="", path=None, width=480, height=400):
    """A pie chart; values must be non-negative with a positive total."""
    labels = [str(label) for label in labels]
    values = [_number(v) for v in values]
    if any(v < 0 for v in values) or sum(values) <= 0:
        raise ValueError("pie(): values must be non-negative with a positive total")
    total = sum(values)
    cx, cy, r = width * 0.38, height / 2 + 12, min(width, height) * 0.34
    parts = []
    angle = -math.pi / 2
    for i, (label, value) in enumerate(zip(labels, values)):
        color = PALETTE[i % len(PALETTE)]
        share = value / total
        end = angle + share * 2 * math.pi
        if share >= 0.9999:
            parts.append(f"<circle cx='{cx}' cy='{cy}' r='{r}' fill='{color}'/>")
        elif share > 0:
            large = 1 if share > 0.5 else 0
            x1, y1 = cx + r * math.cos(angle), cy + r * math.sin(angle)
            x2, y2 = cx + r * math.cos(end), cy + r * math.sin(end)
            parts.append(f"<path d='M{cx:.1f},{cy:.1f} L{x1:.1f},{y1:.1f} A{r:.1f},{r:.1f} 0 {large} 1 {x2:.1f},{y2:.1f} Z' fill='{color}' stroke='white'><title>{_esc(label)}: {_esc(_fmt(value))}</title></path>")
        ly = 50 + i * 18
        parts.append(f"<rect x='{width * 0.76}' y='{ly}' width='10' height='10' fill='{color}'/>")
        parts.append(f"<text x='{width * 0.76 + 14}' y='{ly + 9}' font-size='11' {FONT}>{_esc(label[:16])} ({share:.0%})</text>")
        angle = end
    return _save(_frame(width, height, title, "".join(parts)), path)


def table(rows, columns=None, limit=200):
    """An HTML table of a list of dicts (for `report`)."""
    rows = list(rows)
    columns = columns or (list(rows[0].keys()) if rows else [])
    head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_esc('' if row.get(c) is None else row.get(c))}</td>" for c in columns) + "</tr>"
        for row in rows[:limit]
    )
    more = f"<p class='more'>{len(rows) - limit} more rows not shown</p>" if len(rows) > limit else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def report(title, sections, path="report.html"):
    """A standalone HTML page: `sections` is a list of (heading, content), where content is an
    SVG or HTML string, or the name of an SVG file already written to /output (inlined)."""
    from . import output_path

    blocks = []
    for heading, content in sections:
        content = str(content)
        if content.endswith(".svg") and "<" not in content:
            with open(output_path(content), encoding="utf-8") as f:
                content = f.read()
        blocks.append(f"<section><h2>{_esc(heading)}</h2>{content}</section>")
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_esc(title)}</title><style>"
        "body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:60rem;color:#222}"
        "section{margin:2rem 0}table{border-collapse:collapse;font-size:.9rem}"
        "th,td{border:1px solid #ddd;padding:.3rem .6rem;text-align:left}th{background:#f4f4f4}"
        "svg{max-width:100%;height:auto}.more{color:#777}"
        f"</style></head><body><h1>{_esc(title)}</h1>{''.join(blocks)}</body></html>\n"
    )
    with open(output_path(path), "w", encoding="utf-8") as f:
        f.write(page)
    return os.path.join("/output", path)
