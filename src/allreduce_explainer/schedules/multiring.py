"""One ring per network card, as NCCL's channels do across servers.

g rings each carry 1/g of the gradient. Ring r enters every server at local GPU r and walks the
server's GPUs r, r+1, ..., r-1 (mod g), leaving it from local GPU (r - 1) mod g; so each network
card sends for exactly one ring and receives for one, and all g cards work at once.
"""

from __future__ import annotations

from . import schedule as sch
from .topology import Topology


def ring_order(topo: Topology, r: int) -> list[int]:
    g = topo.gpus_per_node
    return [k * g + (r + j) % g for k in range(topo.nodes) for j in range(g)]


def schedule(topo: Topology, length: int, bounds: bool = True) -> list[sch.Step]:
    g = topo.gpus_per_node
    parts = [
        sch.ring(ring_order(topo, r), a, b, bounds=bounds)
        for r, (a, b) in enumerate(sch.split(0, length, g))
    ]
    return sch.merge(*(p[0] for p in parts)) + sch.merge(*(p[1] for p in parts))
