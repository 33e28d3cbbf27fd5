"""The site's widgets in a notebook (Jupyter, JupyterLab, VS Code, Colab, marimo), with anywidget:

    from allreduce_explainer.notebook import show
    show("ring_reduce_scatter", gpus=8)

Needs the `notebook` extra (`pip install "allreduce-explainer[notebook]"`); the core does not.
"""

from .widget import NAMES, Widget, show

__all__ = ["NAMES", "Widget", "show"]
