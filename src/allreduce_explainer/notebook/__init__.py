"""The site's widgets in a notebook (Jupyter, JupyterLab, VS Code, Colab, marimo), with anywidget:

    from allreduce_explainer.notebook import RingReduceScatter, show
    w = RingReduceScatter(gpus=8)  # or show("ring_reduce_scatter", gpus=8)
    w.gpus = 16                    # each parameter a trait: recomputed in the kernel, redrawn

Needs the `notebook` extra (`pip install "allreduce-explainer[notebook]"`); the core does not.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["CLASSES", "NAMES", "Widget", "show"]  # and each widget's class, RingReduceScatter...
EXTRA = "pip install 'allreduce-explainer[notebook]'"
NEEDS = ("anywidget", "ipywidgets", "traitlets", "jinja2")  # the extra's, and anywidget's own


def __getattr__(name: str) -> Any:
    """The widgets, imported when first asked for: the Jupyter server extension beside them
    (server.py) can be loaded by a Jupyter server of an environment that has the package, with
    or without anywidget, and must not need it. Without the `notebook` extra, the error says
    which one to install, not only which module is missing."""
    if name not in __all__ and not name[:1].isupper():  # a class is capitalised, a module not
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:  # anywidget: here, not at import (the docstring says why)
        widget = importlib.import_module(f"{__name__}.widget")
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] not in NEEDS:
            raise
        raise ModuleNotFoundError(
            f"allreduce_explainer.notebook needs the `notebook` extra ({missing.name} is not"
            f" installed): {EXTRA}",
            name=missing.name,
        ) from missing
    if name in __all__ or name in {cls.__name__ for cls in widget.CLASSES.values()}:
        return getattr(widget, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
