"""A widget's HTML in a notebook: its partial from templates/widgets/, rendered in the kernel with
the state the kernel computed, as the site's build renders it (sitebuild/pages.py, widget_html)
with the build's defaults. Needs Jinja2 (the `notebook` extra); the core does not.
"""

from __future__ import annotations

from functools import cache

import jinja2

from .. import palette
from ..logs import explain
from ..widgets import Widget, views
from . import assets


def stage(slug: str, *_words: str) -> str:
    """A stage named by its slug, where the site would link it: a notebook has no pages, so the
    slug in words (the cluster's "step through this ring" line, shown only for a debug log)."""
    return f"the site's {slug.replace('-', ' ')} page"


@cache
def environment():
    """The partials' Jinja2 environment, with the build's options and the globals they read."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(assets.path("templates")),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        embed=False,
        gpu_colours=len(palette.GPU_COLOURS),
        max_log_bytes=explain.MAX_LOG_BYTES,
        max_log_text=explain.MAX_LOG_TEXT,
        stage=stage,
        base="",
    )
    return env


def html(instance: str, widget: Widget, state: dict, script: bool = True) -> str:
    """The widget's partial as the page would show it, named `instance` (unique on the notebook's
    page, so its controls' ids are too), drawn by the partial the site's build picks; without
    `script`, its state's JSON for the views left out (a static copy has none to read it)."""
    return (
        environment()
        .select_template(views.partials(widget.name, widget.view))
        .render(
            name=instance,
            widget=widget,
            spec=widget.spec,
            state=state,
            state_json=views.state_json(state) if script else "null",
        )
    )


def host_rules(css: str) -> str:
    """The sheet's `:root` rules (its variables and colour scheme, which match nothing in a shadow
    tree) as the shadow host's, inside the @media blocks that hold them: what widget.mjs reads
    back from the browser's parse, for a page with no script to do it."""
    out, stack, start = [], [], 0
    for i, ch in enumerate(css):
        if ch == "{":
            stack.append((css[start:i].split("*/")[-1].split(";")[-1].strip(), i + 1))
            start = i + 1
        elif ch == "}" and stack:
            prelude, body = stack.pop()
            if prelude == ":root":
                rule = f":host {{{css[body:i]}}}"
                for outer, _ in reversed(stack):
                    rule = f"{outer} {{ {rule} }}"
                out.append(rule)
            start = i + 1
        elif ch == ";" and not stack:
            start = i + 1
    return "\n".join(out)


def static(instance: str, widget: Widget, state: dict, sheets: tuple[str, ...]) -> str:
    """The widget's partial at `state` in a declarative shadow root with the site's sheets
    (`sheets`, as the live view adopts them) and its :root rules as the host's: the figure a
    notebook exported to HTML (nbconvert) shows where no widget manager runs, its readouts the
    state's, styled as on the site and apart from the exported page's own rules."""
    styles = (*sheets, host_rules(sheets[0]))
    style = "".join(f"<style>{s}</style>" for s in styles)
    figure = html(instance, widget, state, script=False)
    return (
        f'<div class="ae-notebook-host ae-notebook-static"><template shadowrootmode="open">'
        f'{style}<div class="ae-notebook">{figure}</div></template></div>'
    )
