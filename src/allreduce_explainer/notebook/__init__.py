"""The site's widgets in a notebook (Jupyter, JupyterLab, VS Code, Colab, marimo), with anywidget:

    from allreduce_explainer.notebook import show
    show("ring_reduce_scatter", gpus=8)

Needs the `notebook` extra (`pip install "allreduce-explainer[notebook]"`); the core does not.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NAMES", "Widget", "show"]


def __getattr__(name: str) -> Any:
    """The widgets, imported when first asked for: the Jupyter server extension beside them
    (server.py) is loaded by every Jupyter server of an environment that has the package, with
    or without anywidget, and must not need it."""
    if name in __all__:
        from . import widget  # anywidget: here, not at import (the docstring says why)

        return getattr(widget, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
