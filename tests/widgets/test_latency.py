"""Page 5's NCCL side: the curves, the pick band, the crossovers and the quoted latencies come
from the `nccl` package (a port of NCCL 2.30.7's tuning.cc), checked here against direct calls
and against NCCL's formulas worked by hand."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api, fmt, nccl
from allreduce_explainer.costs import cost, latency_model
from allreduce_explainer.costs.latency_model import SIZES
from allreduce_explainer.schedules import tree
from allreduce_explainer.widgets import latency as lat
from helpers import examples

# (GPUs, per server, the card in Gb/s as the page asks it)
SYSTEMS = [
    (64, 8, 400.0), (64, 1, 400.0), (8, 8, 400.0), (16, 8, 200.0), (1024, 8, 400.0), (6, 2, 400.0)
]  # fmt: skip


@pytest.mark.parametrize(("gpus", "per", "gbps"), SYSTEMS)
def test_band_is_nccls_choice_at_every_size(gpus, per, gbps):
    s = lat.latency({"gpus": gpus, "gpus_per_node": per, "nic_gbps": gbps})
    system = nccl.System("H100 SXM", gpus, per, per, gbps)
    assert len(s["picks"]) == len(SIZES)
    for row in s["picks"]:
        c = nccl.choose("AllReduce", row["bytes"], system)
        assert (row["algorithm"], row["protocol"]) == (c.algorithm, c.protocol), row
    band = [t for t in s["figure"]["data"] if t["name"].startswith("picks ")]
    drawn = sorted(x for t in band for x in t["x"])
    assert drawn == [r["bytes"] for r in s["picks"]][:: lat.BAND_EVERY]
    for t in band:  # each mark sits where NCCL picks the pair it is named after
        at = {r["bytes"]: f"picks {r['algorithm']} {r['protocol']}" for r in s["picks"]}
        assert {at[x] for x in t["x"]} == {t["name"]}
    assert all(t["yaxis"] == "y2" for t in band)


@pytest.mark.parametrize(("gpus", "per", "gbps"), SYSTEMS[:4])
def test_ring_and_tree_curves_are_nccls_forced_times(gpus, per, gbps):
    s = lat.latency({"gpus": gpus, "gpus_per_node": per, "nic_gbps": gbps})
    system = nccl.System("H100 SXM", gpus, per, per, gbps)
    data = {t["name"]: t for t in s["figure"]["data"]}
    for algo, name in (("Ring", "ring"), ("Tree", "tree")):
        ys = data[f"{name}, NCCL's estimate"]["y"]
        for i in range(0, len(SIZES), 17):
            n = max(1, round(SIZES[i]))
            want = nccl.choose("AllReduce", n, system, algorithm=algo).nccl_time_us * 1e-6
            assert ys[i] == pytest.approx(want, rel=1e-12)


@settings(max_examples=examples(15), deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.integers(1, 64), st.sampled_from([100.0, 200.0, 400.0]))
def test_every_nccl_crossover_is_where_ring_stops_being_slower(per, servers, gbps):
    if per * servers < 2:
        return
    s = lat.latency({"gpus": per * servers, "gpus_per_node": per, "nic_gbps": gbps})
    system = nccl.System("H100 SXM", per * servers, per, per, gbps)

    def gap(n):
        ring = nccl.choose("AllReduce", n, system, algorithm="Ring").nccl_time_us
        return ring - nccl.choose("AllReduce", n, system, algorithm="Tree").nccl_time_us

    for x in s["crossovers_nccl_bytes"]:
        n = round(x)  # bisection to a fraction of a byte: the byte before is still slower
        assert gap(n) <= 0 < gap(n - 1), x
    assert s["crossover_nccl_bytes"] == (s["crossovers_nccl_bytes"] or [None])[0]


def test_nccl_latencies_by_hand():
    """tuning.cc:384-435 worked out: Simple base 8.4 us; hops NVLink 3.4 (ring) / 4.0 (tree),
    network 14; the tree counts floor(log2 servers) hops."""
    assert lat.nccl_latency_us("Ring", 64, 1) == pytest.approx(8.4 + 126 * 14.0)
    assert lat.nccl_latency_us("Tree", 64, 1) == pytest.approx(8.4 + 2 * 6 * 14.0)
    assert lat.nccl_latency_us("Tree", 100, 1) == pytest.approx(8.4 + 2 * 6 * 14.0)  # log2i
    assert lat.nccl_latency_us("Ring", 64, 8) == pytest.approx(8.4 + 112 * 3.4 + 14 * 14.0)
    assert lat.nccl_latency_us("Tree", 64, 8) == pytest.approx(8.4 + 2 * (7 * 4.0 + 3 * 14.0))
    assert lat.nccl_latency_us("Tree", 8, 8) == pytest.approx(8.4 + 2 * 7 * 4.0)  # a chain


def test_facts_follow_the_nccl_model_and_the_errata():
    f = lat.facts()
    # NCCL's tree on 64 GPUs of their own: base 8.4 us + 2 x 6 network hops of 14 us, in alphas
    assert f["nccl_tree_flat_alphas"] == f"{(8.4 + 2 * 6 * 14.0) / 14.0:.3g}" == "12.6"
    system = lat.nccl_system(64, 8, card_Gbps=400)
    big = nccl.choose("AllReduce", 8 << 30, system)
    assert f["lat_nccl_pick_8gib"] == f"{big.algorithm} {big.protocol}"
    ring = nccl.choose("AllReduce", 8 << 30, system, algorithm="Ring").nccl_time_us
    assert f["lat_nccl_ring_8gib"] == lat.fmt.seconds(ring * 1e-6)
    # with the tree's 0.92 and size correction the crossover is far below 2.55 GB;
    # with the plain tree pattern's 0.85 (tuning.cc:336, one GPU per server) it is the only one
    flat = latency_model.nccl_crossovers(lat.nccl_system(64, 1, card_Gbps=400))
    assert len(flat) == 1
    old = replace(lat.nccl_system(64, 1, card_Gbps=400), nccl_version="2.30.7")
    assert 5e7 < latency_model.nccl_crossovers(old)[0] < 1e9
    assert f["lat_nccl_cross_flat"] == lat.fmt.nbytes(flat[0])
    assert f["lat_nccl_tree_cut"] == "15 %"


def test_one_latency_change_sweeps_the_sizes_quickly_enough():
    """Not timed (a shared machine): the NCCL side makes one table lookup per size and pair."""
    calls = []
    real = nccl.model.terms
    try:
        nccl.model.terms = lambda *a: calls.append(1) or real(*a)
        lat.latency({"latency_us": 3})
    finally:
        nccl.model.terms = real
    pairs = len(nccl.tables(lat.nccl_system(64, 8, card_Gbps=400)))
    assert len(calls) < pairs * (len(SIZES) + 60)


def test_latency_page_with_nccl_s_curves_cached_equals_working_them_out():
    """Stage 5 keeps NCCL's curves per cluster; a change of the teaching α reuses them."""

    lat.latency({"gpus": 96, "latency_us": 3.0})  # the curves of 96 GPUs, cached
    cached = lat.latency({"gpus": 96, "latency_us": 40.0})
    lat._nccl_curves.cache_clear()
    assert cached == lat.latency({"gpus": 96, "latency_us": 40.0})
    system = lat.nccl_system(96, 8, card_Gbps=400)
    times = nccl.best_by_algorithm(system, latency_model.whole(latency_model.SIZES))
    assert lat._nccl_curves(system) == (times, latency_model.nccl_crossovers(system))


def test_headline_is_where_nccls_choice_changes_algorithm_on_the_default_cluster():
    """Page 5 leads with "its tree below about X, NVLSTree up to about Y, its ring above": X and
    Y are where nccl.choose starts to pick NVLSTree, then Ring: it picks it at the printed size's
    upper half-step, and not at its lower one."""
    system = nccl.System("H100 SXM", 64, 8, 8, 400.0)
    algos = [nccl.choose("AllReduce", n, system).algorithm for n in latency_model.whole(SIZES)]
    assert algos[0] == "Tree" and algos[-1] == "Ring"
    assert algos.index("NVLSTree") < algos.index("Ring")
    assert set(algos[algos.index("Ring") :]) == {"Ring"}  # rings all the way up
    f = lat.facts()
    for key, before, then in (("lat_tree_upto", "Tree", "NVLSTree"),
                              ("lat_nvlstree_upto", "NVLSTree", "Ring")):  # fmt: skip
        lo, hi = _half_steps(f[key])
        assert nccl.choose("AllReduce", hi, system).algorithm == then
        assert nccl.choose("AllReduce", lo, system).algorithm == before


def test_tree_counts_told_on_page_5_are_one_story():
    """8 steps on the stepper's 8 GPUs (2 chunks), 12 levels (2 floor(log2 n)) on 64, 22 alpha in
    the whiteboard model (two trees' messages queued), NCCL's 12.6 alpha: each a fact."""
    f = lat.facts()
    assert f["tree_stepper_steps"] == str(2 * 3 + 2 * (2 - 1)) == "8"  # 3 levels, one more chunk
    assert f["tree_stepper_levels"] == "3" and f["tree_stepper_ring_steps"] == str(2 * 7)
    assert f["lat_tree_steps"] == str(2 * math.floor(math.log2(64))) == "12"
    assert f["lat_ring_steps"] == str(2 * 63)
    topo = latency_model.flat(64, 50.0, 14.0)
    small = lat.cost.tree_time_fast(topo, 8)  # 8 bytes: the alphas are all of it
    assert f["lat_tree_alphas"] == fmt.sig(small / 14e-6, 3) == "22"


HOLDS = re.compile(r"^(Every GPU|Tree [AB]'s root, GPU (\d+),) now holds chunk (\d+)'s sum\.$")
LEVEL = re.compile(r"^Tree ([AB]), chunk (\d+), level (\d+) → (\d+): (.+)\.$")


@pytest.mark.parametrize(("n", "k"), [(8, 2), (2, 1), (5, 3), (16, 4), (7, 1)])
def test_narration_is_one_line_per_tree_chunk_and_level_naming_every_message(n, k):
    length = max(8, 2 * k)
    s = lat.tree_allreduce({"gpus": n, "chunks": k, "length": length})
    trace = api.simulate(algorithm="tree", gpus=n, length=length, chunks=k, trace=True)["trace"]
    parents = tree.dtree_parents(n)
    depth = [tree.heights_depths(p)[1] for p in parents]
    for frame, step in zip(s["frames"][1:], trace, strict=True):
        lines = [m for m in map(LEVEL.match, frame["narration"]) if m]
        told = set()
        for m in lines:
            t, lo, hi = "AB".index(m[1]), int(m[3]), int(m[4])
            for group in m[5].split(" and "):
                left, right = (side.split(", ") for side in group.split(" → "))
                up = hi < lo
                for a in left:
                    for b in right:
                        src, dst = int(a), int(b)
                        parent, child = (dst, src) if up else (src, dst)
                        assert parents[t][child] == parent  # each edge is the tree's own
                        assert depth[t][src] == lo and depth[t][dst] == hi
                        told.add((src, dst))
        assert told == {(m["src"], m["dst"]) for m in step["messages"]}  # every message, once
        assert len(lines) <= 2 * k  # one line per tree and chunk at most
        for line in frame["narration"]:  # what a chunk's arrival says is so in the grid
            if m := HOLDS.match(line):
                a, b = s["chunks"][int(m[3])]
                gpus = range(n) if m[1] == "Every GPU" else [int(m[2])]
                assert all(frame["buffers"][g][a:b] == s["target"][a:b] for g in gpus), line
    said = [m[1] for f in s["frames"] for m in map(HOLDS.match, f["narration"]) if m]
    assert said.count("Every GPU") == 2 * k and len(said) == 4 * k  # each chunk: root, then all


def test_narration_of_the_default_stepper_is_short():
    """1,510 words over 8 steps when it told every message; one line per level: under half."""
    s = lat.tree_allreduce()
    words = sum(len(line.split()) for f in s["frames"] for line in f["narration"])
    assert words < 1510 / 2, words


@pytest.mark.parametrize(("gpus", "per", "alpha"), [(64, 8, 14.0), (16, 2, 2.0), (128, 8, 40.0)])
def test_each_model_has_a_chart_of_its_own_titled_with_its_cluster(gpus, per, alpha):
    """NCCL's model (servers of `per`) and the whiteboard model (every GPU its own server) are
    two clusters: one chart each, each title naming its cluster; the whiteboard curves are
    cost.py's closed forms on the flat network, worked here from the formula's pieces."""
    s = lat.latency({"gpus": gpus, "gpus_per_node": per, "latency_us": alpha})
    nccl_fig, board = s["figure"], s["figures"]["whiteboard"]["figure"]
    assert f"{gpus // per} servers of {per} H100" in nccl_fig["layout"]["title"]["text"]
    assert f"{gpus} GPUs, one per server, α = {alpha:g} µs" in board["layout"]["title"]["text"]
    assert not any("whiteboard" in t["name"] or "teaching" in t["name"] for t in nccl_fig["data"])
    assert all(t.get("visible", True) is True for t in nccl_fig["data"] + board["data"])
    topo = latency_model.flat(gpus, 50.0, alpha)
    curves = {t["name"]: t["y"] for t in board["data"]}
    for i in range(0, len(SIZES), 23):
        size = SIZES[i]  # the ring: 2(n - 1) steps of alpha plus 2(n - 1)/n of S over B
        ring = 2 * (gpus - 1) * alpha * 1e-6 + 2 * (gpus - 1) / gpus * size / 50e9
        assert curves["ring, whiteboard model"][i] == pytest.approx(ring, rel=1e-9)
        assert curves["tree, whiteboard model"][i] == pytest.approx(cost.tree_time_fast(topo, size))
    marker = next(t for t in board["data"] if t["name"].startswith("teaching crossover"))
    assert marker["x"][0] == s["crossover_bytes"]


@pytest.mark.parametrize(("gpus", "per", "gbps"), SYSTEMS)
def test_the_band_names_where_nccl_starts_each_pick_to_the_byte(gpus, per, gbps):
    """The band's "Tree LL128 from 174 kB": NCCL (nccl.choose, no algorithm forced) picks it
    from the printed size's upper half-step and another below its lower one, not only on the
    chart's grid of sizes (which once said 185 kB, while `nccl --bytes 180K` picked it)."""
    s = lat.latency({"gpus": gpus, "gpus_per_node": per, "nic_gbps": gbps * 8})
    system = nccl.System("H100 SXM", gpus, per, per, gbps * 8)

    def pick(n: int) -> str:
        c = nccl.choose("AllReduce", n, system)
        return f"{c.algorithm} {c.protocol}"

    parts = s["readouts"]["band"].split("; ")
    for part in parts:
        name, _, size = part.partition(" from ")
        lo, hi = _half_steps(size)
        assert pick(hi) == name, part
        if part != parts[0]:
            assert pick(lo) != name, part


def _half_steps(size: str) -> tuple[int, int]:
    """The whole bytes half a step of the last printed digit below and above "174 kB"."""
    number, unit = size.split()
    scale = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[unit]
    places = len(number.split(".")[1]) if "." in number else 0
    half = 0.5 * 10.0**-places * scale
    return math.floor(float(number) * scale - half), math.ceil(float(number) * scale + half)
