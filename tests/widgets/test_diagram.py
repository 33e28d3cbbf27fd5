"""The steppers' diagrams and contributions, against the simulation's own trace.

Every stepper: one node per GPU; each frame's arrows are its moves (one per sender and receiver)
labelled with the values the trace says were sent, coloured by the sender; the contributions
replayed from the moves agree with the simulation's contributor counts, and the full set is
exactly the cells the stepper marks complete.
"""

from __future__ import annotations

import json

import pytest

from allreduce_explainer import api
from allreduce_explainer.widgets import diagram, latency, ring, servers, why
from allreduce_explainer.widgets.common import value_text

CASES = [
    (why.naive, {}, "naive", {}),
    (why.naive, {"gpus": 6, "length": 3, "seed": 4}, "naive", {}),
    (ring.ring_reduce_scatter, {}, "ring", {}),
    (ring.ring_reduce_scatter, {"gpus": 7, "length": 9, "dtype": "fp32"}, "ring", {}),
    (ring.ring_all_gather, {}, "ring", {}),
    (ring.ring_all_gather, {"gpus": 5, "length": 11, "seed": 3}, "ring", {}),
    (latency.tree_allreduce, {}, "tree", {"chunks": 2}),
    (latency.tree_allreduce, {"gpus": 5, "chunks": 1, "length": 6}, "tree", {"chunks": 1}),
    (servers.servers_stepper, {}, "hierarchical", {}),
    (servers.servers_stepper, {"method": "ring", "servers": 3, "gpus_per_node": 2}, "ring", {}),
    (servers.servers_stepper, {"method": "multi-ring", "servers": 2, "gpus_per_node": 3}, None, {}),
]


def _trace(fn, params, state):
    """The simulation's steps behind a stepper's frames (1..K), from the core, not the widget."""
    p = state["params"]
    n, inputs = state["gpus"], state["inputs"]
    if fn is servers.servers_stepper:
        r = api.simulate(p["method"], n, p["gpus_per_node"], values=inputs, trace=True)
        return r["trace"]
    if fn is latency.tree_allreduce:
        r = api.simulate("tree", n, values=inputs, dtype=p["dtype"], trace=True, chunks=p["chunks"])
        return r["trace"]
    if fn is why.naive:
        return api.simulate("naive", n, values=inputs, trace=True)["trace"]
    r = api.simulate("ring", n, values=inputs, dtype=p["dtype"], trace=True)
    return r["trace"][: n - 1] if fn is ring.ring_reduce_scatter else r["trace"][n - 1 :]


@pytest.mark.parametrize(("fn", "params", "_alg", "_extra"), CASES)
def test_diagram_nodes_and_arrows_match_the_trace(fn, params, _alg, _extra):
    state = fn(params)
    n = state["gpus"]
    nodes = state["diagram"]["nodes"]
    assert sorted(q["gpu"] for q in nodes) == list(range(n))
    assert all(q["label"] == f"GPU {q['gpu']}" for q in nodes)
    w, h = state["diagram"]["w"], state["diagram"]["h"]
    assert all(0 < q["x"] < w and 0 < q["y"] < h for q in nodes)
    trace = _trace(fn, params, state)
    assert len(trace) == len(state["frames"]) - 1
    assert state["frames"][0]["arrows"] == []
    for frame, step in zip(state["frames"][1:], trace, strict=True):
        sent: dict[tuple[int, int], list] = {}
        for m in step["messages"]:
            sent.setdefault((m["src"], m["dst"]), []).extend(m["values"])
        got = {(a[0], a[1]): a for a in frame["arrows"]}
        assert set(got) == set(sent)
        for (src, dst), values in sent.items():
            a = got[(src, dst)]
            assert a[2] == src  # the sender's colour
            assert a[4] == diagram.label(values, state["dtype"])
            first = value_text(values[0], state["dtype"])
            assert a[4].startswith(first)
            assert a[3].startswith("M") and "Q" in a[3]
            assert 0 <= a[5] <= w + 100 and 0 <= a[6] <= h + 100


@pytest.mark.parametrize(("fn", "params", "_alg", "_extra"), CASES)
def test_contributions_agree_with_the_simulations_counts(fn, params, _alg, _extra):
    state = fn(params)
    n = state["gpus"]
    trace = _trace(fn, params, state)
    symbols = state["symbols"]
    everyone = diagram.symbol((1 << n) - 1)
    for frame, step in zip(state["frames"][1:], trace, strict=True):
        for i, row in enumerate(frame["holders"]):
            for j, idx in enumerate(diagram.cells(row)):
                text = symbols[idx]
                assert _count(text) == step["contributors"][i][j], (i, j, text)
                assert (text == everyone) == frame["complete"][i][j]


def _count(text: str) -> int:
    """How many GPUs a symbol names: a+b is 2, a–d is 4 (an independent reading of symbol())."""
    total = 0
    for part in text.split("+"):
        if "–" in part:
            a, b = part.split("–")
            total += ord(b) - ord(a) + 1
        else:
            total += 1
    return total


def test_first_frame_is_each_gpus_own_and_all_gather_starts_from_the_reduce_scatter():
    s = ring.ring_reduce_scatter()
    assert [s["symbols"][r[0]] for r in s["frames"][0]["holders"]] == ["a", "b", "c", "d"]
    g = ring.ring_all_gather()
    last_rs = [[s["symbols"][i] for i in diagram.cells(r)] for r in s["frames"][-1]["holders"]]
    first_ag = [[g["symbols"][i] for i in diagram.cells(r)] for r in g["frames"][0]["holders"]]
    assert first_ag == last_rs


@pytest.mark.parametrize(
    ("mask", "text"),
    [(0b1, "a"), (0b11, "a+b"), (0b1111, "a–d"), (0b1011, "a+b+d"), (0b11101, "a+c–e"),
     ((1 << 16) - 1, "a–p")],
)  # fmt: skip
def test_symbol(mask, text):
    assert diagram.symbol(mask) == text


def test_switch_moves_go_through_a_switch_node():
    """The in-network stepper's moves name the switch as -1: a node, and arrows to and from it."""
    frames = [
        {"buffers": [[1, 2], [3, 4]], "moves": []},
        {"buffers": [[4, 6], [3, 4]],
         "moves": [[0, -1, 0, 2, 0], [1, -1, 0, 2, 0], [-1, 0, 0, 2, 0]]},
        {"buffers": [[4, 6], [4, 6]], "moves": [[0, -1, 0, 2, 0], [-1, 1, 0, 2, 0]]},
    ]  # fmt: skip
    state = {"gpus": 2, "dtype": "int", "frames": frames}
    diagram.attach(state, diagram.ring(2, switch=True))
    assert sorted(q["gpu"] for q in state["diagram"]["nodes"]) == [-1, 0, 1]
    arrows = {(a[0], a[1]): a for a in frames[1]["arrows"]}
    assert arrows[(0, -1)][4] == "1, 2" and arrows[(1, -1)][4] == "3, 4"
    assert arrows[(-1, 0)][4] == "4, 6" and arrows[(-1, 0)][2] is None
    rows = [[state["symbols"][i] for i in diagram.cells(r)] for r in frames[2]["holders"]]
    assert rows == [["a+b"] * 2] * 2


def test_rows_grouped_by_server():
    s = servers.servers_stepper({"servers": 3, "gpus_per_node": 2})
    assert s["row_groups"] == [["server 0", 0, 2], ["server 1", 2, 4], ["server 2", 4, 6]]
    boxes = s["diagram"]["boxes"]
    assert [b["label"] for b in boxes] == ["server 0", "server 1", "server 2"]
    for q in s["diagram"]["nodes"]:
        b = boxes[q["gpu"] // 2]
        assert b["x"] < q["x"] < b["x"] + b["w"] and b["y"] < q["y"] < b["y"] + b["h"]


def test_state_growth_is_modest():
    """The diagram and contributions add at most 1 KiB per frame to a default stepper's state:
    bounded in bytes, not as a share, so that shorter narration does not tighten the bound."""
    for fn in (
        why.naive,
        ring.ring_reduce_scatter,
        latency.tree_allreduce,
        servers.servers_stepper,
    ):
        s = fn()
        full = len(json.dumps(s, separators=(",", ":")))
        for f in s["frames"]:
            del f["arrows"], f["holders"]
        for k in ("diagram", "symbols", "letters"):
            del s[k]
        added = full - len(json.dumps(s, separators=(",", ":")))
        assert added <= 1024 * len(s["frames"]), fn.__name__
