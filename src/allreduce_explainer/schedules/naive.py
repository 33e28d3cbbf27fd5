"""Gather to one GPU, add, broadcast back: the method all-reduce replaces.

Every GPU sends its whole gradient to GPU 0, one transfer after another, GPU 0 adds each in as it
arrives, then sends the sum back to each GPU in turn: 2(n - 1) steps of one transfer each, and
GPU 0's link carries n - 1 gradients each way.
"""

from __future__ import annotations

from .schedule import Step
from .topology import Topology


def schedule(topo: Topology, length: int) -> list[Step]:
    peers = range(1, topo.gpus)
    gather = [Step("gather to GPU 0", True, [i], [0], [0], [length]) for i in peers]
    bcast = [Step("broadcast from GPU 0", False, [0], [i], [0], [length]) for i in peers]
    return gather + bcast
