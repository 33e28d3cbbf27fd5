"""Plotly pieces every chart widget uses: lines, dots, the "you are here" marker, axes, layout.

Each returns a fresh dict (a state is JSON and may be changed by its widget); a style left as None
is left out, so Plotly's default applies.
"""

from __future__ import annotations

import math

from ..palette import NEUTRAL

CLEAR = "rgba(0,0,0,0)"  # a hollow marker's fill
LEGEND_ABOVE = {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"}
LEGEND_BELOW = {"orientation": "h", "y": -0.4, "yanchor": "top"}
MARGIN = {"l": 60, "r": 30, "t": 10, "b": 50}
MARGIN_BELOW = {**MARGIN, "b": 60}  # room for a legend below the plot
# The GPU counts the charts against n sweep: powers of two and three times them, 2 .. 4096, so
# that a log axis gets two points an octave; the axis runs a little past both ends.
GPU_SWEEP = tuple(sorted({2**i for i in range(1, 13)} | {3 * 2**i for i in range(0, 11)}))
GPU_AXIS_ENDS = (1.6, 6000)


def _given(**style) -> dict:
    return {k: v for k, v in style.items() if v is not None}


def _hover(template: str | None, name: str) -> dict:
    return {} if template is None else {"hovertemplate": f"{template}<extra>{name}</extra>"}


def line(
    name: str,
    x,
    y,
    colour: str,
    dash: str | None = None,
    width: float | None = None,
    marker: dict | None = None,
    hover: str | None = None,
    **extra,
) -> dict:
    """A line; with `marker` (its style, coloured like the line) a dot at every point too."""
    return {
        "type": "scatter",
        "mode": "lines" if marker is None else "lines+markers",
        "name": name,
        **extra,
        "x": list(x),
        "y": list(y),
        "line": _given(color=colour, dash=dash, width=width),
        **({} if marker is None else {"marker": {"color": colour, **marker}}),
        **_hover(hover, name),
    }


def dots(
    name: str,
    x,
    y,
    colour: str,
    symbol: str | None = None,
    size: float = 7,
    outline: float | None = None,
    hollow: bool = False,
    hover: str | None = None,
    **extra,
) -> dict:
    """Markers alone; `outline` draws a ring of that width, `hollow` leaves the inside empty."""
    marker = _given(color=CLEAR if hollow else colour, symbol=symbol, size=size)
    if outline is not None:
        marker["line"] = {"width": outline, "color": colour}
    return {
        "type": "scatter",
        "mode": "markers",
        "name": name,
        **extra,
        "x": list(x),
        "y": list(y),
        "marker": marker,
        **_hover(hover, name),
    }


def you_are_here(name: str, x, ys, size: float = 16, legend: bool = False) -> dict:
    """Grey rings around the points at the reader's setting (x), one per y."""
    return {
        "type": "scatter",
        "mode": "markers",
        "name": name,
        "x": [x] * len(ys),
        "y": list(ys),
        **({} if legend else {"showlegend": False}),
        "marker": {"size": size, "color": CLEAR, "line": {"width": 2, "color": NEUTRAL}},
        **({} if legend else {"hoverinfo": "skip"}),
    }


def axis(title: str, **extra) -> dict:
    return {"title": {"text": title}, **extra}


def log_axis(title: str, range=None, ticks=None, ticktext=None, **extra) -> dict:
    """A log axis; `range` in decades (Plotly's rule for log axes), `ticks` in data units."""
    given = _given(range=range, tickvals=ticks, ticktext=ticktext)
    return axis(title, type="log", **given, **extra)


def gpus_axis() -> dict:
    """The log axis of GPU_SWEEP, ticks every factor of four."""
    return log_axis("GPUs", [math.log10(x) for x in GPU_AXIS_ENDS], [2, 8, 32, 128, 512, 2048])


def layout(xaxis: dict, yaxis: dict, legend=LEGEND_ABOVE, margin=MARGIN, **extra) -> dict:
    return {"xaxis": xaxis, "yaxis": yaxis, "legend": dict(legend), "margin": dict(margin), **extra}
