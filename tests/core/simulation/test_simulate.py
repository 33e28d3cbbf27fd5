"""Every algorithm on random vectors against numpy and ml_dtypes, and against the cost formulas."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import cluster

from allreduce_explainer import api, dtypes
from allreduce_explainer.costs import cost
from allreduce_explainer.schedules.schedule import split
from allreduce_explainer.schedules.topology import Topology
from allreduce_explainer.schedules.tree import btree_parents, dtree_parents
from allreduce_explainer.simulation import simulate
from allreduce_explainer.simulation.simulate import count, run
from allreduce_explainer.simulation.verify import check
from helpers import examples

ALGORITHMS = ["naive", "ring", "multi-ring", "tree", "hierarchical"]


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(ALGORITHMS), cluster(), st.integers(1, 300), st.integers(0, 2**32))
def test_int_results_equal_numpy_sum_on_every_gpu(algorithm, ng, length, seed):
    n, g = ng
    rng = np.random.default_rng(seed)
    x = rng.integers(-1000, 1000, size=(n, length))
    r = api.simulate(algorithm=algorithm, gpus=n, gpus_per_node=g, values=x.tolist())
    target = x.sum(axis=0).tolist()
    assert r["target"] == target
    assert all(res == target for res in r["results"]), "some GPU holds a wrong sum"
    assert r["matches_target"] and r["identical_on_all_gpus"] and r["max_ulp_error"] == 0


@settings(max_examples=examples(40), deadline=None)
@given(
    st.sampled_from(ALGORITHMS),
    cluster(32),
    st.integers(1, 100),
    st.sampled_from(["fp32", "bf16"]),
    st.integers(0, 2**32),
)
def test_float_results_bit_identical_and_within_bound(algorithm, ng, length, dtype, seed):
    n, g = ng
    r = api.simulate(
        algorithm=algorithm, gpus=n, gpus_per_node=g, length=length, dtype=dtype, seed=seed
    )
    first = np.array(r["results"][0])
    for res in r["results"]:
        assert np.array_equal(np.array(res).view(np.int64), first.view(np.int64))
    # Recursive summation of n terms: |error| <= (n - 1) u sum|x| (Higham, Accuracy and
    # Stability of Numerical Algorithms, 2002, eq. 4.4); u = 2^-p, plus half an ulp for the
    # target's own rounding.
    u = 2.0 ** -dtypes.get(dtype).mantissa_bits
    x = np.array(r["inputs"], dtype=np.float64)
    bound = (n - 1) * u * np.abs(x).sum(axis=0) * (1 + n * u)
    target = np.array(r["target"])
    ulps = np.array([dtypes.get(dtype).ulp(t) for t in target])
    assert np.all(np.abs(first - target) <= bound + ulps / 2)


def _chain_oracle(inputs, order_of_chunk, chunks, scalar):
    """Sum each chunk in the order the ring adds it, in numpy / ml_dtypes arithmetic."""
    out = []
    for c, (a, b) in enumerate(chunks):
        order = order_of_chunk(c)
        acc = [scalar(v) for v in inputs[order[0]][a:b]]
        for gpu in order[1:]:
            acc = [scalar(v) + s for v, s in zip(inputs[gpu][a:b], acc, strict=True)]
        out += [float(v) for v in acc]
    return out


@settings(max_examples=examples(40), deadline=None)
@given(
    st.integers(2, 24),
    st.integers(1, 80),
    st.integers(0, 2**32),
    st.sampled_from([("bf16", ml_dtypes.bfloat16), ("fp32", np.float32)]),
)
def test_ring_bits_match_ml_dtypes_in_ring_order(n, length, seed, types):
    name, scalar = types
    r = api.simulate(algorithm="ring", gpus=n, length=length, dtype=name, seed=seed)
    chunks = split(0, length, n)
    # NCCL's runRing (src/device/all_reduce.h:43): chunk c starts on GPU c + 1 and travels
    # c + 1, c + 2, ..., c, each GPU adding its own values
    expected = _chain_oracle(
        r["inputs"], lambda c: [(c + 1 + j) % n for j in range(n)], chunks, scalar
    )
    assert r["results"][0] == expected


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(2, 24), st.integers(1, 50), st.integers(0, 2**32))
def test_naive_bits_match_ml_dtypes_in_gpu_order(n, length, seed):
    r = api.simulate(algorithm="naive", gpus=n, length=length, dtype="bf16", seed=seed)
    expected = _chain_oracle(
        r["inputs"], lambda c: list(range(n)), [(0, length)], ml_dtypes.bfloat16
    )
    assert all(res == expected for res in r["results"])


@settings(max_examples=examples(60), deadline=None)
@given(cluster(), st.integers(1, 300), st.sampled_from(["int", "fp32", "bf16"]))
def test_ring_sends_exactly_two_n_minus_one_chunks(ng, length, dtype):
    n, g = ng
    r = api.simulate(algorithm="ring", gpus=n, gpus_per_node=g, length=length, dtype=dtype)
    size = dtypes.get(dtype).itemsize
    assert sum(r["bytes_sent_per_gpu"]) == 2 * (n - 1) * length * size
    assert r["steps"] == 2 * (n - 1)


@settings(max_examples=examples(80), deadline=None)
@given(
    st.sampled_from(ALGORITHMS),
    cluster(48),
    st.integers(1, 3),
    st.floats(0, 50),
    st.floats(0, 50),
    st.floats(1, 1000),
    st.floats(1, 1000),
)
def test_simulated_time_and_bytes_equal_closed_form(algorithm, ng, mult, a_in, a_out, b_in, b_out):
    n, g = ng
    k = 2
    length = n * g * 2 * k * mult  # every chunk of every algorithm the same size
    topo = Topology.make(n, g, b_in, b_out, a_in, a_out)
    opts = {"chunks": k} if algorithm == "tree" else {}
    sim = run(algorithm, topo, [[1] * length for _ in range(n)], dtypes.INT, full=False, **opts)
    model = cost.cost(algorithm, topo, length * 4, **opts)
    assert sim["time_s"] == pytest.approx(model["time_s"], rel=1e-9, abs=1e-15)
    for key in ("steps", "network_steps"):
        assert sim[key] == model[key]
    assert sim["bytes_inter_node"] == pytest.approx(model["bytes_inter_node"])
    assert sim["bytes_per_nic_max"] == pytest.approx(model["bytes_per_nic_max"])
    assert max(sim["bytes_sent_per_gpu"]) == pytest.approx(model["bytes_sent_per_gpu_max"])


@pytest.mark.parametrize(
    ("algorithm", "gpus", "per_node", "seconds"),
    [
        ("naive", 8, 8, 0.43556),
        ("naive", 64, 8, 31.7956),
        ("ring", 64, 8, 0.55125),
        ("multi-ring", 64, 8, 0.0689),
        ("hierarchical", 64, 8, 0.1157),
    ],
)
def test_headline_numbers(algorithm, gpus, per_node, seconds):
    """Stage 1's figures: 14e9 bytes, NVLink 450 GB/s, network 50 GB/s, no latency."""
    assert api.estimate(algorithm=algorithm, gpus=gpus, bytes=14e9, gpus_per_node=per_node)[
        "time_s"
    ] == pytest.approx(seconds, rel=1e-3)


def test_tree_steps_grow_with_log2():
    steps = {
        n: api.estimate(algorithm="tree", gpus=n, bytes=1e3, chunks=1)["steps"]
        for n in (2, 4, 16, 256, 4096)
    }
    # (H + k - 1) + (D + k - 1) with k = 1 and height, depth about log2(n)
    for n, s in steps.items():
        assert s <= 2 * (n.bit_length() + 1)
    assert steps[4096] < 2 * 4095 / 100


def test_nccl_dtree_matches_the_published_picture():
    """trees.cc draws the 14-rank tree: 0-8, 8-4, 8-12, 4-2, 4-6, 12-10, 12-13, ..."""

    p = btree_parents(14)
    assert p[8] == 0 and p[4] == 8 and p[12] == 8 and p[13] == 12 and p[10] == 12
    assert p[1] == 2 and p[3] == 2 and p[11] == 10
    a, b = dtree_parents(13)  # odd: shifted by one, root 1
    assert b.index(-1) == 1 and b[9] == 1 and b[0] == 9
    a, b = dtree_parents(12)  # even: mirrored, root 11
    assert b.index(-1) == 11 and b[3] == 11


@settings(max_examples=examples(60), deadline=None)
@given(
    st.sampled_from(ALGORITHMS),
    cluster(32),
    st.integers(1, 200),
    st.floats(0, 20),
    st.floats(0, 20),
)
def test_count_only_mode_equals_the_full_simulation(algorithm, ng, length, a_in, a_out):

    n, g = ng
    topo = Topology.make(n, g, intra_latency_us=a_in, inter_latency_us=a_out)
    full = run(algorithm, topo, [[1] * length for _ in range(n)], dtypes.BF16, full=False)
    counted = count(algorithm, topo, length, dtypes.BF16.itemsize)
    for key, value in counted.items():
        if key == "time_s":
            assert value == pytest.approx(full[key], rel=1e-12, abs=1e-18)
        else:
            assert value == full[key], key


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


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(2, 9), st.integers(1, 30), st.integers(0, 2**32))
def test_only_the_last_chunk_is_summed_in_gpu_order(n, length, seed):
    """Page 3: chunk n - 1 starts on GPU 0 (NCCL's runRing: GPU 0 first sends chunk
    modRanks(0 + n - 1)), so its elements are 0 + 1 + ... + (n - 1) folded in BF16, and the
    check's second distance is zero there."""
    r = api.simulate(algorithm="ring", gpus=n, length=length, dtype="bf16", seed=seed)
    a, b = split(0, length, n)[n - 1]
    for j in range(a, b):
        acc = ml_dtypes.bfloat16(r["inputs"][0][j])
        for gpu in range(1, n):
            acc = acc + ml_dtypes.bfloat16(r["inputs"][gpu][j])
        assert r["results"][0][j] == float(acc)
    assert check(r)["ulps_in_order"][a:b] == [0] * (b - a)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(2, 12), st.integers(0, 40), st.data())
def test_the_ring_returns_its_chunks_and_their_owners_as_the_trace_shows_them(n, extra, data):
    """Chunks against numpy's array_split; owners against the trace: after the reduce-scatter,
    the one chunk a GPU holds the sum of all n gradients on, and what it sends first in the
    all-gather. In rank order and in a given ring order."""
    length = n + extra  # every chunk holds an element, so its owner shows in the trace
    order = data.draw(st.permutations(range(n))) if data.draw(st.booleans()) else None
    r = api.simulate(algorithm="ring", gpus=n, length=length, trace=True, order=order)
    expected = [[int(a[0]), int(a[-1]) + 1] for a in np.array_split(np.arange(length), n)]
    assert r["chunks"] == expected
    rs_end, ag_first = r["trace"][n - 2], r["trace"][n - 1]
    for gpu in range(n):
        complete = [
            c for c, (a, b) in enumerate(expected) if set(rs_end["contributors"][gpu][a:b]) == {n}
        ]
        assert complete == [r["owners"][gpu]]
    for m in ag_first["messages"]:
        assert [m["start"], m["stop"]] == expected[r["owners"][m["src"]]]
    for step in r["trace"]:
        assert all([m["start"], m["stop"]] in expected for m in step["messages"])


def test_the_ring_chunks_of_a_vector_shorter_than_the_ring_end_empty():
    r = api.simulate(algorithm="ring", gpus=4, length=2)
    assert r["chunks"] == [[0, 1], [1, 2], [2, 2], [2, 2]]
    assert r["owners"] == [0, 1, 2, 3]
    assert "chunks" not in api.simulate(algorithm="tree", gpus=4)
