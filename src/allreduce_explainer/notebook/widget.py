"""The site's widgets in a notebook, as anywidgets: one class per widget (`RingReduceScatter`),
made from its spec as the command line's flags are, each parameter a trait with the spec's
range and default. The kernel computes every state with the widget function the site's worker
calls (bridge.call), the browser draws it with the site's views (esm.py). Needs the `notebook`
extra (anywidget, Jinja2).
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import anywidget
import traitlets

from .. import bridge, records
from ..params import Param
from ..widgets import REGISTRY, views
from ..widgets import Widget as Record
from . import assets, esm, partial

# The teacher's sheet lists the stages that have exercises, which only the site's pages know
NOT_IN_NOTEBOOKS = {"exercise_sheet": "the teacher's sheet is on the site's course page"}
NAMES = tuple(n for n in REGISTRY if n not in NOT_IN_NOTEBOOKS)  # what show(name) accepts
_instances = itertools.count(1)  # a suffix per widget: its controls' ids unique on the page
LONGEST_SHOWN = 40  # a parameter's value longer than this (a pasted log) is left out of a repr


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
    """What every widget's class shares; `RingReduceScatter(gpus=8)` is one of them (CLASSES).

    Each parameter is a trait, synced with the view: set it in a cell (`w.gpus = 16`) to
    recompute and redraw, `w.observe(f, "gpus")`, `ipywidgets.jslink((a, "gpus"), (b, "gpus"))`;
    in marimo `mo.ui.anywidget(w).value["gpus"]`. A parameter named like one of ipywidgets' own
    attributes takes a trailing underscore (the cluster's `log` is `log_`). `state` is the JSON
    state the views draw, its parameters in `state["params"]`; `figure()` a chart's Plotly figure.
    """

    record: Record  # the widget's record (widgets/), set on each generated class
    traits_of: dict[str, str]  # its spec's parameter -> the trait that holds it

    _esm = traitlets.Unicode(esm.module()).tag(sync=True)
    # not anywidget's _css, which it puts in the notebook's page: these go in the shadow root
    _site_css = traitlets.Unicode(esm.site_sheet()).tag(sync=True)
    _box_css = traitlets.Unicode(esm.BOX).tag(sync=True)
    name = traitlets.Unicode(read_only=True).tag(sync=True)
    view = traitlets.Unicode(read_only=True).tag(sync=True)
    html = traitlets.Unicode(read_only=True).tag(sync=True)
    _param_traits = traitlets.Dict(read_only=True).tag(sync=True)  # for the view's saves
    state = traitlets.Dict(read_only=True)

    def __init__(self, **params: Any):
        if not hasattr(self, "record"):
            raise TypeError("Widget is the widgets' base: use show(name) or a class of CLASSES")
        self._quiet = True  # the traits set below are the state's own: nothing to recompute
        fn = self.record.name
        unknown = sorted(set(params) - set(self.traits_of.values()) - set(self.traits_of))
        if unknown:
            raise traitlets.TraitError(f"{unknown[0]}: is not a parameter of {fn}")
        given = {p: params[t] for p, t in self.traits_of.items() if t in params}
        given |= {p: params[p] for p in self.traits_of if p in params}
        state = computed(fn, given)
        super().__init__(**{self.traits_of[p]: v for p, v in state["params"].items()})
        self.set_trait("name", fn)
        self.set_trait("view", self.record.view)
        self.set_trait("_param_traits", dict(self.traits_of))
        self.set_trait("state", state)
        self.set_trait("html", partial.html(f"{fn}-nb{next(_instances)}", self.record, state))
        self._quiet = False
        self.on_msg(self._message)

    def __repr__(self) -> str:
        """The widget as text (`print(w)`, a terminal's echo, the bundle's `text/plain`): its class
        with the parameters changed from their defaults, then its figures under their labels."""
        if not self.state:  # not yet computed (an error while it was made)
            return object.__repr__(self)
        changed = ", ".join(
            f"{self.traits_of[p]}={v!r}"
            for p, v in self.state["params"].items()
            if v != self.record.spec[p].default and isinstance(v, int | float | str)
            and len(repr(v)) <= LONGEST_SHOWN
        )  # fmt: skip
        rows = [f"  {label}: {value}" for label, value in self.figures()]
        return "\n".join([f"{type(self).__name__}({changed})", *rows])

    def figures(self) -> list[tuple[str, str]]:
        """(label, figure) of the state: its answer's record as `records.block` renders it, as the
        command line's human view renders the same question's answer, where the widget asks an
        api question (`record.result`); else the page's headline readouts."""
        record, answer = self.record.result, self.state.get("result")
        if record is not None and answer is not None:
            return list(records.block(record, answer, [q.key for q in record.fields]).values())
        readouts = self.state.get("readouts", {})
        return [(label, readouts[k]) for k, label in self.record.headline if k in readouts]

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """anywidget's bundle (the live view, which notebooks pick first), its `text/plain` the
        widget's repr (the figures as text), and a `text/html`
        fallback: the state drawn by its partial, static (partial.static), which nbconvert's HTML
        export shows where it has no saved widget state, and a front end without widgets shows."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        sheets = (self._site_css, self._box_css)
        instance = f"{self.name}-static{next(_instances)}"
        data["text/html"] = partial.static(instance, self.record, self.state, sheets)
        return data, metadata

    def parameters(self) -> dict:
        """The parameters as the traits hold them now, under the spec's names."""
        return {p: getattr(self, t) for p, t in self.traits_of.items()}

    def predict(self, answer: str) -> dict:
        """The widget's own judge of a prediction, as the page's predict-first form asks it
        (bridge.predict): {correct, message} at this widget's parameters, the message with the
        gap between the guess and the result. A lab asks it before it shows the widget."""
        if self.record.predict is None:
            raise ValueError(f"name: {self.name} asks no prediction")
        return self.record.predict(self.parameters(), answer)

    def _check(self, proposal: dict) -> Any:
        """A parameter set in a cell (or by a linked widget's view) is checked as the page
        checks it, with the others as they are, before it is kept; the new state waits for the
        change's notification."""
        value = proposal["value"]
        trait = proposal["trait"].name
        param = next(p for p, t in self.traits_of.items() if t == trait)
        if self._quiet or value == self.state["params"][param]:
            return value  # the state's own value, or a view's answer kept already, coming back
        self._pending = computed(self.record.name, {**self.parameters(), param: value})
        return value

    def _redraw(self, change: dict) -> None:
        """A parameter changed in the kernel: the new state, sent to every view of this widget,
        and the other parameters as the widget settled them (a model's own batch, when the model
        changed) in their traits."""
        pending = getattr(self, "_pending", None)
        if self._quiet or pending is None:
            return
        self._pending = None
        self.set_trait("state", pending)
        self._quiet = True
        try:
            for param, value in pending["params"].items():
                if getattr(self, self.traits_of[param]) != value:
                    setattr(self, self.traits_of[param], value)
        finally:
            self._quiet = False
        self.send({"type": "state", "state": pending})

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
        text = bridge.call(self.record.name, json.dumps(message.get("params")))
        ms = (time.perf_counter() - t0) * 1e3
        self.send({"type": "result", "id": message["id"], "pythonMs": ms}, [text.encode()])
        answer = json.loads(text)
        if answer["ok"]:
            self._keep(answer["state"])

    def _keep(self, state: dict) -> None:
        """A view's answered change, kept in the kernel after the view has its answer: the view
        saves the changed parameters itself, so they are not synced back to it (a change's one
        round trip; your cluster's log is a megabyte), and its save changes nothing here."""
        self.set_trait("state", state)
        values = {self.traits_of[p]: v for p, v in state["params"].items()}
        self._quiet = True
        try:
            with self._lock_property(**values), self.hold_trait_notifications():
                for trait, value in values.items():
                    setattr(self, trait, value)
        finally:
            self._quiet = False

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


def trait(p: Param) -> traitlets.TraitType:
    """The trait that holds the parameter `p`: its kind's type, its range or choices, its
    default; synced with the view, and not echoed back to it (a view saves what it drew)."""
    common = {"allow_none": p.optional or p.default is None, "help": p.label}
    if p.kind == "int":
        t = traitlets.Int(p.default, min=p.lo, max=p.hi, **common)
    elif p.kind == "float":
        t = traitlets.Float(p.default, min=p.lo, max=p.hi, **common)
    elif p.kind == "choice":
        t = traitlets.Enum(p.values(), p.default, **common)
    elif p.kind == "bool":
        t = traitlets.Bool(p.default, **common)
    elif p.kind in ("name", "text"):  # a name: other spellings too, which the widget resolves
        t = traitlets.Unicode(p.default, **common)
    else:  # data: any JSON, checked by the widget's function
        t = traitlets.Any(p.default, **common)
    return t.tag(sync=True, echo_update=False)


def trait_name(param: str) -> str:
    """The trait's name: the parameter's, but for one that ipywidgets uses itself (`log`)."""
    return param + "_" if hasattr(anywidget.AnyWidget, param) else param


def class_name(name: str) -> str:
    return "".join(word.capitalize() for word in name.split("_"))


def widget_class(record: Record) -> type[Widget]:
    """The class of one widget, generated from its record's spec."""
    traits_of = {p: trait_name(p) for p in record.spec}
    names = tuple(traits_of.values())
    namespace = {
        "__doc__": f"{record.label or record.name} (the site's `{record.name}` widget). "
        + (Widget.__doc__ or ""),
        "__module__": __name__,
        "record": record,
        "traits_of": traits_of,
        **{traits_of[p]: trait(q) for p, q in record.spec.items()},
        "_check": traitlets.validate(*names)(Widget._check),
        "_redraw": traitlets.observe(*names)(Widget._redraw),
    }
    return type(class_name(record.name), (Widget,), namespace)


CLASSES = {name: widget_class(REGISTRY[name]) for name in NAMES}  # "latency" -> Latency
globals().update({cls.__name__: cls for cls in CLASSES.values()})


def show(name: str, **params: Any) -> Widget:
    """The widget `name` at `params` (the rest at their defaults), to end a cell with:
    `show("ring_reduce_scatter", gpus=8)` is `RingReduceScatter(gpus=8)`."""
    return CLASSES[function_name(name)](**params)
