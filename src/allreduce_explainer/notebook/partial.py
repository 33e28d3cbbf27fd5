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


def html(instance: str, widget: Widget, state: dict) -> str:
    """The widget's partial as the page would show it, named `instance` (unique on the notebook's
    page, so its controls' ids are too), drawn by the partial the site's build picks."""
    return (
        environment()
        .select_template(views.partials(widget.name, widget.view))
        .render(
            name=instance,
            widget=widget,
            spec=widget.spec,
            state=state,
            state_json=views.state_json(state),
        )
    )
