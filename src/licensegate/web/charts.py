"""Charts drawn on the server: the geometry of a stacked bar chart, which the `chart` macro of
components.html turns into inline SVG (no script, no styles of its own: colours and hatchings
come from classes in app.css). Each series has a colour and a pattern, so no meaning rests on
colour alone; the legend names them, and the same numbers are in a table under the chart."""

from __future__ import annotations

import math
from dataclasses import dataclass

from licensegate.domain.overview import Chart

WIDTH, HEIGHT = 480, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 22, 12, 30  # margins for the axis labels
PATTERNS = 4  # solid, diagonal, dotted, crossed: series i has pattern i % 4 and colour i % 8
COLOURS = 8


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: int
    title: str  # "Mar 03, Success: 12"


@dataclass(frozen=True, slots=True)
class Tick:
    position: float
    text: str


@dataclass(frozen=True, slots=True)
class Drawn:
    chart: Chart
    bars: list[Bar]
    y_ticks: list[Tick]  # value lines: position is the y coordinate
    x_ticks: list[Tick]  # category labels: position is the x centre
    rows: list[tuple[str, list[int], int]]  # the table: category, values per series, total

    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = RIGHT
    bottom: float = HEIGHT - BOTTOM

    @property
    def id(self) -> str:
        return f"chart-{self.chart.key}"

    def pattern(self, series: int) -> int:
        return series % PATTERNS

    def colour(self, series: int) -> int:
        return series % COLOURS


def _step(top: int) -> int:
    """A round step for about four value lines up to `top`."""
    if top <= 4:
        return 1
    raw = top / 4
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * magnitude:
            return int(factor * magnitude)
    return int(10 * magnitude)


def draw(chart: Chart) -> Drawn:
    count = len(chart.labels)
    totals = [sum(s.values[i] for s in chart.series) for i in range(count)]
    step = _step(max(totals, default=0))
    top = max(step, math.ceil(max(totals, default=0) / step) * step)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(count, 1)
    bar_w = slot * (0.7 if count > 12 else 0.55)
    bars: list[Bar] = []
    for i, label in enumerate(chart.labels):
        x = LEFT + i * slot + (slot - bar_w) / 2
        base = float(TOP + plot_h)
        for n, series in enumerate(chart.series):
            value = series.values[i]
            if value <= 0:
                continue
            h = value / top * plot_h
            base -= h
            bars.append(
                Bar(
                    round(x, 2),
                    round(base, 2),
                    round(bar_w, 2),
                    round(h, 2),
                    n,
                    f"{label}, {series.label}: {value:,}",
                )
            )
    y_ticks = [Tick(round(TOP + plot_h - v / top * plot_h, 2), f"{v:,}") for v in range(0, top + 1, step)]
    every = 1 if count <= 6 else 2 if count <= 12 else 5  # labels that fit side by side
    x_ticks = [
        Tick(round(LEFT + i * slot + slot / 2, 2), label)
        for i, label in enumerate(chart.labels)
        if (count - 1 - i) % every == 0
    ]
    rows = [(label, [s.values[i] for s in chart.series], totals[i]) for i, label in enumerate(chart.labels)]
    return Drawn(chart, bars, y_ticks, x_ticks, rows)
