"""One class per widget, generated from its spec: every parameter a trait with the spec's kind,
range, choices and default, and a trait set in a cell recomputes the state the page's worker
would get for the same parameters (bridge.call, asked here directly)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import traitlets

from allreduce_explainer import bridge
from allreduce_explainer.notebook import CLASSES, NAMES, RingReduceScatter, Widget, show
from allreduce_explainer.params import Param
from allreduce_explainer.widgets import REGISTRY

TRAIT_OF_KIND = {
    "int": traitlets.Int,
    "float": traitlets.Float,
    "choice": traitlets.Enum,
    "bool": traitlets.Bool,
    "name": traitlets.Unicode,
    "text": traitlets.Unicode,
    "data": traitlets.Any,
}
# ipywidgets' own attribute (a widget's logger) and the cluster's pasted log
RENAMED = {"log": "log_"}
FIRST = {"exercise": {"kind": "ring_time"}}  # a widget whose default asks nothing


def test_every_notebook_widget_has_its_class_under_its_camel_case_name():
    assert list(CLASSES) == list(NAMES)
    names = {n: "".join(w.capitalize() for w in n.split("_")) for n in NAMES}
    assert {n: c.__name__ for n, c in CLASSES.items()} == names
    assert CLASSES["ring_reduce_scatter"] is RingReduceScatter
    assert all(issubclass(c, Widget) and c.record is REGISTRY[n] for n, c in CLASSES.items())


@pytest.mark.parametrize("name", NAMES)
def test_the_classs_traits_are_its_specs_parameters(name):
    cls, spec = CLASSES[name], REGISTRY[name].spec
    assert list(cls.traits_of) == list(spec)
    synced = set(cls.class_traits(sync=True))
    for p, q in spec.items():
        t = cls.traits_of[p]
        assert t == RENAMED.get(p, p), t
        trait = cls.class_traits()[t]
        assert type(trait) is TRAIT_OF_KIND[q.kind], (p, type(trait))
        assert t in synced, p
        assert trait.default_value == q.default, p
        if q.kind != "data":  # any JSON, null too
            assert trait.allow_none == (q.optional or q.default is None), p
        if q.kind in ("int", "float"):
            assert (trait.min, trait.max) == (q.lo, q.hi), p
        if q.kind == "choice":
            assert tuple(trait.values) == q.values(), p


def _moved(q: Param, value):
    """Another value the spec allows for q, or None: the next choice, a number inside the
    range."""
    if q.kind == "choice" and len(q.values()) > 1:
        values = q.values()
        return values[(values.index(value) + 1) % len(values)]
    if q.kind == "int" and q.hi is not None and value is not None and value + 1 <= q.hi:
        return value + 1
    if q.kind == "float" and q.hi is not None and value is not None:
        return value + (q.hi - value) / 2
    return None


def _worker(name: str, params: dict) -> dict:
    """What the page's worker answers for the same parameters."""
    return json.loads(bridge.call(name, json.dumps(params)))


@pytest.mark.parametrize("name", NAMES)
def test_setting_a_trait_recomputes_the_state_the_worker_gives(name):
    """Each parameter in turn: set in a cell, the state is the worker's for the same parameters;
    one the widget refuses with those others leaves the state as it was, a TraitError naming
    the parameter."""
    w = show(name, **FIRST.get(name, {}))
    cls, tried = type(w), 0
    for p, q in REGISTRY[name].spec.items():
        new = _moved(q, w.state["params"][p])
        if new is None:
            continue
        want = _worker(name, {**w.state["params"], p: new})
        before = w.state
        if not want["ok"]:
            with pytest.raises(traitlets.TraitError, match=rf"^{want['error']['field']}: "):
                setattr(w, cls.traits_of[p], new)
            assert w.state == before
            continue
        setattr(w, cls.traits_of[p], new)
        assert w.state == want["state"], p
        tried += 1
    assert tried >= 1


def test_a_stepper_set_in_a_cell_holds_the_sums_numpy_makes():
    """After the reduce-scatter each GPU holds, on the chunk it owns, the sum over all GPUs."""
    w = RingReduceScatter(gpus=4)
    w.gpus = 8
    s = w.state
    total = np.sum(np.array(s["inputs"]), axis=0)
    assert len(s["inputs"]) == 8 and s["target"] == total.tolist()
    final = s["frames"][-1]["buffers"]
    for gpu, chunk in enumerate(s["owned"]):
        a, b = s["chunks"][chunk]
        assert final[gpu][a:b] == total[a:b].tolist(), gpu


def test_a_class_takes_its_parameters_and_refuses_others():
    assert RingReduceScatter(gpus=8).state == _worker("ring_reduce_scatter", {"gpus": 8})["state"]
    with pytest.raises(traitlets.TraitError, match=r"^gpus: must be between 2 and 16"):
        RingReduceScatter(gpus=40)
    with pytest.raises(traitlets.TraitError, match=r"^gpu: is not a parameter"):
        RingReduceScatter(gpu=4)
    with pytest.raises(TypeError, match="show"):
        Widget()
