"""The ring all-reduce over all GPUs in rank order (Patarasuk & Yuan 2009; NCCL's ring).

Reduce-scatter then all-gather, 2(n - 1) steps; with servers contiguous in rank order the ring
crosses each server boundary once, so it uses one network card per server.
"""

from __future__ import annotations

from . import schedule as sch
from .topology import Topology


def steps(n: int) -> int:
    """Steps of the ring all-reduce over n GPUs: n - 1 of reduce-scatter, n - 1 of all-gather."""
    return 2 * (n - 1)


def schedule(topo: Topology, length: int, bounds: bool = True) -> list[sch.Step]:
    rs, ag = sch.ring(list(range(topo.gpus)), 0, length, bounds=bounds)
    return rs + ag
