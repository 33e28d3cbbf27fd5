"""The hypothesis strategies more than one test file draws from: gradient matrices, clusters,
NCCL systems and nccl-tests figures. One definition each, so that two tests of one input mean
the same input."""

from __future__ import annotations

from hypothesis import strategies as st

from allreduce_explainer.nccl import System

NCCL_GPUS = ["A100 SXM", "H100 SXM", "H200 SXM", "B200"]  # the generations NCCL's tables know
NIC_GBPS = [100.0, 200.0, 400.0, 800.0]
SEEDS = st.integers(0, 2**53)

# An all_reduce_perf row's time (µs) and bandwidths (GB/s), over the ranges its columns print
times = st.floats(0.01, 9e6, allow_nan=False)
bandwidths = st.floats(0, 9e4, allow_nan=False)
# ... and its size (B) and count of elements, its two halves (out of place, in place: time,
# algbw, busbw each) and its #wrong column (N/A or a count)
sizes, counts = st.integers(0, 2**40), st.integers(0, 2**38)
two_halves = st.lists(st.tuples(times, bandwidths, bandwidths), min_size=2, max_size=2)
wrongs = st.one_of(st.none(), st.integers(0, 10**6))


@st.composite
def gradients(draw, elements, gpus=(2, 9), length=(1, 12)) -> list[list]:
    """One gradient vector per GPU, all of one length: a list of `gpus` rows of `elements`."""
    n = draw(st.integers(*gpus))
    size = draw(st.integers(*length))
    return draw(st.lists(st.lists(elements, min_size=size, max_size=size), min_size=n, max_size=n))


@st.composite
def cluster(draw, max_gpus: int = 64) -> tuple[int, int]:
    """(GPUs, GPUs per server), the servers whole."""
    n = draw(st.integers(1, max_gpus))
    return n, draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))


def servers(nodes: list[int]) -> st.SearchStrategy[System]:
    """NCCL systems of 4 or 8 GPUs a server, one card per GPU, on `nodes` servers."""
    return st.builds(
        lambda gpu, per, k, nic: System(gpu, per * k, per, per, nic),
        st.sampled_from(NCCL_GPUS),
        st.sampled_from([4, 8]),
        st.sampled_from(nodes),
        st.sampled_from(NIC_GBPS),
    )
