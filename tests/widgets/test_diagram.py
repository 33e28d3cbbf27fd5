"""The steppers' diagrams and contributions, against the simulation's own trace.

Every stepper: one node per GPU (per GPU and tree in the double binary tree); each frame's arrows
are its moves (one per sender, receiver and tree) labelled with the values the trace says were
sent, coloured by the sender; the contributions replayed from the moves agree with the
simulation's contributor counts, and the full set is exactly the cells the stepper marks
complete. The trees are drawn as trees, held against NCCL's definition in schedules/tree.py.
"""

from __future__ import annotations

import json
import math

import pytest

from allreduce_explainer import api
from allreduce_explainer.schedules import tree
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
        r = api.simulate(
            algorithm=p["method"],
            gpus=n,
            gpus_per_node=p["gpus_per_node"],
            values=inputs,
            trace=True,
        )
        return r["trace"]
    if fn is latency.tree_allreduce:
        r = api.simulate(
            algorithm="tree",
            gpus=n,
            values=inputs,
            dtype=p["dtype"],
            trace=True,
            chunks=p["chunks"],
        )
        return r["trace"]
    if fn is why.naive:
        return api.simulate(algorithm="naive", gpus=n, values=inputs, trace=True)["trace"]
    r = api.simulate(algorithm="ring", gpus=n, values=inputs, dtype=p["dtype"], trace=True)
    return r["trace"][: n - 1] if fn is ring.ring_reduce_scatter else r["trace"][n - 1 :]


@pytest.mark.parametrize(("fn", "params", "_alg", "_extra"), CASES)
def test_diagram_nodes_and_arrows_match_the_trace(fn, params, _alg, _extra):
    state = fn(params)
    n = state["gpus"]
    nodes = state["diagram"]["nodes"]
    copies = 2 if fn is latency.tree_allreduce else 1  # one node per tree
    assert sorted(q["gpu"] for q in nodes) == sorted(list(range(n)) * copies)
    assert all(q["label"] == f"GPU {q['gpu']}" for q in nodes)
    w, h = state["diagram"]["w"], state["diagram"]["h"]
    assert all(0 < q["x"] < w and 0 < q["y"] < h for q in nodes)
    trace = _trace(fn, params, state)
    assert len(trace) == len(state["frames"]) - 1
    assert state["frames"][0]["arrows"] == []
    half = _second_half(state) if copies == 2 else math.inf
    for frame, step in zip(state["frames"][1:], trace, strict=True):
        sent: dict[tuple[int, int, int], list] = {}
        for m in step["messages"]:
            sent.setdefault((m["src"], m["dst"], int(m["start"] >= half)), []).extend(m["values"])
        got = {(a[0], a[1], nodes[a[7]].get("tree", 0)): a for a in frame["arrows"]}
        assert len(got) == len(frame["arrows"])
        assert set(got) == set(sent)
        for (src, dst, _tree), values in sent.items():
            a = got[(src, dst, _tree)]
            assert a[2] == src  # the sender's colour
            assert a[4] == diagram.label(values, state["dtype"])
            first = value_text(values[0], state["dtype"])
            assert a[4].startswith(first)
            assert a[3].startswith("M") and "Q" in a[3]
            assert 0 <= a[5] <= w + 100 and 0 <= a[6] <= h + 100
            assert (nodes[a[7]]["gpu"], nodes[a[8]]["gpu"]) == (src, dst)


def _second_half(state) -> int:
    """Where tree B's half of the vector starts: the first column of its chunks (the second
    half of state["chunks"], k per tree)."""
    return state["chunks"][len(state["chunks"]) // 2][0]


def _depth(parents: list[int], v: int) -> int:
    """A node's level in a tree given by its parents: the edges up to the root."""
    d = 0
    while parents[v] >= 0:
        v, d = parents[v], d + 1
    return d


def _ends(path: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """An arrow path's first and last point ("M x1 y1 Q cx cy x2 y2 M... head")."""
    start, rest = path[1:].split("Q")
    x1, y1 = map(float, start.split())
    _cx, _cy, x2, y2 = map(float, rest.split("M")[0].split())
    return (x1, y1), (x2, y2)


@pytest.mark.parametrize(
    "params",
    [{}, {"gpus": 2, "length": 4}, {"gpus": 5, "chunks": 1, "length": 6}, {"gpus": 11},
     {"gpus": 16, "chunks": 3}],
)  # fmt: skip
def test_the_double_binary_tree_is_drawn_as_two_trees(params):
    """Root at the top, one row per level, deeper levels lower, tree A left of tree B; every
    arrow of a step joins a GPU and its parent in the tree that carries the moved chunk, from the
    sender's box to the receiver's. Levels and edges come from tree.dtree_parents, walked here."""
    state = latency.tree_allreduce(params)
    n, k = state["gpus"], state["params"]["chunks"]
    parents = tree.dtree_parents(n)
    nodes = state["diagram"]["nodes"]
    at = {(q["tree"], q["gpu"]): q for q in nodes}
    assert len(at) == len(nodes) == 2 * n
    for t, pa in enumerate(parents):
        levels: dict[int, set[int]] = {}
        for v in range(n):
            levels.setdefault(_depth(pa, v), set()).add(at[t, v]["y"])
        assert all(len(ys) == 1 for ys in levels.values())  # one row per level
        rows = [min(levels[d]) for d in sorted(levels)]
        assert rows == sorted(set(rows))  # each level its own row, deeper ones lower
        assert at[t, pa.index(-1)]["y"] == rows[0]  # the root on top
        for v, up in enumerate(pa):
            if up >= 0:
                assert at[t, up]["y"] < at[t, v]["y"]
    assert max(at[0, v]["x"] for v in range(n)) < min(at[1, v]["x"] for v in range(n))
    half_w, half_h = state["diagram"]["node"][0] / 2 + 4, state["diagram"]["node"][1] / 2 + 4
    drawn = 0
    for frame in state["frames"]:
        moves = {(m[0], m[1], int(m[4] >= k)) for m in frame["moves"]}
        assert len(moves) == len(frame["arrows"])
        for a in frame["arrows"]:
            src, dst, t = a[0], a[1], nodes[a[7]]["tree"]
            assert (src, dst, t) in moves
            assert nodes[a[8]]["tree"] == t
            assert parents[t][src] == dst or parents[t][dst] == src  # an edge of tree t
            for (x, y), q in zip(_ends(a[3]), (at[t, src], at[t, dst]), strict=True):
                assert abs(x - q["x"]) <= half_w and abs(y - q["y"]) <= half_h
            drawn += 1
    assert drawn == sum(len(f["moves"]) for f in state["frames"])  # one arrow per move here


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
