"""Figures for slides: a widget's Plotly figure, in the site's theme and with a title, as SVG
or PNG (`allreduce-explainer figure WIDGET --out FILE`).

The widget builds the figure (the same JSON the page draws); this module only themes it as the
page's chart.js does and hands it to Plotly's own renderer, Kaleido, which runs plotly.js in a
headless Chrome or Chromium (Debian's package will do). Plotly and Kaleido are imported here
only, so the core stays stdlib-only.
"""

from __future__ import annotations

import copy
import json
from functools import cache

from .errors import ParamError
from .widgets import WIDGETS

# The page's colours, client/css/site.css (--bg, --fg, --grid; light and dark values
# of light-dark()); a test reads the stylesheet and checks they agree.
THEMES = {
    "light": {"bg": "#ffffff", "fg": "#1b1b1f", "grid": "#d9dce1"},
    "dark": {"bg": "#16171b", "fg": "#e8e8ea", "grid": "#343842"},
}
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
FORMATS = ("svg", "png")
TITLE_PX = 50  # room for an 18 px title line
LEGEND_PX = 60  # room for two rows of a legend placed above the plot


@cache
def charts() -> tuple[str, ...]:
    """The widgets whose default state holds at least one figure."""
    return tuple(sorted(name for name, f in WIDGETS.items() if _figures(f())))


def _figures(state: dict) -> dict:
    """A state's drawn figures by name ("" the main one); a part whose figure is None (drawn
    only for some parameters) is not one."""
    out = {"": state["figure"]} if state.get("figure") else {}
    out.update({k: v["figure"] for k, v in (state.get("figures") or {}).items() if v.get("figure")})
    return out


def widget_figure(widget: str, params: dict, name: str | None = None) -> dict:
    """The Plotly figure of `widget` called with `params` (its main one, or `name`)."""
    if widget not in WIDGETS:
        raise ParamError(
            "widget", f"unknown widget {widget!r}: choose one of {', '.join(charts())}"
        )
    figures = _figures(WIDGETS[widget](params))
    if not figures:
        raise ParamError("widget", f"{widget} draws no chart: choose one of {', '.join(charts())}")
    key = name or ("" if "" in figures else sorted(figures)[0])
    if key not in figures:
        names = ", ".join(k for k in figures if k)
        raise ParamError("figure", f"{widget} has no figure {name!r}: choose one of {names}")
    return figures[key]


def default_title(figure: dict) -> str:
    """The figure's own title, else 'y against x' from the axis titles, when the caller gives
    none."""
    layout = figure.get("layout", {})
    own = layout.get("title", "")
    own = (own.get("text", "") if isinstance(own, dict) else str(own)).strip()
    if own:
        return own

    def axis(name: str) -> str:
        title = layout.get(name, {}).get("title", "")
        return (title.get("text", "") if isinstance(title, dict) else str(title)).strip()

    x, y = axis("xaxis"), axis("yaxis")
    return f"{y[:1].upper()}{y[1:]} against {x}" if x and y else (y or x or "")


def themed(figure: dict, theme: str = "light", title: str | None = None) -> dict:
    """The figure with the theme's colours and a title, as the page's chart.js themes it."""
    if theme not in THEMES:
        raise ParamError("theme", f"must be one of {', '.join(THEMES)}")
    colours = THEMES[theme]
    out = copy.deepcopy(figure)
    layout = out.setdefault("layout", {})
    layout["template"] = "none"  # plotly.js's own defaults, as on the page
    layout["paper_bgcolor"] = layout["plot_bgcolor"] = colours["bg"]
    layout["font"] = {"family": FONT, "color": colours["fg"], **layout.get("font", {})}
    for name in [k for k in layout if k.startswith(("xaxis", "yaxis"))]:
        layout[name] = {
            "gridcolor": colours["grid"],
            "linecolor": colours["grid"],
            "zerolinecolor": colours["grid"],
            **layout[name],
        }
    text = default_title(figure) if title is None else title
    if text:  # at the top of the image, above a legend that sits above the plot
        layout["title"] = {
            "text": text,
            "font": {"size": 18},
            **{"x": 0.02, "xanchor": "left", "xref": "container"},
            **{"y": 0.98, "yanchor": "top", "yref": "container"},
        }
        margin = layout.setdefault("margin", {})
        legend_on_top = layout.get("legend", {}).get("y", 0) >= 1
        margin["t"] = margin.get("t", 0) + (TITLE_PX + LEGEND_PX if legend_on_top else TITLE_PX)
    return out


def render(figure: dict, fmt: str, width: int = 960, height: int = 540, scale: float = 2) -> bytes:
    """SVG or PNG bytes of a themed figure, drawn by plotly.js through Kaleido."""
    if fmt not in FORMATS:
        raise ParamError("out", "must end in .svg or .png")
    import plotly.io as pio  # the [figures] extra; only this command needs it

    fig = pio.from_json(json.dumps(figure))  # validates every property
    return pio.to_image(fig, format=fmt, width=width, height=height, scale=scale)
