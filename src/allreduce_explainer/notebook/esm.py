"""The notebook widget's ES module and styles, made from the site's own files.

The module is the views of client/js (the same files the site's page bundle concatenates), run
once per notebook page, followed by widget.mjs, the adapter that draws them with the kernel's
states. The styles are the site's stylesheet as it is, in each widget's shadow root, so that the
notebook's page keeps its look and the widget keeps the site's.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from .. import palette
from . import assets

# The site's views and the controller, in the order their `provides`/`uses` lines need: the
# diagram before the stepper that draws with it, every view before widget.js; then the cluster's
# log panel (its file, examples, fitted figures and rings), which the adapter wires to its widget
VIEWS = ("diagram.js", "stepper.js", "chart.js", "exercise.js", "widget.js", "logpanel.js")
ADAPTER = Path(__file__).with_name("widget.mjs")


@cache
def module() -> str:
    """The ES module anywidget loads: the views, defined once per page, then the adapter."""
    js = assets.path("js")
    views = "\n".join((js / name).read_text(encoding="utf-8") for name in VIEWS)
    # stepper.js and diagram.js read the GPU colours' count from the page's root, as the site's
    # base template sets it (palette.GPU_COLOURS)
    colours = len(palette.GPU_COLOURS)
    # a notebook has no page to start: the log panel's page hook runs never, and the adapter
    # wires each of its widgets as it draws it
    return (
        "if (!(window.AE && window.AE.Widget)) {\n"
        f'  document.documentElement.dataset.gpuColours ||= "{colours}";\n'
        "  window.AE = window.AE || {};\n"
        "  window.AE.onPage = window.AE.onPage || function () {};\n"
        f"{views}\n}}\n" + ADAPTER.read_text(encoding="utf-8")
    )


# The widget's own box, in its shadow root: what the site's body rule gives every page (which
# matches nothing in a shadow tree), its padding, and the GPU colours the site's base template
# sets on the page's root. The site's :root rules are the shadow host's (widget.mjs, hostRules).
BOX = (
    ":host { all: initial; display: block; }\n"
    ".ae-notebook { background: var(--bg); color: var(--fg); font: var(--text-base)/1.6"
    " var(--font); overflow-wrap: break-word; padding: var(--space-2); }\n"
    f"{palette.gpu_css(':host')}"
)


@cache
def site_sheet() -> str:
    """The site's stylesheet, unmodified: in the widget's shadow root it reaches only the widget,
    and the notebook's own rules do not reach in."""
    return assets.path("css").read_text(encoding="utf-8")
