"""The notebook widget's ES module and styles, made from the site's own files.

The module is client/js/notebook.js, the adapter that draws the site's own views with the
kernel's states, bundled by esbuild with the modules it imports (the same graph as the site's
page bundle). The styles are the site's stylesheet as it is, in each widget's shadow root, so
that the notebook's page keeps its look and the widget keeps the site's.
"""

from __future__ import annotations

from functools import cache

from .. import palette
from . import assets


@cache
def module() -> str:
    """The ES module anywidget loads: client/js/notebook.js and the site's modules it imports,
    bundled by esbuild (the wheel carries it built, hatch_build.py). stepper.js and diagram.js
    read the GPU colours' count from the page's root as they load, as the site's base template
    sets it (palette.GPU_COLOURS): set first, once per page."""
    built = assets.path("notebook.js")
    code = (
        built.read_bytes()
        if built.is_relative_to(assets.STATIC)
        else assets.bundle(built.name, "esm")
    )
    colours = len(palette.GPU_COLOURS)
    return f'document.documentElement.dataset.gpuColours ||= "{colours}";\n' + code.decode()


# The widget's own box, in its shadow root: what the site's body rule gives every page (which
# matches nothing in a shadow tree), its padding, and the GPU colours the site's base template
# sets on the page's root. The site's :root rules are the shadow host's (client/js/notebook.js,
# hostRules).
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
