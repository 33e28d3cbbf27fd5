"""The ring all-reduce over all GPUs in rank order (Patarasuk & Yuan 2009; NCCL's ring).

Reduce-scatter then all-gather, 2(n - 1) steps; with servers contiguous in rank order the ring
crosses each server boundary once, so it uses one network card per server. Chunks follow NCCL's
runRing (schedule.ring): chunk c is started by GPU c + 1 and finished by GPU c, so the
reduce-scatter leaves GPU r with chunk r, as NCCL's ReduceScatter leaves rank r. An `order` runs
the ring NCCL printed instead (NCCL_DEBUG=INFO's `Channel 00/16 : 0 7 6 5 ...`, from rank 0):
GPU order[p] sends to order[p + 1], and position p, not rank p, ends owning chunk p.
"""

from __future__ import annotations

from ..validate import permutation
from . import schedule as sch
from .topology import Topology


def steps(n: int) -> int:
    """Steps of the ring all-reduce over n GPUs: n - 1 of reduce-scatter, n - 1 of all-gather."""
    return 2 * (n - 1)


def schedule(
    topo: Topology, length: int, bounds: bool = True, order: list[int] | None = None
) -> list[sch.Step]:
    """The ring all-reduce over `order` (a permutation of the GPUs; None: 0, 1, ..., n - 1)."""
    ranks = list(range(topo.gpus)) if order is None else permutation("order", order, topo.gpus)
    rs, ag = sch.ring(ranks, 0, length, bounds=bounds)
    return rs + ag
