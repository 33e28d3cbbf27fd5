"""One of the site's widgets in a notebook, as an anywidget: the kernel computes every state with
the widget function the site's worker calls (bridge.call), the browser draws it with the site's
views (esm.py). Needs the `notebook` extra (anywidget, Jinja2).
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import anywidget
import traitlets

from .. import bridge
from ..widgets import REGISTRY, views
from . import assets, esm, partial

# The teacher's sheet lists the stages that have exercises, which only the site's pages know
NOT_IN_NOTEBOOKS = {"exercise_sheet": "the teacher's sheet is on the site's course page"}
NAMES = tuple(n for n in REGISTRY if n not in NOT_IN_NOTEBOOKS)  # what Widget(name) accepts
_instances = itertools.count(1)  # a suffix per widget: its controls' ids unique on the page


def function_name(name: str) -> str:
    """The widget function a name asks for: the site's ("ring_reduce_scatter") or its URL's
    spelling ("ring-reduce-scatter"); a clear error naming the choices for any other."""
    key = name.replace("-", "_") if isinstance(name, str) else name
    if key in NOT_IN_NOTEBOOKS:
        raise ValueError(f"name: {name!r} is not a notebook widget ({NOT_IN_NOTEBOOKS[key]})")
    if key not in NAMES:
        raise ValueError(f"name: no widget named {name!r}; choose one of {', '.join(NAMES)}")
    return key


def computed(name: str, params: dict) -> dict:
    """The state at `params`, as the page's worker gets it; a bad parameter is a TraitError
    naming it (the message the page shows next to its control)."""
    answer = json.loads(bridge.call(name, json.dumps(params)))
    if not answer["ok"]:
        error = answer["error"]
        raise traitlets.TraitError(f"{error['field']}: {error['message']}")
    return answer["state"]


class Widget(anywidget.AnyWidget):
    """`Widget("ring_reduce_scatter", gpus=8)`: the page's widget, its controls, views and checks.

    `params` (synced both ways; in marimo `mo.ui.anywidget(w).value["params"]`) are the widget's
    parameters as the page's URL names them; setting them in a cell recomputes and redraws.
    `state` is the JSON state the views draw; `figure()` a chart's Plotly figure.
    """

    _esm = traitlets.Unicode(esm.module()).tag(sync=True)
    _css = traitlets.Unicode(esm.styles()).tag(sync=True)
    name = traitlets.Unicode(read_only=True).tag(sync=True)
    view = traitlets.Unicode(read_only=True).tag(sync=True)
    html = traitlets.Unicode(read_only=True).tag(sync=True)
    params = traitlets.Dict().tag(sync=True, echo_update=False)
    state = traitlets.Dict(read_only=True)

    def __init__(self, name: str, **params: Any):
        fn = function_name(name)
        state = computed(fn, params)
        record = REGISTRY[fn]
        super().__init__()
        self.set_trait("name", fn)
        self.set_trait("view", record.view)
        self.set_trait("state", state)
        self.set_trait("html", partial.html(f"{fn}-nb{next(_instances)}", record, state))
        self._answering = False
        self.params = state["params"]
        self.on_msg(self._message)

    @traitlets.validate("params")
    def _check(self, proposal: dict) -> dict:
        """Parameters set in a cell are checked as the page checks them, before they are kept."""
        if self._answering or proposal["value"] == self.params:
            return proposal["value"]  # a view's answer, kept already, coming back
        self._pending = computed(self.name, proposal["value"])
        return proposal["value"]

    @traitlets.observe("params")
    def _redraw(self, change: dict) -> None:
        """Parameters set in a cell: the new state, sent to every view of this widget."""
        if self._answering or not hasattr(self, "_pending"):
            return
        self.set_trait("state", self._pending)
        self.send({"type": "state", "state": self._pending})

    def _message(self, _widget: Widget, message: dict, _buffers: list) -> None:
        """A view's request: a control changed (the worker's "call"), or Plotly for its charts.

        The answer travels as the bytes of its JSON, a binary buffer beside a small message: the
        bridge's JSON is sent as it comes (not parsed and written again by the kernel's protocol,
        which would escape every quote of it inside a string), and the kernel keeps its copy after
        the view has its answer. Stage 7's heaviest state is 140 kB."""
        if message.get("type") == "plotly":
            self.send({"type": "plotly", "id": message["id"]}, [assets.path("plotly").read_bytes()])
            return
        t0 = time.perf_counter()
        text = bridge.call(self.name, json.dumps(message.get("params")))
        ms = (time.perf_counter() - t0) * 1e3
        self.send({"type": "result", "id": message["id"], "pythonMs": ms}, [text.encode()])
        answer = json.loads(text)
        if answer["ok"]:
            self._keep(answer["state"], {**message["params"], **answer["state"]["params"]})

    def _keep(self, state: dict, params: dict) -> None:
        """A view's answered change, kept in the kernel after the view has its answer: the view
        saves the same parameters itself, so they are not synced back to it (a change's one
        round trip; your cluster's log is a megabyte), and its save is not echoed."""
        self.set_trait("state", state)
        self._answering = True
        try:
            with self._lock_property(params=params):
                self.params = params
        finally:
            self._answering = False

    def figure(self, which: str | None = None):
        """A chart's figure as a Plotly `Figure` (needs plotly): its main one, or the one of its
        `figures` named `which`."""
        if self.view != views.CHART:
            raise ValueError(f"name: {self.name} is a {self.view}, not a chart: it has no figure")
        import plotly.graph_objects as go  # the figures extra: only figure() needs it

        if which is None:
            return go.Figure(self.state["figure"])
        figures = self.state.get("figures", {})
        if which not in figures:
            raise ValueError(f"which: {self.name} has figures {', '.join(figures) or 'none'}")
        return go.Figure(figures[which]["figure"])


def show(name: str, **params: Any) -> Widget:
    """The widget `name` at `params` (the rest at their defaults), to end a cell with."""
    return Widget(name, **params)
