"""The notebook widget's ES module and styles, made from the site's own files.

The module is the views of client/js (the same files the site's page bundle concatenates), run
once per notebook page, followed by widget.mjs, the adapter that draws them with the kernel's
states. The styles are the site's stylesheet, scoped to the widget's box so that a notebook's own
page keeps its look.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from .. import palette
from . import assets

# The site's views and the controller, in the order their `provides`/`uses` lines need: the
# diagram before the stepper that draws with it, every view before widget.js
VIEWS = ("diagram.js", "stepper.js", "chart.js", "exercise.js", "widget.js")
ADAPTER = Path(__file__).with_name("widget.mjs")


@cache
def module() -> str:
    """The ES module anywidget loads: the views, defined once per page, then the adapter."""
    js = assets.path("js")
    views = "\n".join((js / name).read_text(encoding="utf-8") for name in VIEWS)
    # stepper.js and diagram.js read the GPU colours' count from the page's root, as the site's
    # base template sets it (palette.GPU_COLOURS)
    colours = len(palette.GPU_COLOURS)
    return (
        "if (!(window.AE && window.AE.Widget)) {\n"
        f'  document.documentElement.dataset.gpuColours ||= "{colours}";\n'
        f"{views}\n}}\n" + ADAPTER.read_text(encoding="utf-8")
    )


@cache
def styles() -> str:
    """The site's stylesheet inside `@scope (.ae-notebook)`: its rules reach only the widget's
    box, its :root variables become the box's own, and its html and body rules match nothing;
    the box takes the notebook's theme from its data-theme (widget.mjs)."""
    css = assets.path("css").read_text(encoding="utf-8").replace(":root {", ":scope {", 1)
    return (
        "@scope (.ae-notebook) {\n"
        ":scope { background: var(--bg); color: var(--fg); font: var(--text-base)/1.6 var(--font);"
        " padding: var(--space-2); }\n"
        f"{palette.gpu_css(':scope')}{css}\n"
        # the box's own theme: in @scope a bare [data-theme] matches only below the box
        ':scope[data-theme="light"] { color-scheme: light; }\n'
        ':scope[data-theme="dark"] { color-scheme: dark; }\n}\n'
    )
