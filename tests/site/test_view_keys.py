"""The views' contract, both ways: every key the browser's views and the partials read from a state
is a key widgets/views.py declares, and every key it declares is read by them or listed below as
Python's own; the states the widgets make hold only declared keys, and all of them.

The readers are found by pattern, not by running them. A state is read as `state.KEY` (stepper.js,
chart.js, widget.js and the partials; `this.state.KEY` too) and, in widget.js, as `s.KEY` (its
`var s = this.state`); a stepper's frame as `frame.KEY` (stepper.js), `f.KEY` (diagram.js's
`frame(svg, f, k)`) and `first.KEY` (stepper.html's first frame); one figure of a chart as `p.KEY`
(chart.js's `p = parts(name)`, the state itself or one of its `figures`) and `part.KEY`
(_macros.html's chart macro). A new reader that names its state otherwise is not seen: keep to
these names.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from allreduce_explainer import widgets
from allreduce_explainer.widgets import views

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "client" / "js"
PARTIALS = ROOT / "templates" / "widgets"

# written and read by no view: what Python and the tests use
STEPPER_OWN = {
    "kind",  # the record's view, which the partial's data-kind gives the page
    "gpus",  # diagram.attach's count of rows; the tests'
    "length",
    "owned",  # the chunk each GPU owns after a reduce-scatter: the tests'
}
FRAME_OWN = {"op"}  # diagram.holders replays "add" and "copy"
CHART_OWN = {"kind"}
# charts whose states keep the core's answers beside the view's keys (views.chart's `data`)
CHART_DATA = {
    "innetwork_bandwidth": {"ideal", "nccl", "across"},
    "latency": {"crossover_bytes", "crossover_nccl_bytes", "crossovers_nccl_bytes", "picks"},
    # fit_apply: only with a log the NCCL model fits; debug and topology_apply: only with a log
    # that has NCCL_DEBUG=INFO lines (widgets/debugview.py)
    "cluster": {"result", "fit_apply", "debug", "topology_apply"},
    "ddp_buckets": {"result"},  # the ddp answer its record renders (notebook repr, CLI)
    "orders": {"alone", "inside", "changed", "cost"},
}
# a log the calculator fits (16 A100s over two servers), for the cluster's fit_apply
FITTED_LOG = ROOT / "tests" / "data" / "nccl-tests" / "aws-awsome-2xp4de-16xa100-efa.txt"
DEBUG_LOG = ROOT / "tests" / "data" / "nccl-debug" / "nccl-tests-188-2x8-2channels-no-nvls.txt"


def read(pattern: str, *files: Path) -> set[str]:
    """The keys `pattern` (one group: the key) finds in these files."""
    return {k for f in files for k in re.findall(pattern, f.read_text())}


def declared(typed: type) -> set[str]:
    return set(typed.__required_keys__ | typed.__optional_keys__)


CONTROLLER = (JS / "widget.js", JS / "urlstate.js", JS / "stored.js")  # every view's params


def controller_reads() -> set[str]:
    return read(r"\bstate\.(\w+)", *CONTROLLER) | read(r"\bs\.(\w+)", JS / "widget.js")


def partial_reads(*names: str) -> set[str]:
    return read(r"\bstate\.(\w+)", *(PARTIALS / n for n in names))


def test_the_patterns_see_the_views():
    """An oracle for the patterns themselves: keys each reader is known to use."""
    assert {"chunks", "frames", "check", "symbols"} <= read(r"\bstate\.(\w+)", JS / "stepper.js")
    assert {"buffers", "holders", "rows_show"} <= read(r"\bframe\.(\w+)", JS / "stepper.js")
    assert read(r"\bf\.(\w+)", JS / "diagram.js") == {"arrows"}
    assert read(r"\bp\.(\w+)", JS / "chart.js") == {"figure", "summary", "table"}
    assert {"params", "readouts"} <= controller_reads()


def stepper_partials() -> list[str]:
    """stepper.html and the partials of steppers that have one of their own (nccl_topology)."""
    own = [f"{n}.html" for n, w in widgets.REGISTRY.items() if w.view == views.STEPPER]
    return ["stepper.html", *(n for n in own if (PARTIALS / n).exists())]


def test_every_stepper_key_is_read_and_every_read_key_declared():
    reads = (
        read(r"\bstate\.(\w+)", JS / "stepper.js")
        | controller_reads()
        | partial_reads(*stepper_partials(), "_macros.html")
    ) - {"figures"}  # _macros.html's chart macro
    assert reads == declared(views.Stepper) - STEPPER_OWN


def test_every_frame_key_is_read_and_every_read_key_declared():
    reads = (
        read(r"\bframe\.(\w+)", JS / "stepper.js")
        | read(r"\bf\.(\w+)", JS / "diagram.js")
        | read(r"\bfirst\.(\w+)", *(PARTIALS / n for n in stepper_partials()))
        | read(r"\bframes\[0\]\.(\w+)", PARTIALS / "_macros.html")
    )
    assert reads == declared(views.Frame) - FRAME_OWN


def test_every_chart_and_panel_key_is_read_and_every_read_key_declared():
    # chart.html, the charts' own partials and the pieces their layouts include: every partial
    # but the steppers', the exercises' and the macros
    partials = [
        p.name
        for p in PARTIALS.glob("*.html")
        if p.name not in (*stepper_partials(), "_macros.html") and not p.name.startswith("exercise")
    ]
    reads = (
        read(r"\bstate\.(\w+)", JS / "chart.js")
        | read(r"\bp\.(\w+)", JS / "chart.js")
        | read(r"\bpart\.(\w+)", PARTIALS / "_macros.html")
        | controller_reads()
        | partial_reads(*partials)
    )
    assert reads == declared(views.Chart) - CHART_OWN
    assert declared(views.Part) <= reads
    assert declared(views.Panel) - CHART_OWN <= reads


def by_view(*kinds: str) -> list[str]:
    return sorted(w.name for w in widgets.REGISTRY.values() if w.view in kinds)


@pytest.mark.parametrize("name", by_view(views.STEPPER))
def test_a_steppers_state_holds_declared_keys_only(name):
    state = widgets.WIDGETS[name]()
    assert state["kind"] == widgets.REGISTRY[name].view
    assert set(state) <= declared(views.Stepper)
    for frame in state["frames"]:
        assert set(frame) <= declared(views.Frame)


def test_every_declared_stepper_key_is_written_by_some_stepper():
    states = [widgets.WIDGETS[name]() for name in by_view(views.STEPPER)]
    assert set().union(*states) == declared(views.Stepper)
    frames = [f for s in states for f in s["frames"]]
    assert set().union(*frames) == declared(views.Frame)


@pytest.mark.parametrize("name", by_view(views.CHART, views.PANEL))
def test_a_charts_state_holds_declared_keys_only(name):
    state = widgets.WIDGETS[name]()
    assert state["kind"] == widgets.REGISTRY[name].view
    typed = views.Panel if state["kind"] == views.PANEL else views.Chart
    assert set(state) - CHART_DATA.get(name, set()) <= declared(typed)
    for part in state.get("figures", {}).values():
        assert set(part) == declared(views.Part)


@pytest.mark.parametrize("name", sorted(widgets.REGISTRY))
def test_every_readout_label_names_a_value_the_state_has(name):
    w = widgets.REGISTRY[name]
    state = w.function()
    assert state["kind"] == w.view
    for pairs in (w.headline, *w.readouts.values()):
        for key, label in pairs:
            assert key in state["readouts"] and label, (name, key)


def test_the_log_panel_reads_the_fit_the_cluster_writes():
    """logpanel.js reads four keys of the cluster's state: the fit to apply, which the state
    holds once a pasted log is fitted and not before, whether it has figures (before a log
    the panel shows its examples instead of empty charts), and, for a log with NCCL_DEBUG=INFO
    lines, the ring or tree to draw and the topology to apply."""
    reads = read(r"\bstate\.(\w+)", JS / "logpanel.js")
    assert reads == {"fit_apply", "figures", "debug", "topology_apply"}
    cluster = widgets.WIDGETS["cluster"]
    fitted = cluster({"log": FITTED_LOG.read_text(), "log_gpus": 16})
    assert "fit_apply" in fitted
    assert set(fitted) - declared(views.Chart) <= CHART_DATA["cluster"]
    debug = cluster({"log": DEBUG_LOG.read_text()})
    assert {"debug", "topology_apply"} <= set(debug)
    assert set(debug["topology_apply"]) <= set(widgets.SPECS["cluster"])
    assert set(fitted["fit_apply"]) <= set(widgets.SPECS["cluster"])
    assert "fit_apply" not in cluster()
