"""Stage 5: the tree's steps grow with log2 n and its results are exact; the closed forms agree
with the simulations; the crossover the page reports is where the two curves meet."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api, bridge, nccl
from allreduce_explainer.costs import cost
from allreduce_explainer.costs import latency_model as lm
from allreduce_explainer.errors import ParamError
from allreduce_explainer.schedules import tree
from allreduce_explainer.schedules.topology import Topology
from allreduce_explainer.widgets import latency as lat
from helpers import examples


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(2, 4096))
def test_tree_steps_grow_with_log2_n(n):
    steps = tree.steps(n)
    log = math.log2(n)
    assert 2 * math.floor(log) <= steps <= 2 * (math.ceil(log) + 1)
    assert tree.steps(n, 3) == steps + 2 * 2  # each extra chunk adds one step per phase


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(2, 40), st.integers(1, 4), st.integers(0, 60), st.integers(0, 10**6))
def test_tree_results_are_exact_on_every_gpu(n, k, extra, seed):
    length = 2 * k + extra
    r = api.simulate(algorithm="tree", gpus=n, length=length, chunks=k, seed=seed)
    want = np.sum(np.array(r["inputs"], dtype=np.int64), axis=0).tolist()
    assert all(res == want for res in r["results"])
    assert r["matches_target"] and r["identical_on_all_gpus"]
    assert r["steps"] == tree.steps(n, k)


@settings(max_examples=examples(40), deadline=None)
@given(
    st.integers(2, 48),
    st.integers(1, 6),
    st.floats(0, 50),
    st.floats(1, 500),
)
def test_ring_closed_form_agrees_with_the_simulation(n, per_chunk, alpha, gbps):
    length = n * per_chunk
    links = {"intra_bw": gbps, "inter_bw": gbps, "intra_latency": alpha, "inter_latency": alpha}
    r = api.simulate(algorithm="ring", gpus=n, gpus_per_node=1, length=length, **links)
    topo = lm.flat(n, gbps, alpha)
    assert r["time_s"] == pytest.approx(lm.ring_time(topo, length * 4), rel=1e-9)
    assert r["steps"] == 2 * (n - 1)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(2, 40), st.integers(1, 8), st.integers(1, 4), st.floats(0, 50))
def test_tree_closed_form_agrees_with_the_simulation(n, k, per_piece, alpha):
    length = 2 * k * per_piece  # every chunk the same size, as the closed form assumes
    links = {"intra_bw": 50, "inter_bw": 50, "intra_latency": alpha, "inter_latency": alpha}
    r = api.simulate(algorithm="tree", gpus=n, gpus_per_node=1, length=length, chunks=k, **links)
    c = cost.cost("tree", lm.flat(n, 50, alpha), length * 4, chunks=k)
    assert r["time_s"] == pytest.approx(c["time_s"], rel=1e-9)
    assert r["steps"] == c["steps"]


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(2, 300), st.floats(8, 2**33), st.floats(0, 100), st.floats(0.1, 1000))
def test_fast_tree_time_equals_the_cost_model(n, s, alpha, gbps):
    topo = lm.flat(n, gbps, alpha)
    exact = cost.cost("tree", topo, s)["time_s"]
    assert cost.tree_time_fast(topo, s) == pytest.approx(exact, rel=1e-9)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.integers(1, 300), st.sampled_from([1, 2, 4, 8]), st.floats(8, 2**33),
    st.floats(0, 100), st.floats(0.1, 1000), st.floats(0.1, 1000),
)  # fmt: skip
def test_ring_seconds_is_the_ring_s_time_in_the_cost_model(n, g, s, alpha, intra, inter):
    """The time-only ring the curves use is cost("ring")'s time to the bit, on one server,
    one GPU per server and mixed servers, and by the formula in the docstring of cost.py."""
    topo = Topology.make(n * g, g, intra, inter, alpha, 2 * alpha)
    assert cost.ring_seconds(topo, s) == cost.cost("ring", topo, s)["time_s"]
    c = s / (n * g)
    links = [topo.intra] if n == 1 else [topo.inter] if g == 1 else [topo.intra, topo.inter]
    step = max(link.latency_us * 1e-6 + c / (link.GBps * 1e9) for link in links)
    assert cost.ring_seconds(topo, s) == pytest.approx(2 * (n * g - 1) * step, rel=1e-12)


def _straddles(topo, x, tree_fn):
    """x is where ring - tree goes from > 0 to <= 0 (that it is the first such size is
    test_whiteboard_crossover_is_the_first_of_every_piece's)."""
    assert (
        lm.ring_time(topo, x) - tree_fn(topo, x)
        <= 0
        < (lm.ring_time(topo, x * (1 - 1e-9)) - tree_fn(topo, x * (1 - 1e-9)))
    )


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(4, 256), st.floats(0.5, 100), st.floats(1, 400))
def test_reported_crossover_is_where_the_curves_meet(n, alpha, gbps):
    # the page asks the card in Gb/s; the whiteboard model's B is its GB/s, an eighth
    s = lat.latency({"gpus": n, "gpus_per_node": 1, "latency_us": alpha, "nic_gbps": gbps * 8})
    x = s["crossover_bytes"]
    topo = lm.flat(n, gbps, alpha)
    if x is not None:
        _straddles(topo, x, cost.tree_time_fast)
        board = s["figures"]["whiteboard"]["figure"]  # the whiteboard model's own chart
        marker = next(t for t in board["data"] if t["name"].startswith("teaching crossover"))
        assert marker["x"] == [x, x]


def _nccl_gap(system, sizes: list[int]) -> list[float]:
    t = nccl.best_by_algorithm(system, sizes).time_us
    return [r - tr for r, tr in zip(t["Ring"], t["Tree"], strict=True)]


# (GPUs, per server, the card in Gb/s)
CLUSTERS = [(32, 2, 400.0), (64, 8, 400.0), (16, 8, 400.0), (128, 8, 400.0), (96, 4, 200.0),
            (8, 1, 100.0)]  # fmt: skip


@pytest.mark.parametrize(("gpus", "per", "card"), CLUSTERS)
def test_nccl_crossovers_are_every_crossing_to_the_byte(gpus, per, card):
    """Each crossover is a whole size at which the ring becomes no slower than the tree, one
    byte below which it was slower; and a scan of 256 sizes an octave finds no crossing the
    list lacks (32 GPUs, 2 a server: a crossing at 8.1 MB that 8 sizes an octave missed)."""
    system = lat.nccl_system(gpus, per, card_Gbps=card)
    found = lm.nccl_crossovers(system)
    for x in found:
        below, at = _nccl_gap(system, [int(x) - 1, int(x)])
        assert below > 0 >= at, x
    sizes = lm.whole([8 * 2 ** (i / 256) for i in range(256 * 30 + 1)])
    d = _nccl_gap(system, sizes)
    scanned = [(sizes[i - 1], sizes[i]) for i in range(1, len(sizes)) if d[i - 1] > 0 >= d[i]]
    assert len(scanned) <= len(found)
    for a, b in scanned:
        assert any(a < x <= b for x in found), (a, b, found)


def test_more_latency_moves_the_teaching_crossover_to_larger_messages():
    xs = [lat.latency({"latency_us": a})["crossover_bytes"] for a in (1, 5, 14, 50)]
    assert xs == sorted(xs) and len(set(xs)) == 4
    assert lat.latency({"latency_us": 0})["crossover_bytes"] is None  # no latency: ring wins
    # NCCL's model has its own latencies: alpha is the teaching model's alone
    xn = {lat.latency({"latency_us": a})["crossover_nccl_bytes"] for a in (1, 14, 50)}
    assert len(xn) == 1


def test_steps_chart_counts_and_marker():
    s = lat.steps({"gpus": 1024})
    ring, tree = s["figure"]["data"][0], s["figure"]["data"][1]
    assert ring["y"][ring["x"].index(1024)] == 2046
    assert tree["y"][tree["x"].index(1024)] == 20 and max(tree["x"]) == 4096
    assert s["figure"]["data"][-1]["x"] == [1024, 1024]
    assert s["figure"]["layout"] == lat.steps({"gpus": 3})["figure"]["layout"]


@pytest.mark.parametrize(("n", "k"), [(8, 2), (2, 1), (5, 3), (16, 4), (7, 1)])
def test_tree_stepper_ends_with_exact_match_and_narrates_the_trees(n, k):
    s = lat.tree_allreduce({"gpus": n, "chunks": k, "length": max(8, 2 * k)})
    assert len(s["frames"]) == tree.steps(n, k) + 1
    assert s["check"]["all_match"] and "Exact match" in s["frames"][-1]["narration"][-1]
    text = " ".join(line for f in s["frames"] for line in f["narration"])
    assert "Tree A" in text and "parent" in text and "child" in text
    if n > 2:
        assert "Tree B" in text and "level" in text
    assert all(all(row) for row in s["frames"][-1]["complete"])


def test_tree_stepper_with_floats_is_identical_on_every_gpu():
    s = lat.tree_allreduce({"gpus": 9, "dtype": "bf16", "length": 12, "seed": 3})
    assert s["check"]["identical"]
    last = s["frames"][-1]["buffers"]
    assert all(b == last[0] for b in last)


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("latency", {"gpus": 1}, "gpus"),
        ("latency", {"gpus": 2048}, "gpus"),
        ("latency", {"latency_us": -1}, "latency_us"),
        ("latency", {"latency_us": 1e9}, "latency_us"),
        ("latency", {"nic_gbps": 0}, "nic_gbps"),
        ("latency", {"nic_gbps": float("nan")}, "nic_gbps"),
        ("latency", {"nic_gbps": 4000}, "nic_gbps"),
        ("latency", {"gpus": 12}, "gpus"),
        ("latency", {"gpus_per_node": 9}, "gpus_per_node"),
        ("steps", {"gpus": 5000}, "gpus"),
        ("tree_allreduce", {"gpus": 17}, "gpus"),
        ("tree_allreduce", {"chunks": 5}, "chunks"),
        ("tree_allreduce", {"chunks": 4, "length": 7}, "length"),
        ("tree_allreduce", {"dtype": "fp64"}, "dtype"),
        ("tree_allreduce", {"gpus": 2, "values": [[1, 2], ["a", 2]]}, "values"),
    ],
)
def test_bad_parameters_name_their_field(name, params, field):
    out = json.loads(bridge.call(name, json.dumps(params)))
    assert out["ok"] is False and out["error"]["field"] == field, out


def test_facts_quote_the_default_crossover():
    f = lat.facts()
    r = lat.latency()["readouts"]
    assert f["lat_cross"] == r["crossover"] and f["lat_nccl_cross"] == r["crossover_nccl"]
    assert f["steps_1024_tree"] == "20" and f["nccl_tree_8x8"] == "148.4 µs"


def test_a_latency_between_servers_is_refused_without_servers():
    """A latency between servers with every GPU in one server would change nothing: refused,
    naming it (notebook 05 once printed the ring ahead for a small message that way). Given
    one GPU per server, it applies: the ring pays 2(n - 1) of them in a row, the tree about
    2·log2 n, so the tree wins at a small size, page 5's lesson."""
    with pytest.raises(ParamError) as e:
        api.estimate(algorithm="ring", gpus=64, bytes=1e3, inter_latency=5)
    assert e.value.field == "inter_latency" and "one server" in e.value.message
    ring = api.estimate(algorithm="ring", gpus=64, bytes=1e3, gpus_per_node=1, inter_latency=5)[
        "time_s"
    ]
    tree = api.estimate(algorithm="tree", gpus=64, bytes=1e3, gpus_per_node=1, inter_latency=5)[
        "time_s"
    ]
    assert ring >= 2 * 63 * 5e-6 and tree < ring / 3
    assert (
        api.estimate(algorithm="ring", gpus=64, bytes=1e3, inter_latency=0)["time_s"] > 0
    )  # the default: allowed


def _first_crossing_walked(topo: Topology) -> float | None:
    """The oracle: every piece of sizes with one count of tree chunks (1 MiB each), from 8 B
    to 8 GiB, its two ends timed by cost.ring_seconds and cost.tree_time_fast themselves (the
    gap is affine between them), the crossing inside a piece found by bisection."""
    gap = lambda s: cost.ring_seconds(topo, s) - cost.tree_time_fast(topo, s)  # noqa: E731
    piece, lo, hi = 2 * tree.COST_CHUNK_BYTES, 8.0, 8.0 * 2**30
    a, k, positive = lo, 1, gap(lo) > 0
    while a < hi:
        b = min(piece * k, hi)
        start = a if k == 1 else math.nextafter(a, math.inf)
        g0, g1 = gap(start), gap(b)
        if positive and g0 <= 0:
            return a
        if g0 > 0 >= g1:
            x, y = start, b
            for _ in range(200):
                x, y = ((x + y) / 2, y) if gap((x + y) / 2) > 0 else (x, (x + y) / 2)
            return y
        a, k, positive = b, k + 1, g1 > 0
    return None


@pytest.mark.parametrize("n", [2, 3, 4, 8, 32, 96, 128, 256, 1024])
@pytest.mark.parametrize(("alpha", "gbps"), [(0.5, 400.0), (2.0, 50.0), (5.0, 12.5), (14.0, 50.0),
                                             (50.0, 1.0), (200.0, 12.5)])  # fmt: skip
def test_whiteboard_crossover_is_the_first_of_every_piece(n, alpha, gbps):
    """The page's whiteboard crossover is the first size at which the ring stops being slower,
    found exactly (8 sizes an octave missed the first crossing at 3.0 MB on 32 GPUs at 0.5 µs
    and 400 GB/s, and at 12.4 MB on 128 GPUs at 5 µs and 12.5 GB/s)."""
    topo = lm.flat(n, gbps, alpha)
    want, got = _first_crossing_walked(topo), lm.crossover(topo)
    assert (got is None) == (want is None)
    if want is not None:
        assert got == pytest.approx(want, rel=1e-9, abs=1.0)
