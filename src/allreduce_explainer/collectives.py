"""The collectives nccl-tests measures, one record each: how the code, NCCL, a reader and
nccl-tests name it, and the factor nccl-tests multiplies its algorithm bandwidth by.

nccl-tests reports algbw = S / t and busbw = algbw × factor, the factor chosen so that busbw of
a ring-shaped collective can be held against the link's rate whatever n is (nccl-tests
doc/PERFORMANCE.md; each src/<test>.cu's GetBw function, vendored in tests/data/nccl-tests-src/).
One record per collective so that the page's choices, the CLI's, the cost model and the log
reader cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Collective:
    """One collective, named for each of its readers, with nccl-tests' bus bandwidth factor."""

    key: str  # this project's name: api, CLI, widget parameters
    nccl_name: str  # NCCL's and nccl-tests' own (its testColl name)
    label: str  # the pages' text
    program: str  # the nccl-tests program that prints its lines
    busbw_factor: Callable[[int], float]  # busbw = algbw × busbw_factor(n) for n ranks
    factor_text: str  # busbw_factor as the pages write it


def _ring_allreduce(n: int) -> float:
    return 2 * (n - 1) / n


def _one_pass(n: int) -> float:
    return (n - 1) / n


def _whole(n: int) -> float:
    return 1.0


COLLECTIVES = {
    c.key: c
    for c in (
        Collective("allreduce", "AllReduce", "all-reduce", "all_reduce_perf",
                   _ring_allreduce, "2(n−1)/n"),
        Collective("reducescatter", "ReduceScatter", "reduce-scatter", "reduce_scatter_perf",
                   _one_pass, "(n−1)/n"),
        Collective("allgather", "AllGather", "all-gather", "all_gather_perf",
                   _one_pass, "(n−1)/n"),
        Collective("alltoall", "AlltoAll", "all-to-all", "alltoall_perf", _one_pass, "(n−1)/n"),
        Collective("broadcast", "Broadcast", "broadcast", "broadcast_perf", _whole, "1"),
        Collective("reduce", "Reduce", "reduce", "reduce_perf", _whole, "1"),
    )
}  # fmt: skip
ALLREDUCE = COLLECTIVES["allreduce"]
