"""The notebook widget in the kernel, without a browser: states from the site's widget functions,
parameters checked as the page checks them, the exercise's verdict, and every widget's partial."""

from __future__ import annotations

import json
import re

import pytest
import traitlets

from allreduce_explainer.notebook import NAMES, RingReduceScatter, Widget, show
from allreduce_explainer.notebook.assets import bundle
from allreduce_explainer.notebook.esm import module
from allreduce_explainer.widgets import REGISTRY
from helpers import ROOT


def answered(w: Widget, params: dict) -> dict:
    """What a view's "call" gets back, as the browser's adapter asks it."""
    sent = []
    w.send = lambda message, buffers=None: sent.append((message, buffers))
    w._message(w, {"type": "call", "id": 7, "params": params}, [])
    message, buffers = sent[-1]
    assert message["id"] == 7 and "response" not in message and len(buffers) == 1
    return json.loads(buffers[0].decode())  # the adapter's TextDecoder and JSON.parse


def test_show_takes_the_url_spelling_and_the_parameters():
    w = show("ring-reduce-scatter", gpus=8)
    assert isinstance(w, RingReduceScatter) and w.name == "ring_reduce_scatter" and w.gpus == 8
    assert len(w.state["inputs"]) == 8  # one gradient per GPU
    assert len(w.state["frames"]) == 8  # step 0, then n - 1 = 7 steps of the reduce-scatter


def test_an_unknown_name_lists_the_choices():
    with pytest.raises(ValueError, match=r"name: no widget named 'ring'.*ring_reduce_scatter"):
        show("ring")
    with pytest.raises(traitlets.TraitError, match=r"^gpu: is not a parameter of latency"):
        show("latency", gpu=8)


def test_a_trait_set_in_a_cell_recomputes_and_bad_ones_name_the_field():
    w = show("latency", gpus=64)
    seen = []
    w.observe(lambda change: seen.append(change["new"]), "gpus")
    w.gpus = 128
    assert w.state["params"]["gpus"] == 128 and seen == [128]
    with pytest.raises(traitlets.TraitError, match=r"'gpus' trait .* not be less than 2"):
        w.gpus = 1  # the spec's range, held by the trait itself
    with pytest.raises(traitlets.TraitError, match=r"^gpus: 60 GPUs do not fill servers of 8"):
        w.gpus = 60  # the widget's own check, tying two parameters together
    with pytest.raises(traitlets.TraitError, match=r"Latency\b.*'gpus'|'gpus'.*Latency"):
        w.gpus = "many"
    assert w.gpus == 128 and w.state["params"]["gpus"] == 128 and seen == [128]


def test_traits_changed_together_are_computed_together():
    """Two changes under hold_trait_notifications are checked together: 20 GPUs, refused on
    servers of 8, pass with servers of 4 set beside them, and the state has both."""
    w = show("latency", gpus=64, gpus_per_node=8)
    with w.hold_trait_notifications():
        w.gpus_per_node = 4
        w.gpus = 20
    assert (w.state["params"]["gpus"], w.state["params"]["gpus_per_node"]) == (20, 4)


def test_a_views_call_answers_like_the_worker_and_syncs_params():
    w = show("latency")
    good = answered(w, {**w.parameters(), "gpus": 256})
    assert good["ok"] and w.gpus == 256 and w.state == good["state"]
    bad = answered(w, {**w.parameters(), "gpus": 0})
    assert bad == {"ok": False, "error": {"field": "gpus", "message": bad["error"]["message"]}}
    assert w.gpus == 256


def test_the_exercise_checks_an_answer_in_the_kernel():
    w = show("exercise", kind="ring_time", seed=3)
    right = answered(w, {**w.parameters(), "answer": w.state["solution_answer"]})
    wrong = answered(w, {**w.parameters(), "answer": "1e9 s"})
    assert right["state"]["feedback"]["correct"] is True
    assert wrong["state"]["feedback"]["correct"] is False


def test_a_chart_gives_its_plotly_figure_and_a_stepper_refuses():
    go = pytest.importorskip("plotly.graph_objects")
    w = show("latency")
    fig = w.figure()
    assert isinstance(fig, go.Figure)
    assert [t.name for t in fig.data] == [t.get("name") for t in w.state["figure"]["data"]]
    with pytest.raises(ValueError, match="not a chart"):
        show("naive").figure()


@pytest.mark.parametrize("name", NAMES)
def test_every_widget_draws_its_partial(name):
    params = {"kind": "ring_time"} if name == "exercise" else {}
    w = show(name, **params)
    kind = re.search(r'data-widget="([^"]+)" data-kind="([^"]+)"', w.html)
    assert kind and kind[1].startswith(f"{name}-nb") and kind[2] == REGISTRY[name].view


def test_every_site_widget_but_the_teachers_sheet_is_a_notebook_widget():
    assert set(REGISTRY) - set(NAMES) == {"exercise_sheet"}


def test_the_module_carries_the_sites_own_views():
    """The module is esbuild's bundle of client/js/notebook.js, whose imports reach the site's
    own controller and views: the graph the site's page bundle comes from."""
    assert module().endswith(bundle("notebook.js", "esm").decode())
    js = ROOT / "client" / "js"
    seen, todo = set(), ["notebook.js"]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            text = (js / name).read_text()
            todo += re.findall(r'^import (?:.* from )?"\./([\w.]+)";', text, re.M)
    views = {"widget.js", "diagram.js", "stepper.js", "chart.js", "exercise.js", "logpanel.js"}
    assert views <= seen


def test_a_views_change_is_one_message_back_and_its_save_no_echo():
    """The view's answer is the one message a change sends to the front end: the parameters it
    saves itself are not synced back first (your cluster's megabyte log would travel twice more),
    and the save that follows changes nothing and is not echoed."""
    w = show("latency")
    sent = []
    w._send = lambda message, buffers=None: sent.append(message)
    params = {**w.parameters(), "gpus": 256}
    w._message(w, {"type": "call", "id": 3, "params": params}, [])
    assert [m["method"] for m in sent] == ["custom"] and sent[0]["content"]["id"] == 3
    assert w.gpus == 256
    sent.clear()
    w.set_state({"gpus": 256})  # the view's save, as ipywidgets applies a front end's update
    assert sent == [] and w.gpus == 256


def test_a_linked_views_change_recomputes_and_is_sent_as_a_state():
    """A trait set from the front end (a jslink from another widget's view) is a change the
    kernel has not computed: its new state goes to the views."""
    w = show("latency")
    sent = []
    w._send = lambda message, buffers=None: sent.append(message)
    w.set_state({"gpus": 512})
    assert w.state["params"]["gpus"] == 512
    states = [m["content"] for m in sent if m["content"].get("type") == "state"]
    assert len(states) == 1 and states[0]["state"]["params"]["gpus"] == 512
