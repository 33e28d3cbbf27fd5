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


BYTES, SECONDS = "B", "s"  # the units a log axis may label its powers of ten in
MAX_LABELS = 7  # past this many powers of ten, label every third (1 kB, 1 MB, 1 GB)


def log_axis(title: str, ends, unit: str | None = None, **extra) -> dict:
    """A log axis from ends[0] to ends[1] (data units), labelled at powers of ten only.

    Plotly labels 2 and 5 between the decades of a short log axis, which reads as clutter and
    hides the one thing a log axis says, the factor of ten. The ticks are the powers of ten
    between the ends (every third one past MAX_LABELS, so that bytes and seconds step by an SI
    prefix); an axis with fewer than two inside runs on to the nearest ones, so every log axis
    names at least one factor of ten. `unit` (BYTES, SECONDS or None) writes the labels in the
    site's units: 1 kB, 10 kB (fmt.nbytes's decimal units), 1 µs, 10 µs, or plain 1, 10, 1,000.
    """
    lo, hi, exps = _decades(*ends)
    return axis(
        title,
        type="log",
        range=[lo, hi],
        tickvals=[10.0**e for e in exps],
        ticktext=[decade_text(e, unit) for e in exps],
        **extra,
    )


def around(values, pad: float = 0.05) -> tuple[float, float]:
    """The ends of a log axis that shows `values` (the positive ones) with a margin of `pad`
    of its decades on each side, as Plotly's autorange would."""
    shown = [v for v in values if v is not None and v > 0]
    if not shown:  # nothing to show (a log whose busbw no row gives): one decade
        return 1.0, 10.0
    a, b = math.log10(min(shown)), math.log10(max(shown))
    margin = pad * max(b - a, 1)
    return 10 ** (a - margin), 10 ** (b + margin)


def _decades(lo: float, hi: float) -> tuple[float, float, list[int]]:
    """The axis's range in decades and the exponents of its labelled powers of ten."""
    a, b = math.log10(lo), math.log10(hi)
    first, last = math.ceil(a - 1e-9), math.floor(b + 1e-9)
    if first > last:  # inside one decade: run on to both of its ends
        first, last = last, first
        a, b = first, last
    elif first == last:  # one power of ten: run on to the nearer next one
        if a - (first - 1) <= (last + 1) - b:
            first = a = first - 1
        else:
            last = b = last + 1
    exps = list(range(first, last + 1))
    if len(exps) > MAX_LABELS:
        step = 3 if len(exps) <= 3 * MAX_LABELS else math.ceil(len(exps) / MAX_LABELS)
        exps = [e for e in exps if e % step == 0]
    return a, b, exps


SI_PREFIXES = {-4: "p", -3: "n", -2: "µ", -1: "m", 0: "", 1: "k", 2: "M", 3: "G", 4: "T", 5: "P"}


def decade_text(e: int, unit: str | None = None) -> str:
    """10**e as a tick label: "100 kB" (bytes), "10 µs" (seconds), "1,000" or "0.01" (none)."""
    if unit is None:
        return f"{10**e:,}" if e >= 0 else f"{10.0**e:g}"
    if unit == SECONDS and e >= 0:
        return f"{10**e:,} s"
    group, digits = divmod(e, 3)
    if (unit == BYTES and e < 0) or group not in SI_PREFIXES:
        return f"{10.0**e:g} {unit}"
    return f"{10**digits} {SI_PREFIXES[group]}{unit}"


def gpus_axis() -> dict:
    """The log axis of GPU_SWEEP."""
    return log_axis("GPUs", GPU_AXIS_ENDS)


TITLE_LINE_PX = 20  # the room a line of a chart's title takes above the plot


def title(lines: tuple[str, ...]) -> dict:
    """A chart's title, left-aligned in the top margin, one line each (a phone's chart is 330 px
    wide: keep a line under 45 characters): what it draws and on which cluster, for a chart that
    must say so (one model per chart). layout(heading=...) makes the room. Plotly anchors a
    title of several lines by its middle line, so the top pad grows by half a line for each
    line after the first, or the first line is cut at the chart's top edge."""
    pad = 4 + TITLE_LINE_PX // 2 * (len(lines) - 1)
    return {"text": "<br>".join(lines), "x": 0, "xref": "container", "xanchor": "left",
            "pad": {"l": 8, "t": pad}, "y": 1, "yref": "container", "yanchor": "top",
            "font": {"size": 13}}  # fmt: skip


# Plotly's tick labels are 12 px; a character of them takes about CHAR_PX at most (digits and
# the units' letters: "100 ms" is 6 characters, 44 px wide). The figures leave the labels and
# the axis titles room by these, without Plotly's automargin (which redraws every chart twice).
CHAR_PX = 7.5
TICK_PAD = 4  # between the plot's edge and its y tick labels
TITLE_STANDOFF = 8  # between the tick labels and the axis title
AXIS_TITLE_PX = 17  # one line of an axis title, across it
LINE_PX = 16  # one line of x tick labels, down
# the plot of a chart on a 390 px phone: the chart's 330 px less its margins
PHONE_PLOT_PX = 220
LABEL_GAP_PX = 14  # the room between two x tick labels that reads as a gap


def label_chars(ax: dict) -> int:
    """The widest tick label's characters: the labels themselves when the axis names them,
    else those of its largest value (its range's far end; four digits if it has none)."""
    if "ticktext" in ax:
        return max((len(line) for t in ax["ticktext"] for line in str(t).split("<br>")), default=0)
    ends = ax.get("range")
    if ax.get("type") == "category" or not ends:
        return 4
    top = max(abs(v) for v in ends)
    return max(len(f"{top:,.0f}"), 3) + (1 if min(ends) < 0 else 0)  # "0.5" at the least


def left_room(yaxis: dict) -> int:
    """The left margin a y axis needs: its widest tick label, the standoff and its title."""
    title = bool(yaxis.get("title", {}).get("text"))
    return math.ceil(
        TICK_PAD + label_chars(yaxis) * CHAR_PX + (TITLE_STANDOFF + AXIS_TITLE_PX) * title
    )


def _fits_across(labels: list[str]) -> bool:
    """Whether the x tick labels stand side by side, level, on a phone's plot."""
    return len(labels) * (max(map(len, labels)) * CHAR_PX + LABEL_GAP_PX) <= PHONE_PLOT_PX


def _across(xaxis: dict) -> dict:
    """An x axis whose labels are level (never slanted: a slanted label runs into its
    neighbour and into the axis title), a log axis's thinned to every third power of ten (an SI
    prefix: 1 kB, 1 MB) when they would not fit a phone's plot side by side."""
    out = {**xaxis, "tickangle": 0}
    if "ticktext" in out and out.get("type") == "log" and not _fits_across(out["ticktext"]):
        keep = [
            (v, t)
            for v, t in zip(out["tickvals"], out["ticktext"], strict=True)
            if round(math.log10(v)) % 3 == 0
        ]
        if len(keep) >= 2:
            out["tickvals"], out["ticktext"] = [v for v, _ in keep], [t for _, t in keep]
    return out


def _stood_off(ax: dict) -> dict:
    """An axis whose title keeps TITLE_STANDOFF from its tick labels, measured by Plotly."""
    if not ax.get("title", {}).get("text"):
        return ax
    return {**ax, "title": {**ax["title"], "standoff": TITLE_STANDOFF}}


def layout(
    xaxis: dict,
    yaxis: dict,
    legend=LEGEND_ABOVE,
    margin=MARGIN,
    heading: tuple[str, ...] = (),
    **extra,
) -> dict:
    """A figure's layout; with `heading` (a title's lines), its title and the room for it. The
    left margin leaves the y axis's widest tick label and its title room (left_room)."""
    xaxis, yaxis = _stood_off(_across(xaxis)), _stood_off(yaxis)
    out = {"xaxis": xaxis, "yaxis": yaxis, "legend": dict(legend), "margin": dict(margin), **extra}
    out["margin"]["l"] = max(out["margin"].get("l", 0), left_room(yaxis))
    if heading:
        out["title"] = title(heading)
        out["margin"]["t"] = out["margin"].get("t", 0) + TITLE_LINE_PX * len(heading)
    return out
