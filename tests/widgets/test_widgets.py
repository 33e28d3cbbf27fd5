"""Widget functions: pure, JSON-able, right, and every bad parameter answered with its field."""

import json

import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import bridge, widgets
from allreduce_explainer.schedules.schedule import split
from helpers import ROOT, examples

W = widgets.WIDGETS
BASIC_TRACE_TYPES = {"scatter", "bar", "pie"}  # all that plotly.js-basic-dist draws
# a ring stepper's gpus, length, dtype and seed
RING_STEPPER = (
    st.integers(2, 16),
    st.integers(1, 64),
    st.sampled_from(["int", "fp32", "bf16"]),
    st.integers(0, 10**6),
)


@pytest.mark.parametrize("name", sorted(widgets.WIDGETS))
def test_default_state_is_json_and_figures_are_valid_plotly(name):
    state = widgets.WIDGETS[name]()
    json.dumps(state, allow_nan=False)
    if state["kind"] == "chart":  # one figure, or several under "figures" (chart.js)
        parts = [state] if "figure" in state else list(state["figures"].values())
        for part in parts:
            fig = go.Figure(part["figure"])  # raises on any invalid property
            assert {t.type for t in fig.data} <= BASIC_TRACE_TYPES


@settings(max_examples=examples(25), deadline=None)
@given(*RING_STEPPER)
def test_reduce_scatter_ends_with_each_gpu_owning_one_complete_chunk(n, length, dtype, seed):
    s = W["ring_reduce_scatter"]({"gpus": n, "length": length, "dtype": dtype, "seed": seed})
    assert len(s["frames"]) == n  # the start and n - 1 steps
    last = s["frames"][-1]
    chunks = split(0, length, n)
    for i in range(n):
        a, b = chunks[i]  # NCCL's runRing: GPU r finishes chunk r (all_reduce.h:60)
        assert all(last["complete"][i][a:b]), f"GPU {i} does not own chunk {i}"
        if dtype == "int":
            assert last["buffers"][i][a:b] == s["target"][a:b]


@settings(max_examples=examples(25), deadline=None)
@given(*RING_STEPPER)
def test_all_gather_ends_with_the_sum_everywhere_and_a_verdict(n, length, dtype, seed):
    s = W["ring_all_gather"]({"gpus": n, "length": length, "dtype": dtype, "seed": seed})
    last = s["frames"][-1]
    assert all(all(row) for row in last["complete"])
    assert all(b == last["buffers"][0] for b in last["buffers"])
    check = s["check"]
    assert check["identical"]
    if dtype == "int":
        assert check["all_match"] and "Exact match" in check["verdict"]
        assert last["buffers"][0] == s["target"]


def test_all_gather_starts_where_reduce_scatter_ends():
    rs = W["ring_reduce_scatter"]({"gpus": 7, "length": 10})
    ag = W["ring_all_gather"]({"gpus": 7, "length": 10})
    assert ag["frames"][0]["buffers"] == rs["frames"][-1]["buffers"]
    assert ag["inputs"] == rs["inputs"]


@pytest.mark.parametrize(
    ("n", "length", "dtype", "each"),
    [
        (4, 8, "int", "24 bytes of its 32"),  # (n−1)/n · 8 numbers · 4 bytes
        (8, 64, "bf16", "112 bytes of its 128"),  # 7/8 · 64 · 2
        (3, 8, "fp32", "20 to 24 bytes of its 32"),  # chunks of 3, 3, 2: two of them sent
    ],
)
def test_each_ring_half_heads_with_its_steps_and_what_each_gpu_sends(n, length, dtype, each):
    """Each half sends n − 1 of a GPU's n chunks, (n−1)/n of its gradient, in n − 1 steps."""
    for name in ("ring_reduce_scatter", "ring_all_gather"):
        s = W[name]({"gpus": n, "length": length, "dtype": dtype})
        ring = " → ".join(map(str, [*range(n), 0])) + " (rank order)"
        assert s["readouts"] == {"steps": f"{n - 1} (n − 1)", "sent": each, "ring": ring}, name
        assert len(s["frames"]) - 1 == n - 1


def test_edited_values_are_used():
    values = [[1, 2, 3], [4, 5, 6]]
    s = W["ring_all_gather"]({"gpus": 2, "length": 3, "values": values})
    assert s["target"] == [5, 7, 9] and s["frames"][-1]["buffers"] == [[5, 7, 9]] * 2


def test_naive_counts_gpu0_bytes():
    s = W["naive"]({"gpus": 5, "length": 3})
    assert len(s["frames"]) == 1 + 2 * 4
    assert s["readouts"]["root_received"].startswith("48 bytes")  # 4 gradients x 3 x 4 bytes
    assert s["extra_rows"][1]["values"] == [t / 5 for t in s["target"]]


def test_scaling_chart_marks_the_chosen_count():
    s = W["scaling"]({"gpus": 128, "params_b": 70})
    marker = s["figure"]["data"][2]
    assert marker["x"] == [128, 128]
    ring = s["figure"]["data"][1]
    assert ring["y"][ring["x"].index(128)] == pytest.approx(2 * 127 / 128 * 140e9 / 50e9)


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("ring_reduce_scatter", {"gpus": 17}, "gpus"),
        ("ring_reduce_scatter", {"gpus": "4"}, "gpus"),
        ("ring_reduce_scatter", {"length": 0}, "length"),
        ("ring_reduce_scatter", {"length": 1e9}, "length"),
        ("ring_reduce_scatter", {"dtype": "fp8"}, "dtype"),
        ("ring_reduce_scatter", {"gpus": 2, "values": [[1], ["x"]]}, "values"),
        ("ring_all_gather", {"gpus": None}, "gpus"),
        ("naive", {"gpus": 9}, "gpus"),
        ("scaling", {"gpus": 12}, "gpus"),
        ("scaling", {"params_b": -1}, "params_b"),
        ("scaling", {"bogus": 1}, "bogus"),
    ],
)
def test_bad_parameters_come_back_as_field_errors(name, params, field):
    out = json.loads(bridge.call(name, json.dumps(params)))
    assert out["ok"] is False and out["error"]["field"] == field and out["error"]["message"]


def test_bridge_never_raises():
    for name, payload in [("nope", "{}"), ("scaling", "not json"), ("scaling", "[1]")]:
        out = json.loads(bridge.call(name, payload))
        assert out["ok"] is False


@pytest.mark.parametrize(
    "layout",
    [(("readouts", "nowhere"),), (("table", "The data"),)],
)
def test_a_chart_record_refuses_a_layout_the_chart_partial_cannot_draw(layout):
    """A group the record does not have, or a part templates/widgets/chart.html does not know,
    is refused when the module is read, not when a page is built."""
    with pytest.raises(ValueError, match="no layout part"):
        widgets.Widget(
            "x", dict, {}, widgets.CHART, headline=(("a", "A"),), layout=layout, readouts={}
        )


def test_every_chart_without_a_partial_of_its_own_has_a_label_and_a_layout():
    """chart.html draws these from their records alone: the figure's name and what it shows."""
    own = {p.stem for p in (ROOT / "templates" / "widgets").glob("*.html")}
    drawn = [
        w
        for w in widgets.REGISTRY.values()
        if w.view in (widgets.CHART, widgets.PANEL) and w.name not in own
    ]
    assert drawn and all(w.label and w.layout for w in drawn), [w.name for w in drawn]
