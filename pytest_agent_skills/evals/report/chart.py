"""The pass-rate chart: an inline SVG, one row per eval and configuration.

Each row draws the 95% interval of the mean as a whisker (the min-max range where the
benchmark records no interval), mean ± standard deviation as a band and the mean as a dot on
a 0-100 % axis, with the figures written beside it. Colours come from the
page's style sheet (classes ``cfg-<index>``), so the SVG carries no style of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..documents.benchmark_model import Stat
from .markup import Markup, el
from .view import Cell

WIDTH = 880
LABEL_WIDTH = 190
PLOT_WIDTH = 380
ROW_HEIGHT = 20
GROUP_GAP = 12
AXIS_HEIGHT = 22


def percent(value: float) -> str:
    return f"{value * 100:.0f}%"


def spread(stat: Stat) -> str:
    """``67% ± 12`` (points), the figure the chart and the tables show."""
    return f"{percent(stat.mean)} ± {stat.stddev * 100:.0f}"


def span(stat: Stat) -> str:
    """``40-90%``: the min-max range."""
    return f"{stat.min * 100:.0f}–{percent(stat.max)}"


def _x(rate: float) -> float:
    return LABEL_WIDTH + max(0.0, min(1.0, rate)) * PLOT_WIDTH


def _row(cell: Cell, index: int, y: float) -> Markup:
    stat = cell.pass_rate
    middle = y + ROW_HEIGHT / 2
    low, high = _x(stat.mean - stat.stddev), _x(stat.mean + stat.stddev)
    errors = f", {cell.errors} error{'s' if cell.errors != 1 else ''}" if cell.errors else ""
    reach = f"95% {stat.ci95[0] * 100:.0f}–{percent(stat.ci95[1])}" if stat.ci95 else span(stat)
    figures = f"{spread(stat)} ({reach}, n={len(cell.runs)}{errors})"
    left, right = stat.ci95 or (stat.min, stat.max)
    return el(
        "g",
        el("title", f"{cell.configuration}: mean {figures}"),
        el("text", cell.configuration, x=LABEL_WIDTH - 8, y=middle + 4, class_="label cfg-name"),
        el("line", x1=_x(left), x2=_x(right), y1=middle, y2=middle, class_="whisker"),
        el("line", x1=_x(left), x2=_x(left), y1=middle - 5, y2=middle + 5, class_="whisker"),
        el("line", x1=_x(right), x2=_x(right), y1=middle - 5, y2=middle + 5, class_="whisker"),
        el("rect", x=low, y=middle - 5, width=max(high - low, 1.0), height=10, class_="band"),
        el("circle", cx=_x(stat.mean), cy=middle, r=5, class_="mean"),
        el(
            "text",
            figures,
            x=LABEL_WIDTH + PLOT_WIDTH + 10,
            y=middle + 4,
            class_="figures" + (" has-errors" if cell.errors else ""),
        ),
        class_=f"chart-row cfg-{index}",
        data_configuration=cell.configuration,
        data_mean=f"{stat.mean:.4f}",
        data_ci95=f"{stat.ci95[0]:.4f} {stat.ci95[1]:.4f}" if stat.ci95 else None,
    )


def pass_rate_chart(
    groups: Sequence[tuple[str, Sequence[Cell]]], configurations: Sequence[str]
) -> Markup:
    """The chart of ``groups`` (a title and its cells), colours by ``configurations``' order."""
    rows: list[Markup] = []
    y = float(AXIS_HEIGHT)
    for title, cells in groups:
        short = title if len(title) <= 60 else title[:59] + "…"
        rows.append(el("text", short, x=4, y=y + 12, class_="group-title"))
        y += 16
        for cell in cells:
            rows.append(_row(cell, configurations.index(cell.configuration), y))
            y += ROW_HEIGHT
        y += GROUP_GAP
    axis = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        axis.append(el("line", x1=_x(tick), x2=_x(tick), y1=AXIS_HEIGHT - 4, y2=y, class_="grid"))
        axis.append(el("text", percent(tick), x=_x(tick), y=AXIS_HEIGHT - 8, class_="tick"))
    summary = "; ".join(
        f"{title}: " + ", ".join(f"{cell.configuration} {spread(cell.pass_rate)}" for cell in cells)
        for title, cells in groups
    )
    return el(
        "svg",
        el("title", "Pass rate per eval and configuration"),
        el("desc", summary),
        axis,
        rows,
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {WIDTH} {y:.0f}",
        width=WIDTH,
        height=f"{y:.0f}",
        role="img",
        aria_label="Pass rate per eval and configuration: mean, ± standard deviation, 95% interval",
        class_="chart",
        id="pass-rate-chart",
    )
