"""The notebook widget's ES module and styles, made from the site's own files.

The module is the views of client/js (the same files the site's page bundle concatenates), run
once per notebook page, followed by widget.mjs, the adapter that draws them with the kernel's
states. The styles are the site's stylesheet, scoped to the widget's box so that a notebook's own
page keeps its look.
"""

from __future__ import annotations

import re
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


# What a notebook's own stylesheet sets on the elements of a widget, with more weight than the
# site's rules: JupyterLab's output area (and so Notebook 7's) gives every dl, dt and dd
# `display: block`, and floats dt and dd side by side at 20 % and 80 % (@jupyterlab/outputarea,
# style/base.css, "description lists", `.jp-OutputArea-output dt`: specificity 0,1,1), which beats
# the site's `.readouts { display: flex }` (0,1,0) and breaks every readout row; it also wraps
# every pre anywhere (`.jp-OutputArea-output pre`). Every selector of
# the site's sheet is given an id's weight (`:not(#\#)`, which no element fails), the same for
# each, so the site's rules keep their order among themselves and win over the notebook's. It is
# added to the selector's last element, before any pseudo-element: not as an ancestor, which
# @scope's implied `:scope` prefix would then require to stand between the box and the element.
WEIGHT = ":not(#\\#)"
# The browser's defaults where JupyterLab's output area changes them and the site's sheet does
# not speak (the rules quoted above WEIGHT): weighted too, and first, so that any rule of the
# site's for the same elements comes later and wins
UNSET = (
    "dl { width: auto; overflow: visible; }\n"
    "dt, dd { float: none; width: auto; }\n"
    "dt { font-weight: normal; }\n"
    "pre { margin: 1em 0; white-space: pre; word-break: normal; overflow-wrap: normal; }"
)
KEEP_AS_IS = ("@keyframes", "@font-face", "@property", "@page")  # their preludes are not selectors


def weighted(css: str) -> str:
    """`css` without its comments, WEIGHT on every selector of its style rules (at the top
    level or inside @media and @supports); at-rules' preludes and KEEP_AS_IS bodies unchanged."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out, depth, keep_depth, i = [], 0, None, 0
    for m in re.finditer(r"[{}]", css):
        chunk = css[i : m.start()]
        if m.group() == "{":
            prelude = chunk.strip()
            if keep_depth is None and prelude.startswith(KEEP_AS_IS):
                keep_depth = depth
            elif keep_depth is None and not prelude.startswith("@"):
                lead = chunk[: len(chunk) - len(chunk.lstrip())]
                chunk = lead + ", ".join(heavier(sel.strip()) for sel in split_selectors(prelude))
                chunk += " "
            depth += 1
        else:
            depth -= 1
            if keep_depth == depth:
                keep_depth = None
        out.append(chunk + m.group())
        i = m.end()
    return "".join(out) + css[i:]


def heavier(selector: str) -> str:
    """`selector` with WEIGHT on its last element, before a pseudo-element if it has one."""
    at = selector.find("::")
    return selector + WEIGHT if at < 0 else selector[:at] + WEIGHT + selector[at:]


def split_selectors(prelude: str) -> list[str]:
    """A selector list split at its commas, not at those inside :is(...) or :not(...)."""
    parts, level, start = [], 0, 0
    for k, ch in enumerate(prelude):
        level += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and level == 0:
            parts.append(prelude[start:k])
            start = k + 1
    return [*parts, prelude[start:]]


@cache
def styles() -> str:
    """The site's stylesheet inside `@scope (.ae-notebook)`: its rules reach only the widget's
    box, its :root variables become the box's own, and its html and body rules match nothing;
    the box takes the notebook's theme from its data-theme (widget.mjs). Every rule weighs more
    than the notebook's own (WEIGHT), and what the notebook sets that the site leaves to the
    browser's defaults (UNSET) is put back first."""
    css = assets.path("css").read_text(encoding="utf-8").replace(":root {", ":scope {", 1)
    inner = (
        f"{UNSET}\n"
        ":scope { background: var(--bg); color: var(--fg); font: var(--text-base)/1.6 var(--font);"
        " padding: var(--space-2); }\n"
        f"{palette.gpu_css(':scope')}{css}\n"
        # the box's own theme: in @scope a bare [data-theme] matches only below the box
        ':scope[data-theme="light"] { color-scheme: light; }\n'
        ':scope[data-theme="dark"] { color-scheme: dark; }\n'
    )
    return "@scope (.ae-notebook) {\n" + weighted(inner) + "}\n"
