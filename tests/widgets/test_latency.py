"""Stage 5's NCCL side: the curves, the pick band, the crossovers and the quoted latencies come
from the `nccl` package (a port of NCCL 2.30.7's tuning.cc), checked here against direct calls
and against NCCL's formulas worked by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import nccl
from allreduce_explainer.costs import latency_model
from allreduce_explainer.costs.latency_model import SIZES
from allreduce_explainer.widgets import latency as lat
from helpers import examples

SYSTEMS = [(64, 8, 50.0), (64, 1, 50.0), (8, 8, 50.0), (16, 8, 25.0), (1024, 8, 50.0), (6, 2, 50.0)]


@pytest.mark.parametrize(("gpus", "per", "gbps"), SYSTEMS)
def test_band_is_nccls_choice_at_every_size(gpus, per, gbps):
    s = lat.latency({"gpus": gpus, "gpus_per_node": per, "bandwidth_gbps": gbps})
    system = nccl.System("H100 SXM", gpus, per, per, gbps * 8)
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
    s = lat.latency({"gpus": gpus, "gpus_per_node": per, "bandwidth_gbps": gbps})
    system = nccl.System("H100 SXM", gpus, per, per, gbps * 8)
    data = {t["name"]: t for t in s["figure"]["data"]}
    for algo, name in (("Ring", "ring, NCCL"), ("Tree", "tree, NCCL")):
        ys = data[name]["y"]
        for i in range(0, len(SIZES), 17):
            n = max(1, round(SIZES[i]))
            want = nccl.choose("AllReduce", n, system, algorithm=algo).nccl_time_us * 1e-6
            assert ys[i] == pytest.approx(want, rel=1e-12)


@settings(max_examples=examples(15), deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.integers(1, 64), st.sampled_from([12.5, 25.0, 50.0]))
def test_every_nccl_crossover_is_where_ring_stops_being_slower(per, servers, gbps):
    if per * servers < 2:
        return
    s = lat.latency({"gpus": per * servers, "gpus_per_node": per, "bandwidth_gbps": gbps})
    system = nccl.System("H100 SXM", per * servers, per, per, gbps * 8)

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
    # correctness review erratum 19: NCCL's tree latency is 0.57 of the teaching model's, not half
    assert f["nccl_tree_flat_share"] == "0.57"
    system = lat.nccl_system(64, 8, 50.0)
    big = nccl.choose("AllReduce", 8 << 30, system)
    assert f["lat_nccl_pick_8gib"] == f"{big.algorithm} {big.protocol}"
    ring = nccl.choose("AllReduce", 8 << 30, system, algorithm="Ring").nccl_time_us
    assert f["lat_nccl_ring_8gib"] == lat.fmt.seconds(ring * 1e-6)
    # erratum 2: with the tree's 0.92 and size correction the crossover is far below 2.55 GB
    flat = latency_model.nccl_crossovers(lat.nccl_system(64, 1, 50.0))
    assert 5e7 < flat[0] < flat[-1] < 1e9


def test_one_latency_change_sweeps_the_sizes_quickly_enough():
    """Not timed (a shared machine): the NCCL side makes one table lookup per size and pair."""
    calls = []
    real = nccl.model.terms
    try:
        nccl.model.terms = lambda *a: calls.append(1) or real(*a)
        lat.latency({"latency_us": 3})
    finally:
        nccl.model.terms = real
    pairs = len(nccl.tables(lat.nccl_system(64, 8, 50.0)))
    assert len(calls) < pairs * (len(SIZES) + 60)


def test_latency_page_with_nccl_s_curves_cached_equals_working_them_out():
    """Stage 5 keeps NCCL's curves per cluster; a change of the teaching α reuses them."""
    from allreduce_explainer.widgets import latency as lat

    lat.latency({"gpus": 96, "latency_us": 3.0})  # the curves of 96 GPUs, cached
    cached = lat.latency({"gpus": 96, "latency_us": 40.0})
    lat._nccl_curves.cache_clear()
    assert cached == lat.latency({"gpus": 96, "latency_us": 40.0})
    system = lat.nccl_system(96, 8, 50.0)
    times = nccl.best_by_algorithm(system, latency_model.whole(latency_model.SIZES))
    assert lat._nccl_curves(system) == (times, latency_model.nccl_crossovers(system, times))
