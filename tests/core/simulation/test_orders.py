"""The orders of addition (simulation/orders.py) against oracles written here: numpy and
ml_dtypes sums in each stated order, NCCL's formulas re-derived from the source, and the stage-2
message-by-message simulation where both describe the same run."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api, dtypes
from allreduce_explainer.schedules.topology import Topology
from allreduce_explainer.schedules.tree import dtree_parents
from allreduce_explainer.simulation import orders, simulate

NP = {"fp32": np.float32, "bf16": ml_dtypes.bfloat16, "fp16": np.float16}
BITS = {"fp32": np.uint32, "bf16": np.uint16, "fp16": np.uint16}


def np_fold(values, name: str) -> float:
    """Left to right in the type (numpy adds two of them and rounds once)."""
    t = NP[name]
    acc = t(values[0])
    for v in values[1:]:
        acc = t(acc + t(v))
    return float(acc)


def column_inputs(draw, name: str, n: int, length: int) -> list[list[float]]:
    dt = dtypes.FLOATS[name]
    big = 2.0**12 if name == "fp16" else 2.0**100
    el = st.floats(-big, big, allow_nan=False, allow_infinity=False) | st.sampled_from(
        [1.0, -1.0, 1e-3]
    )
    rows = draw(st.lists(st.lists(el, min_size=length, max_size=length), min_size=n, max_size=n))
    return [[dt.round(x) for x in row] for row in rows]


@st.composite
def cases(draw, max_gpus=9, max_length=40):
    name = draw(st.sampled_from(sorted(NP)))
    n = draw(st.integers(2, max_gpus))
    length = draw(st.integers(1, max_length))
    return name, column_inputs(draw, name, n, length)


def small_ring_order(n: int, length: int, itemsize: int) -> list[list[int]]:
    """NCCL's ring for a message of one channel and one loop (all_reduce.h:38-64): chunks of
    alignUp(divUp(count, n), 16 / size); chunk c is sent first by rank c + 1, ends at rank c."""
    align = 16 // itemsize
    per_rank = -(-length // n)
    chunk = -(-per_rank // align) * align
    return [[(j // chunk + 1 + k) % n for k in range(n)] for j in range(length)]


def plan(name: str, n: int, length: int, channels=1, protocol="LL"):
    return orders.make_plan(length, dtypes.FLOATS[name].itemsize, n, "Ring", protocol, channels)


@settings(deadline=None)
@given(cases())
def test_serial_and_ring_against_numpy_in_nccls_order(case):
    name, inputs = case
    dt, n, length = dtypes.FLOATS[name], len(inputs), len(inputs[0])
    ring = orders.ring(inputs, dt, plan(name, n, length))["buffers"][0]
    serial = orders.serial(inputs, dt)["buffers"][0]
    for j, order in enumerate(small_ring_order(n, length, dt.itemsize)):
        col = [row[j] for row in inputs]
        assert serial[j] == pytest.approx(np_fold(col, name), nan_ok=True, rel=0, abs=0)
        assert ring[j] == pytest.approx(
            np_fold([col[r] for r in order], name), nan_ok=True, rel=0, abs=0
        )


def np_tree(col, parents, child_key, name):
    """A node's own value plus each child's partial sum, children in NCCL's tree.down order."""
    t = NP[name]
    kids = {
        v: sorted((c for c, p in enumerate(parents) if p == v), key=child_key)
        for v in range(len(parents))
    }

    def up(v):
        acc = t(col[v])
        for c in kids[v]:
            acc = t(acc + up(c))
        return acc

    return float(up(parents.index(-1)))


@settings(deadline=None)
@given(cases(max_gpus=17, max_length=4))
def test_both_trees_against_numpy(case):
    """Tree A's down list is (rank - low, rank + low): ascending; the mirror's is descending;
    the shifted tree's ascends in the shifted ranks (trees.cc:55-57, 95-110)."""
    name, inputs = case
    dt, n = dtypes.FLOATS[name], len(inputs)
    a, b = dtree_parents(n)
    key_b = (lambda c: -c) if n % 2 == 0 else (lambda c: (c - 1) % n)
    downs, roots = orders.tree_children(n), orders.tree_roots(n)
    for j in range(len(inputs[0])):
        col = [row[j] for row in inputs]
        for t, (parents, key) in enumerate(((a, lambda c: c), (b, key_b))):
            got = orders.tree_sum(col, downs[t], roots[t], dt)
            want = np_tree(col, parents, key, name)
            assert got == want or (np.isnan(got) and np.isnan(want))


@settings(deadline=None)
@given(cases())
def test_nvls_accumulates_in_fp32_and_rounds_once(case):
    name, inputs = case
    dt = dtypes.FLOATS[name]
    got = orders.nvls(inputs, dt)["buffers"][0]
    for j, x in enumerate(got):
        want = float(NP[name](np_fold([row[j] for row in inputs], "fp32")))
        assert x == want or (np.isnan(x) and np.isnan(want))


def neighbours(x: float, name: str) -> tuple[float, float]:
    """The type's numbers just below and above x, by stepping the bit pattern."""
    t, u = NP[name], BITS[name]
    bits = np.array([t(x)]).view(u)[0]
    step = 1 if x > 0 else -1
    up = np.array([bits + u(1) if step > 0 else bits - u(1)], dtype=u).view(t)[0]
    down = np.array([bits - u(1) if step > 0 else bits + u(1)], dtype=u).view(t)[0]
    return float(down), float(up)


@settings(deadline=None)
@given(cases(max_length=6))
def test_exact_is_the_nearest_number_of_the_type(case):
    name, inputs = case
    dt = dtypes.FLOATS[name]
    for j, x in enumerate(orders.exact(inputs, dt)):
        q = sum((Fraction(row[j]) for row in inputs), Fraction(0))
        if x == 0 or not np.isfinite(x):
            continue
        for y in neighbours(x, name):
            if np.isfinite(y):
                assert abs(Fraction(x) - q) <= abs(Fraction(y) - q)


@pytest.mark.parametrize("name", sorted(NP))
def test_the_cancellation_probe_per_method(name):
    """1e8, 1, -1e8, 1 on four GPUs of one server (1e4 for FP16): the exact sum is 2; the
    serial sum loses the first 1, the ring (from rank 1: 1 - 1e8 + 1 + 1e8) loses both, the
    tree, the chain 0 <- 1 <- 2 <- 3 inside the server (1e8 + (1 + (-1e8 + 1))), loses both,
    NVLS in FP32 loses the first; each is the numpy sum in that order."""
    big = 1e4 if name == "fp16" else 1e8
    r = api.orders(gpus=4, dtype=name, values=[[big], [1], [-big], [1]])
    col = [float(NP[name](v)) for v in (big, 1, -big, 1)]
    assert r["exact"] == [2.0]
    want = {
        "serial": np_fold(col, name),
        "ring": np_fold([col[1], col[2], col[3], col[0]], name),
        "tree": np_fold([col[3], col[2], col[1], col[0]], name),
        "nvls": float(NP[name](np_fold(col, "fp32"))),
    }
    got = {k: m["result"][0] for k, m in r["methods"].items()}
    assert got == want
    if name == "fp32":
        assert got == {"serial": 1.0, "ring": 0.0, "tree": 0.0, "nvls": 1.0}
    assert all(m["ranks_agree"] for m in r["methods"].values())


def test_not_every_order_loses_the_ones():
    """(1e8 + -1e8) + (1 + 1) is exactly 2: an order that cancels the big terms first keeps
    both 1s (the page must not say every order loses them)."""
    col = [1e8, -1e8, 1.0, 1.0]
    assert orders.fold(col, dtypes.FP32) == 2.0 == np_fold(col, "fp32")


def test_ranks_agree_is_a_check_that_can_fail():
    """Each GPU's buffer is its own sum: if every GPU added its own value first (as a naive
    all-to-all then local sum would), the probe's GPUs disagree, and summary says so."""
    dt = dtypes.FP32
    inputs = [[1e8], [1.0], [-1e8], [1.0]]
    own_first = [[(r + k) % 4 for k in range(4)] for r in range(4)]
    buffers = orders.serial(inputs, dt, own_first)["buffers"]
    want = [np_fold([inputs[o][0] for o in order], "fp32") for order in own_first]
    assert [b[0] for b in buffers] == want == [1.0, 0.0, 1.0, 0.0]
    target = orders.exact(inputs, dt)
    assert orders.summary(buffers, target, dt)["ranks_agree"] is False
    assert orders.summary(orders.serial(inputs, dt)["buffers"], target, dt)["ranks_agree"]


@settings(deadline=None)
@given(cases(max_gpus=8, max_length=48), st.data())
def test_a_ring_per_channel(case, data):
    """A ring order per channel (NCCL_DEBUG=INFO's "Channel c/..: r0 r1 ..." lines): chunk c of
    channel ch starts at ring position c + 1 of that channel's ring, a position being the
    distance from rank 0 along it (ring->index, src/init.cc:797-802 in v2.30.7-1), whatever
    rank the list starts at."""
    name, inputs = case
    dt, n, length = dtypes.FLOATS[name], len(inputs), len(inputs[0])
    rings = [data.draw(st.permutations(range(n))) for _ in range(2)]
    cut = data.draw(st.integers(1, length)) if length > 1 else 1
    halves = [(0, cut), (cut, length - cut)]
    parts = tuple(
        orders.Part(ch, at, count, 1 << 12) for ch, (at, count) in enumerate(halves) if count
    )
    two = orders.Plan("Ring", "LL", len(parts), parts)
    got = orders.ring(inputs, dt, two, rings=rings)
    for ch, (at, count) in enumerate(halves):
        for j, order in enumerate(small_ring_order(n, count, dt.itemsize)):
            col = [row[at + j] for row in inputs]
            zero = rings[ch].index(0)
            ring_ = rings[ch][zero:] + rings[ch][:zero]
            want = np_fold([col[ring_[p]] for p in order], name)
            assert got["first"][at + j] == ring_[order[0]]
            for buffer in got["buffers"]:
                assert buffer[at + j] == pytest.approx(want, nan_ok=True, rel=0, abs=0)


@settings(deadline=None, max_examples=30)
@given(
    st.sampled_from(sorted(NP)),
    st.integers(2, 8),
    st.integers(0, 2**32),
    st.sampled_from(orders.KINDS),
)
def test_ranks_agree_within_every_method(name, n, seed, kind):
    r = api.orders(gpus=n, dtype=name, seed=seed, length=12, kind=kind)
    assert all(m["ranks_agree"] for m in r["methods"].values())


@settings(deadline=None)
@given(
    st.sampled_from(["fp32", "bf16"]), st.integers(2, 8), st.integers(1, 3), st.integers(0, 2**32)
)
def test_the_ring_is_the_stage_2_simulation(name, n, k, seed):
    """Where both describe one run (one channel, n equal chunks of a multiple of 16 bytes), the
    stage-2 ring and NCCL's sum alike bit for bit: in both rank p + 1 starts chunk p."""
    dt = dtypes.FLOATS[name]
    length = n * k * (16 // dt.itemsize)
    inputs = orders.draw("wide", n, length, dt, seed)
    ours = orders.ring(inputs, dt, plan(name, n, length))
    theirs = simulate.run("ring", Topology.make(n, n), inputs, dt, full=False)
    assert theirs["results"] == ours["buffers"]
    assert theirs["identical_on_all_gpus"]


@given(
    st.integers(1, 1 << 26),
    st.sampled_from([1, 2, 4]),
    st.integers(1, 32),
    st.integers(0, 32),
    st.sampled_from(["Simple", "LL", "LL128"]),
)
def test_the_channels_cover_the_buffer_once(count, itemsize, channels, extra, protocol):
    parts = orders.split(count, itemsize, channels, protocol, channels + extra)
    assert parts[0][1] == 0 and len(parts) <= channels + extra
    for a, b in zip(parts, parts[1:]):
        assert a[1] + a[2] == b[1] and a[0] < b[0]
    assert sum(p[2] for p in parts) == count


def test_nccl_splits_a_64_mib_bucket_over_all_channels():
    """32 Mi BF16 elements on 24 channels: 2 MiB Simple chunks (1 Mi elements), cells of 32 KiB
    of traffic (16 KiB of data): 171 cells a channel, the rest in the last (enqueue.cc:656-700)."""
    p = orders.make_plan(32 << 20, 2, 8, "Ring", "Simple", 24)
    assert len(p.parts) == 24 and {q.chunk for q in p.parts} == {1 << 20}
    assert p.parts[0].count == 171 * 8192 and p.parts[-1].count == (32 << 20) - 23 * 171 * 8192


def test_the_trees_chunk_is_its_own():
    """The tree takes one step per chunk (enqueue.cc:2223-2225): 512 KiB in Simple where the
    ring takes 2 MiB; in LL128 a small part halves it (:2286-2294) to whole 1,920-byte grains
    (device.h:328-331): 576,000 -> 72,000 -> 18,000 -> 17,280 bytes for a 48 KiB part on one
    server of 8 (nsteps 1.8)."""
    assert orders.chunk_bytes("Tree", "Simple", 64 << 20, 8, 1) == 512 << 10
    assert orders.chunk_bytes("Ring", "Simple", 64 << 20, 8, 1) == 2 << 20
    assert orders.GRAIN_BYTES["LL128"] == 1920
    assert orders.chunk_bytes("Ring", "LL128", 48 << 10, 8, 1) == 576_000
    assert orders.chunk_bytes("Tree", "LL128", 48 << 10, 8, 1) == 17_280
    assert orders.chunk_bytes("Tree", "LL", 48 << 10, 8, 1) == 32 << 10


def test_the_order_depends_on_the_offset_in_the_bucket():
    """The same 8 elements at the start of a 64 MiB bucket and 8 Mi elements in: other chunks,
    so other ranks start them."""
    a = api.orders(gpus=8, length=8, bytes=64 << 20, offset=0)
    b = api.orders(gpus=8, length=8, bytes=64 << 20, offset=3 << 20)
    assert a["ring_first"] != b["ring_first"]
    assert a["exact"] == b["exact"]
