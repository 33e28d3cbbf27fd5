"""The ring run in a given order of GPUs (a channel's ring from NCCL_DEBUG=INFO) against an
oracle written here, a transcription of NCCL's own index arithmetic (v2.30.7-1): a GPU's ring
index is its distance round the ring from rank 0 (src/init.cc:796-802), and runRing
(src/device/all_reduce.h:42-73) sends, in order, chunk index - 1, index - j for j = 2..n-1
(the reduce-scatter, each added in by the next GPU), then chunk index and index - j for
j = 1..n-2 (the all-gather, each copied). So rank order leaves GPU r with chunk r."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api
from allreduce_explainer.errors import ParamError
from allreduce_explainer.schedules import ring
from allreduce_explainer.schedules.topology import Topology
from allreduce_explainer.simulation.verify import check
from helpers import examples, field_of


def _chunks(length: int, n: int) -> list[tuple[int, int]]:
    """[start, stop) of n chunks, sizes differing by one, the larger first (numpy's array_split)."""
    edges = np.cumsum([0] + [len(a) for a in np.array_split(np.arange(length), n)])
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def ring_index(ring_ranks: list[int], rank: int) -> int:
    """setupChannel, src/init.cc:797-802: the rank's ring distance from rank zero."""
    nranks = len(ring_ranks)
    ix_zero = ix_rank = 0
    for i in range(nranks):
        if ring_ranks[i] == 0:
            ix_zero = i
        if ring_ranks[i] == rank:
            ix_rank = i
    return (ix_rank - ix_zero + nranks) % nranks


def run_ring_sends(ring_ix: int, nranks: int) -> list[int]:
    """runRing, src/device/all_reduce.h:40-73: the chunk of each of the rank's 2(n - 1) sends."""

    def mod_ranks(r: int) -> int:
        return r - (nranks if r >= nranks else 0)

    sends = [mod_ranks(ring_ix + nranks - 1)]  # step 0: push data to next GPU
    for j in range(2, nranks):  # k-2 steps: reduce and copy to next GPU
        sends.append(mod_ranks(ring_ix + nranks - j))
    sends.append(ring_ix + 0)  # step k-1: the final result, pushed to the next GPU
    for j in range(1, nranks - 1):  # k-2 steps: copy to next GPU
        sends.append(mod_ranks(ring_ix + nranks - j))
    return sends


def oracle(order: list[int], x: np.ndarray) -> tuple[list[list[tuple]], np.ndarray]:
    """Every step's (src, dst, start, stop) and every GPU's buffer at the end."""
    n, length = x.shape
    bounds = _chunks(length, n)
    chunk = {g: run_ring_sends(ring_index(order, g), n) for g in order}
    buf = x.copy()
    steps = []
    for t in range(2 * (n - 1)):
        sends = [(g, order[(p + 1) % n], *bounds[chunk[g][t]]) for p, g in enumerate(order)]
        before = buf.copy()
        for src, dst, a, b in sends:
            buf[dst, a:b] = buf[dst, a:b] + before[src, a:b] if t < n - 1 else before[src, a:b]
        steps.append([m for m in sends if m[3] > m[2]])
    return steps, buf


orders = st.integers(2, 12).flatmap(lambda n: st.permutations(list(range(n))))


@settings(max_examples=examples(80), deadline=None)
@given(orders, st.integers(1, 40), st.integers(0, 2**32))
def test_the_given_order_sends_as_the_oracle_and_ends_with_the_exact_sum(order, length, seed):
    n = len(order)
    x = np.random.default_rng(seed).integers(-1000, 1000, size=(n, length))
    r = api.simulate(algorithm="ring", gpus=n, values=x.tolist(), trace=True, order=order)
    want, final = oracle(order, x)
    got = [
        [(m["src"], m["dst"], m["start"], m["stop"]) for m in st_["messages"]] for st_ in r["trace"]
    ]
    assert got == want
    assert r["results"] == final.tolist()
    assert all(row == x.sum(axis=0).tolist() for row in r["results"])
    assert check(r)["verdict"].startswith("Exact match")


@settings(max_examples=examples(40), deadline=None)
@given(orders, st.integers(1, 40))
def test_reduce_scatter_leaves_each_gpu_owning_the_chunk_of_its_ring_index(order, length):
    n = len(order)
    x = np.random.default_rng(length).integers(-9, 9, size=(n, length))
    r = api.simulate(algorithm="ring", gpus=n, values=x.tolist(), trace=True, order=order)
    after = np.array(r["trace"][n - 2]["buffers"])
    total = x.sum(axis=0)
    for gpu in order:
        a, b = _chunks(length, n)[ring_index(order, gpu)]  # all_reduce.h:60, chunk = ringIx
        assert after[gpu, a:b].tolist() == total[a:b].tolist()


def test_rank_order_leaves_gpu_r_with_chunk_r_and_chunk_0_starts_on_gpu_1():
    r = api.simulate(algorithm="ring", gpus=4, length=4, trace=True)
    first = {m["src"]: m["start"] for m in r["trace"][0]["messages"]}
    assert first == {0: 3, 1: 0, 2: 1, 3: 2}
    after = r["trace"][2]["contributors"]
    assert [row.index(4) for row in after] == [0, 1, 2, 3]


@pytest.mark.parametrize("n", [2, 3, 4, 8, 16])
def test_no_order_is_rank_order_bit_for_bit(n):
    topo = Topology.make(n)
    assert ring.schedule(topo, 37) == ring.schedule(topo, 37, order=list(range(n)))
    plain = api.simulate(algorithm="ring", gpus=n, length=37, dtype="fp32", seed=5, trace=True)
    given_ = api.simulate(
        algorithm="ring", gpus=n, length=37, dtype="fp32", seed=5, trace=True, order=list(range(n))
    )
    assert plain == given_


def test_the_order_may_be_text_as_nccl_prints_it():
    a = api.simulate(algorithm="ring", gpus=4, length=8, trace=True, order="0 2 1 3")
    b = api.simulate(algorithm="ring", gpus=4, length=8, trace=True, order="0,2,1,3")
    c = api.simulate(algorithm="ring", gpus=4, length=8, trace=True, order=[0, 2, 1, 3])
    assert a == b == c
    assert [m["dst"] for m in a["trace"][0]["messages"]] == [2, 1, 3, 0]


@pytest.mark.parametrize(
    "order, words",
    [
        ([0, 0, 1, 2], "comes twice"),
        ([0, 1, 2], "lists 3 GPUs"),
        ([0, 1, 2, 3, 4], "lists 5 GPUs"),
        ([0, 1, 2, 5], "not one of 0 to 3"),
        ([0, 1, 2, 2.5], "not a whole GPU number"),
        ([0, 1, True, 3], "not a whole GPU number"),
        ([0, 1, "x", 3], "not a whole GPU number"),
        ([0, 1, float("nan"), 3], "not a whole GPU number"),
        ("0,1,two,3", "not a GPU number"),
        ({"a": 1}, "must be a list"),
        (7, "must be a list"),
    ],
)
def test_bad_orders_are_refused_naming_the_field(order, words):
    with pytest.raises(ParamError) as e:
        api.simulate(algorithm="ring", gpus=4, order=order)
    assert e.value.field == "order" and words in str(e.value)


def test_only_the_ring_takes_an_order():
    assert field_of(api.simulate, algorithm="tree", gpus=4, order=[0, 1, 2, 3]) == "order"
