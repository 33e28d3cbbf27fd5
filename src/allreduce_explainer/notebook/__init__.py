"""The site's widgets in a notebook (Jupyter, JupyterLab, VS Code, Colab, marimo), with anywidget:

    from allreduce_explainer.notebook import show
    show("ring_reduce_scatter", gpus=8)

Needs the `notebook` extra (`pip install "allreduce-explainer[notebook]"`); the core does not.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NAMES", "Widget", "show"]
EXTRA = "pip install 'allreduce-explainer[notebook]'"
NEEDS = ("anywidget", "ipywidgets", "traitlets", "jinja2")  # the extra's, and anywidget's own


def __getattr__(name: str) -> Any:
    """The widgets, imported when first asked for: the Jupyter server extension beside them
    (server.py) can be loaded by a Jupyter server of an environment that has the package, with
    or without anywidget, and must not need it. Without the `notebook` extra, the error says
    which one to install, not only which module is missing."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from . import widget  # anywidget: here, not at import (the docstring says why)
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] not in NEEDS:
            raise
        raise ModuleNotFoundError(
            f"allreduce_explainer.notebook needs the `notebook` extra ({missing.name} is not"
            f" installed): {EXTRA}",
            name=missing.name,
        ) from missing
    return getattr(widget, name)
