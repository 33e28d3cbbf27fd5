"""The fast paths a page takes for its largest inputs give what the direct computations give, to
the bit: the tree's busiest-queue profile read from a window table (cost._tree_profile) against
counting every queue of every step; byte counts from schedules without chunk bounds; DDP's buckets
found by bisection and its sweep without bucket rows; NCCL's pick with only the winner's figures.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api, nccl
from allreduce_explainer.catalog import models
from allreduce_explainer.costs import cost, latency_model
from allreduce_explainer.errors import ParamError
from allreduce_explainer.schedules import tree
from allreduce_explainer.schedules.topology import Topology
from allreduce_explainer.simulation import simulate
from allreduce_explainer.training import ddp
from allreduce_explainer.widgets import common
from helpers import examples


def _profile_by_counting(n: int, g: int, k: int):
    """The profile as the cost model first computed it: every queue of every step counted."""
    profile: dict[tuple[int, int], int] = {}
    sends, inter_sends = [0] * n, [0] * n
    for edges in tree.phases(n):
        last = max(off for *_, off in edges)
        keys: list[tuple[list[int], list[int]]] = [([], []) for _ in range(last + 1)]
        for _, src, dst, off in edges:
            keys[off][int(src // g != dst // g)].extend((2 * src, 2 * dst + 1))
        steady = range(last, k)
        explicit = chain(range(last), range(k, last + k)) if steady else range(last + k)
        for t in chain(explicit, [last] if steady else []):
            live = range(max(0, t - k + 1), min(t, last) + 1)
            ms = tuple(
                max(Counter(chain.from_iterable(keys[o][cls] for o in live)).values(), default=0)
                for cls in (0, 1)
            )
            profile[ms] = profile.get(ms, 0) + (len(steady) if steady and t == last else 1)
        for _, src, dst, _ in edges:
            sends[src] += 1
            inter_sends[src] += src // g != dst // g
    return tuple(profile.items()), max(sends), sum(inter_sends), max(inter_sends)


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(2, 300), st.sampled_from([1, 2, 3, 4, 8, 16]), st.integers(1, 40))
def test_tree_profile_equals_counting_every_queue(n, g, k):
    g = min(g, n)
    assert cost._tree_profile(n, g, k) == _profile_by_counting(n, g, k)


def test_tree_profile_at_the_largest_layouts():
    for n, g in ((1024, 1), (1024, 8), (4096, 8), (4095, 1)):
        for k in (1, 2, tree.steady_chunks(n) + 1):
            assert cost._tree_profile(n, g, k) == _profile_by_counting(n, g, k)


def _heights_depths_by_walking(parents):
    """Depth by walking up to the root from every node; heights deepest first."""
    n = len(parents)
    depth = [0] * n
    for v in range(n):
        d, u = 0, v
        while parents[u] >= 0:
            u, d = parents[u], d + 1
        depth[v] = d
    height = [0] * n
    for v in sorted(range(n), key=lambda v: -depth[v]):
        if parents[v] >= 0:
            height[parents[v]] = max(height[parents[v]], height[v] + 1)
    return height, depth


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 2000))
def test_tree_heights_and_depths_equal_walking_up(n):
    for parents in tree.dtree_parents(n):
        assert tree.heights_depths(parents) == _heights_depths_by_walking(parents)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.sampled_from(sorted(simulate.BOUNDLESS)),
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(1, 3),
    st.floats(0, 20),
)
def test_counts_without_bounds_equal_counts_with_them(method, servers, g, k, latency_us):
    """On k·n·g elements (count_bytes: every chunk one size) the schedule without bounds gives
    every figure the schedule with them gives."""
    n = servers * g
    topo = Topology.make(n, g, 450.0, 50.0, latency_us, 2 * latency_us)
    lean = simulate.count(method, topo, k * n * g, 4, bounds=False)
    assert lean == simulate.count(method, topo, k * n * g, 4)


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(sorted(simulate.BOUNDLESS)), st.integers(2, 6), st.integers(1, 80))
def test_counts_without_bounds_are_exact_or_refused(method, n, length):
    """On any other length, leaving the bounds out is refused where chunk sizes differ; it never
    gives another figure."""
    topo = Topology.make(2 * n, n)
    try:
        lean = simulate.count(method, topo, length, 4, bounds=False)
    except ValueError as e:
        assert "one size" in str(e)
    else:
        assert lean == simulate.count(method, topo, length, 4)


def test_counts_without_bounds_at_full_servers():
    """Stage 6 counts up to 64 servers of 8; 16 of 8 checks the same shapes in a second."""
    topo = Topology.make(16 * 8, 8)
    for method in sorted(simulate.BOUNDLESS):
        assert simulate.count(method, topo, 128 * 8, 4, bounds=False) == simulate.count(
            method, topo, 128 * 8, 4
        )


def _assign_one_by_one(sizes, limits):
    """PyTorch's loop: add each tensor, close the bucket once it holds at least the limit."""
    out, current, size, which = [], [], 0, 0
    for i, s in enumerate(sizes):
        current.append(i)
        size += s
        if size >= limits[which]:
            out.append(current)
            current, size = [], 0
            which = min(which + 1, len(limits) - 1)
    return out + [current] if current else out


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.sampled_from([0, 1, 2, 7, 100, 4096, 10**6]), max_size=60),
    st.lists(st.integers(0, 5000), min_size=1, max_size=3),
)
def test_buckets_by_bisection_equal_adding_one_tensor_at_a_time(sizes, limits):
    assert ddp.assign(sizes, limits) == _assign_one_by_one(sizes, limits)


@pytest.mark.parametrize("key", models.MODELS)
@pytest.mark.parametrize("first_mb", [None, 1.0])
def test_sweep_equals_a_timeline_per_cap(key, first_mb):
    """ddp.sweep's figures are timeline()'s for each cap's buckets."""
    m, system = models.get(key), nccl.System("H100 SXM", 16, 8, 8, 400.0)
    timed, batch, flops, grad = ddp.nccl_time(system), 2, 4e14, 2
    sizes, layer_of, back, order = ddp._inputs(m, batch, flops, grad)
    rows = ddp.sweep(m, timed, batch, flops, grad, points=17, first_mb=first_mb)
    caps = ddp.sweep_caps(sum(sizes), 17)
    assert [r["bucket_mb"] for r in rows] == caps
    for r, cap in zip(rows, caps, strict=True):
        t = ddp.timeline(back, layer_of, sizes, ddp.buckets(sizes, cap, first_mb, order), timed)
        assert r["buckets"] == len(t["buckets"])
        assert r["exposed_s"] == t["exposed_s"]
        assert r["allreduce_total_s"] == t["allreduce_total_s"]


SYSTEMS = [
    nccl.System("H100 SXM", 8, 8, 8, 400.0),
    nccl.System("H100 SXM", 64, 8, 8, 400.0),
    nccl.System("A100 SXM", 2, 1, 1, 100.0),
    nccl.System("B200", 512, 8, 8, 800.0),
]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(SYSTEMS),
    st.integers(1, 1 << 44),
    st.sampled_from([None, "Ring", "Tree", "NVLS", "CollNetDirect"]),
    st.sampled_from([None, "LL", "LL128", "Simple"]),
)
def test_choose_equals_the_least_of_every_candidate(system, nbytes, algorithm, protocol):
    """nccl.choose: the first least NCCL time of predict()'s candidates that the restriction
    leaves, the same figures; a restriction nothing meets is refused with the same message."""
    pool = [
        c
        for c in nccl.predict("AllReduce", nbytes, system)
        if algorithm in (None, c.algorithm) and protocol in (None, c.protocol)
    ]
    if not pool:
        with pytest.raises(ParamError, match="cannot run"):
            nccl.choose("AllReduce", nbytes, system, algorithm, protocol)
        return
    want = min(pool, key=lambda c: c.nccl_time_us)
    assert nccl.choose("AllReduce", nbytes, system, algorithm, protocol) == want


def test_ddp_labels_each_bucket_with_nccl_s_pick():
    r = api.ddp(model="llama3-8b", gpus=16, gpus_per_node=8)
    system = nccl.System("H100 SXM", 16, 8, 8, 400.0)
    for row in r["bucket_timeline"]:
        pick = nccl.choose("AllReduce", row["bytes"], system)
        assert (row["algorithm"], row["protocol"]) == (pick.algorithm, pick.protocol)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.one_of(st.integers(-(10**30), 10**30), st.floats(-1e30, 1e30)),  # gradients lie within
    st.sampled_from(sorted(common.DIGITS)),
)
def test_value_text_once_per_value_equals_working_it_out(v, dtype):
    assert common.value_text(v, dtype) == common._value_text.__wrapped__(type(v), v, dtype)


def test_value_text_tells_equal_numbers_of_two_types_apart():
    """10**22 == 1e22 in Python; a memo keyed by the value alone would print one as the other."""
    assert common.value_text(1e22, "fp32") == "1e+22"
    assert common.value_text(10**22, "int") == "10000000000000000000000"
    assert common.value_text(True, "int") == common._value_text.__wrapped__(bool, True, "int")


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


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 3000), st.integers(1, 5))
def test_tree_steps_from_heights_equal_the_edges_last_offsets(n, k):
    edges = [e for e in tree.phases(n) if e]
    assert tree.steady_chunks(n) == max((max(o for *_, o in e) for e in edges), default=0) + 1
    if n > 1:
        assert tree.steps(n, k) == sum(max(o for *_, o in e) + k for e in edges)
